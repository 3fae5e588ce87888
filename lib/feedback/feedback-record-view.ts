import type { RecordItem } from '../ports/records.ts';
import type { FeedbackRecordView } from './schemas.ts';

/** A stored event item as the API shows it: the event's own fields, without the store's key attributes. */
export function toFeedbackView(item: RecordItem, current: boolean): Omit<FeedbackRecordView, 'history'> {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, ...rest } = item;
  return { ...(rest as unknown as Omit<FeedbackRecordView, 'history' | 'current'>), current };
}
