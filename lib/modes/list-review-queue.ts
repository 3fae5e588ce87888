/** The human review queue: signals the chain could not settle, oldest first, with the best guess so far. */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { toFieldIssues } from '../shared/field-issues.ts';
import type { Ports } from '../ports/ports.ts';
import { reviewItemRecord, type StoredReviewItem } from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';

export const ReviewQueueQuery = z.strictObject({
  status: z.enum(['pending', 'done']).default('pending'),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

/**
 * @example
 * const { items } = await listReviewQueue(ports, { status: 'pending' });
 */
export async function listReviewQueue(ports: Pick<Ports, 'records'>, query: unknown): Promise<{ items: Array<StoredReviewItem & { id: string }>; cursor?: string }> {
  const q = ReviewQueueQuery.safeParse(query ?? {});
  if (!q.success) throw new ValidationError('Invalid query', toFieldIssues(q.error.issues));
  const page = await ports.records.query({
    index: 'gsi1',
    partition: modeKeys.reviewQueue(q.data.status),
    limit: q.data.limit,
    descending: q.data.status === 'done',
    ...(q.data.cursor ? { cursor: q.data.cursor } : {}),
  });
  const items = page.items.map((item) => {
    const review = reviewItemRecord.decode(item);
    return { id: review.signalKey, ...review };
  });
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
