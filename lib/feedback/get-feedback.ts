import { NotFoundError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { toFeedbackView } from './feedback-record-view.ts';
import { feedbackKeys } from './record-keys.ts';
import type { FeedbackRecordView } from './schemas.ts';

/** Most votes of one feedbackKey returned as history. */
const HISTORY_LIMIT = 100;

/**
 * One stored feedback event, whether it is the current vote of its feedbackKey, and that key's vote history
 * (newest first). Throws `NotFoundError` naming the id when nothing is stored under it (yet: ingestion is
 * asynchronous, so a just-accepted event may take a moment to appear).
 *
 * @example
 * const view = await getFeedback(ports, 'e-123'); // { eventId: 'e-123', current: true, history: [...] }
 */
export async function getFeedback(ports: Ports, eventId: string): Promise<FeedbackRecordView> {
  const key = feedbackKeys.event(eventId);
  const item = await ports.records.get(key.pk, key.sk);
  if (!item) throw new NotFoundError(`Feedback event "${eventId}" not found`);
  const feedbackKey = item.feedbackKey as string;
  const currentKey = feedbackKeys.current(feedbackKey);
  const [current, votes] = await Promise.all([
    ports.records.get(currentKey.pk, currentKey.sk),
    ports.records.query({
      partition: currentKey.pk,
      sort: { beginsWith: feedbackKeys.voteSortPrefix },
      descending: true,
      limit: HISTORY_LIMIT,
    }),
  ]);
  const currentId = current?.eventId as string | undefined;
  return {
    ...toFeedbackView(item, currentId === eventId),
    history: votes.items.map((v) => ({
      eventId: v.eventId as string,
      occurredAt: v.occurredAt as string,
      rating: v.rating as 'up' | 'down' | 'none',
      kind: v.kind as 'rating' | 'comment' | 'outcome',
      current: v.eventId === currentId,
    })),
  };
}
