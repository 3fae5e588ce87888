/**
 * A decision from a person: a feedback event with a `messageId` and a `comment` (a comment, or a thumbs-down with a
 * comment) on a trajectory given with training consent. The comment is the hint (`by: 'person'`). The trajectory is
 * read by the caller through `readTrajectoryForTraining` only; this function decides on what it was given.
 */
import { currentVoteRecord, feedbackEventRecord, type StoredFeedbackEvent } from '../../feedback/record-codecs.ts';
import { feedbackKeys } from '../../feedback/record-keys.ts';
import type { Ports } from '../../ports/ports.ts';
import type { Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import { assistantMessages, boundHint, type ExtractorResult } from './decision-candidate.ts';

/** Why a feedback event gives no decision before its trajectory is read (undefined: read it). */
export function personEventProblem(event: Pick<StoredFeedbackEvent, 'kind' | 'rating' | 'messageId' | 'comment' | 'trajectory' | 'trainingConsent'>): string | undefined {
  if (event.trainingConsent !== true) return 'no training consent: the trajectory is not read';
  if (event.messageId === undefined) return 'the feedback names no messageId';
  if ((event.comment ?? '').trim() === '') return 'the feedback has no comment';
  if (event.kind === 'outcome' || event.rating === 'up') return `a ${event.kind === 'outcome' ? 'outcome' : 'thumbs-up'} is not a correction`;
  if (event.trajectory === undefined) return 'the feedback has no trajectory';
  return undefined;
}

/**
 * @example
 * const { candidates } = personDecisions(trajectory, storedEvent); // hint = the comment, at event.messageId
 */
export function personDecisions(trajectory: Trajectory, event: Pick<StoredFeedbackEvent, 'eventId' | 'kind' | 'rating' | 'messageId' | 'comment' | 'trajectory' | 'trainingConsent'>): ExtractorResult {
  const ref = event.eventId;
  const problem = personEventProblem(event);
  if (problem) return { candidates: [], skipped: [{ source: 'person', ref, reason: problem }] };
  const message = assistantMessages(trajectory).get(event.messageId!);
  if (!message) return { candidates: [], skipped: [{ source: 'person', ref, reason: `${event.messageId} is not an assistant message of the trajectory` }] };
  return {
    candidates: [
      {
        messageId: message.messageId,
        turn: message.turn,
        hintClass: 'person-comment',
        hint: { text: boundHint(event.comment!.trim()), by: 'person' },
        // No identifier of the person (not even a hash): the comment is already their words.
        source: { kind: 'person', feedbackEventId: event.eventId },
      },
    ],
    skipped: [],
  };
}

/**
 * The current event of a feedback event's feedbackKey (`CURRENT`); the event itself when no current vote is stored
 * or the current one's event is gone. Only the current event may give a decision or a training rollout.
 *
 * @example
 * const current = await currentEventOf({ ports }, event);
 * if (current.eventId !== event.eventId) skip('superseded');
 */
export async function currentEventOf(ctx: { ports: Pick<Ports, 'records'> }, event: StoredFeedbackEvent): Promise<StoredFeedbackEvent> {
  const key = feedbackKeys.current(event.feedbackKey);
  const vote = currentVoteRecord.decodeIfPresent(await ctx.ports.records.get(key.pk, key.sk));
  if (!vote || vote.eventId === event.eventId) return event;
  const k = feedbackKeys.event(vote.eventId);
  return feedbackEventRecord.decodeIfPresent(await ctx.ports.records.get(k.pk, k.sk)) ?? event;
}
