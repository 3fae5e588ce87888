/**
 * The Slack worker's queue handler (the `people/slack-worker` Lambda on AWS; the local runtime's `people-slack`
 * consumer under `npm start`): each SQS record is one EventBridge `people.slack.work` event, whose detail is a command
 * or a button click the endpoint acknowledged. A record that throws (Slack down, the records store failing, a
 * malformed detail) is reported in `batchItemFailures`, retried, then dead-lettered.
 *
 * @example
 * export const handler = middy(makeSlackWorkerHandler(async () => ({ ports, slack, admins, sweepSettings })));
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ValidationError } from '../../../errors.ts';
import { toFieldIssues } from '../../../shared/field-issues.ts';
import { answerSlackAction } from '../answer-slack-action.ts';
import { runSlackCommand, type SlackWorkerDeps } from '../run-slack-command.ts';
import { SLACK_WORK_EVENT, SlackWork } from '../slack-work.ts';

/** The work an SQS record carries (an EventBridge envelope of `people.slack.work`). */
export function slackWorkOf(record: Pick<SQSRecord, 'body'>): SlackWork {
  const envelope = JSON.parse(record.body) as { 'detail-type'?: unknown; detail?: unknown };
  if (envelope['detail-type'] !== SLACK_WORK_EVENT) throw new ValidationError(`not a ${SLACK_WORK_EVENT} event: ${String(envelope['detail-type'])}`, [{ path: 'detail-type', message: `expected ${SLACK_WORK_EVENT}` }]);
  const parsed = SlackWork.safeParse(envelope.detail);
  if (!parsed.success) throw new ValidationError('malformed Slack work', toFieldIssues(parsed.error.issues, 'detail'));
  return parsed.data;
}

/** Does one piece of work: a command or a button click. */
export async function handleSlackWork(deps: SlackWorkerDeps, work: SlackWork): Promise<void> {
  if (work.kind === 'command') await runSlackCommand(deps, work);
  else await answerSlackAction(deps, work);
}

/**
 * @example
 * const handler = makeSlackWorkerHandler(() => Promise.resolve(deps));
 */
export function makeSlackWorkerHandler(resolveDeps: () => Promise<SlackWorkerDeps>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => handleSlackWork(await resolveDeps(), slackWorkOf(record));
  return async (event: SQSEvent) => processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false });
}
