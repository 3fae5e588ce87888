/**
 * The errors only the AWS drivers throw: a batch call that AWS accepted but in part refused, and a Step Functions
 * execution that used every continuation. Callers and log queries match them by class or by `AwsDriverErrorNames`.
 *
 * @example
 * try { await queue.sendBatch(bodies); } catch (error) { if (error instanceof QueueSendError) requeueLater(bodies); else throw error; }
 */
import { FlywheelError } from '../../errors.ts';

/** The names of the AWS drivers' errors, as a state machine's `ErrorEquals` and a log query spell them. */
export const AwsDriverErrorNames = {
  queueSend: 'Flywheel.QueueSendError',
  eventPublish: 'Flywheel.EventPublishError',
  resumeLimitExceeded: 'Flywheel.ResumeLimitExceeded',
} as const;

/** SQS SendMessageBatch refused some entries (the others were sent): the message names each failure. */
export class QueueSendError extends FlywheelError {
  constructor(message: string) {
    super(AwsDriverErrorNames.queueSend, message);
  }
}

/** EventBridge PutEvents refused some entries (the others were published): the message names each failure. */
export class EventPublishError extends FlywheelError {
  constructor(message: string) {
    super(AwsDriverErrorNames.eventPublish, message);
  }
}

/** A Step Functions execution continued itself as often as it may: start it again under a new name. */
export class ResumeLimitExceededError extends FlywheelError {
  constructor(message: string) {
    super(AwsDriverErrorNames.resumeLimitExceeded, message);
  }
}
