/**
 * Queue port: at-least-once delivery with a visibility timeout, a receive count, and a dead-letter queue
 * after `maxReceiveCount` receives.
 *
 * Drivers: SQS (`lib/drivers/aws/sqs-queue.ts`) and SQLite (`lib/drivers/local/sqlite-queue.ts`).
 * Both pass `test/contract/queue.contract.ts`. A dead-letter queue is itself a QueuePort.
 *
 * @example
 * await queue.send(JSON.stringify(envelope));
 * for (const m of await queue.receive({ maxMessages: 10, visibilityTimeoutSeconds: 30 })) {
 *   await handle(m.body);
 *   await queue.delete(m.receiptHandle);
 * }
 */
export interface QueueMessage {
  messageId: string;
  body: string;
  receiptHandle: string;
  /** How many times this message has been received, this receive included (SQS ApproximateReceiveCount). */
  receiveCount: number;
  /** Epoch milliseconds when the message was first sent. */
  sentAt: number;
}

export interface ReceiveOptions {
  /** 1–10, as SQS allows. */
  maxMessages?: number;
  visibilityTimeoutSeconds?: number;
  /** Long-poll up to this many seconds (0–20) when the queue is empty. */
  waitSeconds?: number;
}

export interface QueuePort {
  /** Returns the message id. */
  send(body: string, options?: { delaySeconds?: number }): Promise<string>;
  /** Sends up to 10 bodies in one call; returns their ids in order. */
  sendBatch(bodies: string[]): Promise<string[]>;
  receive(options?: ReceiveOptions): Promise<QueueMessage[]>;
  delete(receiptHandle: string): Promise<void>;
  /** Makes a received message visible again after `seconds` (0 = now). */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** Approximate number of messages waiting (visible) plus in flight. */
  depth(): Promise<{ visible: number; inFlight: number }>;
}
