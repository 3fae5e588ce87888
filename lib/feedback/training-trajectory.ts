/**
 * The one way to read a feedback trajectory for training (training sets, eval cases drafted from signals, judge
 * labels that become training examples): it refuses, with a named error, any event without `trainingConsent: true`.
 * Reading a trajectory for something else (showing it to its tenant) goes through the blobs port directly.
 */
import { FlywheelError } from '../errors.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { StoredFeedbackEvent } from './record-codecs.ts';

/** The names of the feedback capability's errors, as a log query (or a state machine) spells them. */
export const FeedbackErrorNames = {
  trainingConsentRequired: 'Flywheel.TrainingConsentRequired',
} as const;

/** A trajectory was about to be read for training from an event that did not consent to it. */
export class TrainingConsentRequiredError extends FlywheelError {
  readonly eventId: string;
  constructor(eventId: string) {
    super(FeedbackErrorNames.trainingConsentRequired, `feedback ${eventId} has no training consent: its trajectory may not be read for training`);
    this.eventId = eventId;
  }
}

/**
 * The trajectory's bytes (undefined when the event has none or the blob is gone); throws
 * `Flywheel.TrainingConsentRequired` unless the event consented. Pass the tenant's ports (`scopePortsToTenant`).
 *
 * @example
 * const bytes = await readTrajectoryForTraining(ports.blobs, feedbackEventRecord.decode(item)); // the stored event
 */
export async function readTrajectoryForTraining(
  blobs: BlobsPort,
  event: Pick<StoredFeedbackEvent, 'eventId' | 'trajectory'> & { trainingConsent?: boolean },
): Promise<Uint8Array | undefined> {
  if (event.trainingConsent !== true) throw new TrainingConsentRequiredError(event.eventId);
  if (event.trajectory === undefined) return undefined;
  return blobs.get(event.trajectory.blobKey);
}
