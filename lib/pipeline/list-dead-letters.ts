import type { QueueMessage, QueuePort } from '../ports/queue.ts';

export interface ListDeadLettersOptions {
  /** At most this many messages (default 100). */
  max?: number;
}

/**
 * Reads dead letters without removing them: receives (which hides them briefly), then makes each visible again.
 * The queue port has no peek, and neither has SQS; this is how the SQS console "polls" too.
 *
 * @example
 * for (const m of await listDeadLetters(ports.ingestDeadLetters)) console.log(m.messageId, m.body);
 */
export async function listDeadLetters(deadLetters: QueuePort, options: ListDeadLettersOptions = {}): Promise<QueueMessage[]> {
  const max = options.max ?? 100;
  const found = new Map<string, QueueMessage>();
  try {
    while (found.size < max) {
      const batch = await deadLetters.receive({
        maxMessages: Math.min(10, max - found.size),
        visibilityTimeoutSeconds: 30,
      });
      const fresh = batch.filter((m) => !found.has(m.messageId));
      for (const m of batch) if (found.has(m.messageId)) await deadLetters.changeVisibility(m.receiptHandle, 0);
      if (fresh.length === 0) break;
      for (const m of fresh) found.set(m.messageId, m);
    }
  } finally {
    for (const m of found.values()) await deadLetters.changeVisibility(m.receiptHandle, 0);
  }
  return [...found.values()];
}
