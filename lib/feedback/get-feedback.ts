import { NotFoundError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { toFeedbackView } from './feedback-record-view.ts';
import { currentVoteRecord, feedbackEventRecord, voteRecord } from './record-codecs.ts';
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
  const event = feedbackEventRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!event) throw new NotFoundError(`Feedback event "${eventId}" not found`);
  const currentKey = feedbackKeys.current(event.feedbackKey);
  const [current, votes] = await Promise.all([
    ports.records.get(currentKey.pk, currentKey.sk),
    ports.records.query({
      partition: currentKey.pk,
      sort: { beginsWith: feedbackKeys.voteSortPrefix },
      descending: true,
      limit: HISTORY_LIMIT,
    }),
  ]);
  const currentId = currentVoteRecord.decodeIfPresent(current)?.eventId;
  return {
    ...toFeedbackView(event, currentId === eventId),
    history: votes.items.map((item) => {
      const v = voteRecord.decode(item);
      return { eventId: v.eventId, occurredAt: v.occurredAt, rating: v.rating, kind: v.kind, current: v.eventId === currentId };
    }),
  };
}
