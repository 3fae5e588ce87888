import type { QueueMessage, QueuePort } from '../ports/queue.ts';

export interface RedriveOptions {
  /** Move at most this many messages (default: all that are visible). */
  max?: number;
  /** How long each received dead letter stays hidden while it is moved; a crash mid-way only delays it. */
  visibilityTimeoutSeconds?: number;
  /** Called after each message has been moved. */
  onMoved?: (message: QueueMessage, newMessageId: string) => void;
}

export interface RedriveResult {
  moved: number;
  /** Message ids (in the dead-letter queue) whose send failed; they stay in the dead-letter queue. */
  failed: Array<{ messageId: string; error: string }>;
}

/**
 * Moves dead letters back to their source queue. Each message is deleted from the dead-letter queue only after its
 * send succeeded, so a failure at any point leaves it in one queue or both (at-least-once), never in neither; the
 * processor's conditional writes make a duplicate harmless. Works over any QueuePort pair: local SQLite queues or SQS.
 *
 * @example
 * const { moved } = await redriveDeadLetters(ports.ingestDeadLetters, ports.ingestQueue, { max: 100 });
 */
export async function redriveDeadLetters(
  deadLetters: QueuePort,
  source: QueuePort,
  options: RedriveOptions = {},
): Promise<RedriveResult> {
  const max = options.max ?? Number.POSITIVE_INFINITY;
  const visibility = options.visibilityTimeoutSeconds ?? 60;
  const result: RedriveResult = { moved: 0, failed: [] };
  const seen = new Set<string>();
  // Messages whose send failed stay hidden until the end (so this run does not pick them up again), then visible.
  const release: string[] = [];
  try {
    while (result.moved + result.failed.length < max) {
      const want = Math.min(10, max - result.moved - result.failed.length);
      const batch = await deadLetters.receive({ maxMessages: want, visibilityTimeoutSeconds: visibility });
      const fresh = batch.filter((m) => !seen.has(m.messageId));
      for (const m of batch) if (seen.has(m.messageId)) release.push(m.receiptHandle);
      if (fresh.length === 0) break;
      for (const m of fresh) {
        seen.add(m.messageId);
        let newId: string;
        try {
          newId = await source.send(m.body);
        } catch (error) {
          result.failed.push({ messageId: m.messageId, error: (error as Error).message });
          release.push(m.receiptHandle);
          continue;
        }
        await deadLetters.delete(m.receiptHandle);
        result.moved++;
        options.onMoved?.(m, newId);
      }
    }
  } finally {
    for (const receipt of release) await deadLetters.changeVisibility(receipt, 0).catch(() => undefined);
  }
  return result;
}
