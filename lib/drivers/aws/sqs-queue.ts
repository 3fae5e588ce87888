/**
 * Queue port on one SQS queue. Dead-lettering is the queue's redrive policy; the DLQ is another SqsQueue.
 *
 * @example
 * const queue = new SqsQueue(new SQSClient({}), process.env.FLYWHEEL_INGEST_QUEUE_URL!);
 * const id = await queue.send(JSON.stringify(envelope));
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueMessage, QueuePort, ReceiveOptions } from '../../ports/queue.ts';
import { QueueSendError } from './aws-driver-errors.ts';

const BATCH_SIZE = 10;

export class SqsQueue implements QueuePort {
  readonly #client: SQSClient;
  readonly #url: string;

  constructor(client: SQSClient, queueUrl: string) {
    this.#client = client;
    this.#url = queueUrl;
  }

  async send(body: string, options: { delaySeconds?: number } = {}): Promise<string> {
    const result = await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#url,
        MessageBody: body,
        ...(options.delaySeconds !== undefined ? { DelaySeconds: options.delaySeconds } : {}),
      }),
    );
    return result.MessageId!;
  }

  /** Chunks of 10; throws naming every failed entry (by position) after sending the rest. */
  async sendBatch(bodies: string[]): Promise<string[]> {
    const ids: string[] = [];
    const failures: string[] = [];
    for (let start = 0; start < bodies.length; start += BATCH_SIZE) {
      const chunk = bodies.slice(start, start + BATCH_SIZE);
      const result = await this.#client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.#url,
          Entries: chunk.map((MessageBody, i) => ({ Id: String(start + i), MessageBody })),
        }),
      );
      for (const failed of result.Failed ?? []) {
        failures.push(`#${failed.Id}: ${failed.Code ?? 'error'} ${failed.Message ?? ''}`.trim());
      }
      const byId = new Map((result.Successful ?? []).map((entry) => [entry.Id, entry.MessageId!]));
      chunk.forEach((_, i) => ids.push(byId.get(String(start + i)) ?? ''));
    }
    if (failures.length > 0) {
      throw new QueueSendError(`SendMessageBatch failed for ${failures.length} of ${bodies.length} entries: ${failures.join('; ')}`);
    }
    return ids;
  }

  async receive(options: ReceiveOptions = {}): Promise<QueueMessage[]> {
    const result = await this.#client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.#url,
        MaxNumberOfMessages: options.maxMessages ?? 1,
        WaitTimeSeconds: options.waitSeconds ?? 0,
        ...(options.visibilityTimeoutSeconds !== undefined ? { VisibilityTimeout: options.visibilityTimeoutSeconds } : {}),
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    return (result.Messages ?? []).map((message) => ({
      messageId: message.MessageId!,
      body: message.Body ?? '',
      receiptHandle: message.ReceiptHandle!,
      receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
      sentAt: Number(message.Attributes?.SentTimestamp ?? 0),
    }));
  }

  async delete(receiptHandle: string): Promise<void> {
    await this.#client.send(new DeleteMessageCommand({ QueueUrl: this.#url, ReceiptHandle: receiptHandle }));
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.#client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.#url, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }),
    );
  }

  /** From GetQueueAttributes; delayed messages count in neither figure, as in SQS. */
  async depth(): Promise<{ visible: number; inFlight: number }> {
    const result = await this.#client.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.#url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(result.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(result.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  }
}
