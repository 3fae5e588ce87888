import type { StoredFeedbackEvent } from './record-codecs.ts';
import type { FeedbackRecordView } from './schemas.ts';

/** A stored event as the API shows it: the event's own fields, and whether it is the current vote of its feedbackKey. */
export function toFeedbackView(event: StoredFeedbackEvent, current: boolean): Omit<FeedbackRecordView, 'history'> {
  return { ...event, current };
}
