/**
 * The training stall check, invoked by its schedule (lib/training/infra/train-state-machine.ts): every running run
 * whose heartbeat (its `heartbeat.json`, else its metrics file) is older than its `stallMinutes` gets one notice to
 * people (a `stall` notice, `lib/people/notices/`: stored, logged, sent to Slack and the bus), unless its job still waits for
 * capacity (the jobs port over the GPU queue, `FLYWHEEL_TRAIN_JOB_QUEUE`); every non-terminal run whose execution is
 * no longer running (FLYWHEEL_STATE_MACHINE_TRAIN_POLICY) is failed with one notice.
 */
import { BatchClient } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { BatchJobs } from '../../lib/drivers/aws/batch-jobs.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { ConfigurationError } from '../../lib/errors.ts';
import { noticeNotifier } from '../../lib/people/notices/notice-notifier.ts';
import { checkStalledRuns, STALL_CHECK_JOB_QUEUE_ENV } from '../../lib/training/runs/check-stalled-runs.ts';
import { observability } from '../observability.ts';

const obs = observability('training-stall-check');
const queue = process.env[STALL_CHECK_JOB_QUEUE_ENV];
if (!queue) throw new ConfigurationError(`Missing environment variable: ${STALL_CHECK_JOB_QUEUE_ENV}`);
// Reads only (list, describe): the trainer's jobs on the GPU queue; no definitions are submitted from here.
const jobs = new BatchJobs(new BatchClient({}), new CloudWatchLogsClient({}), { queues: { gpu: queue, cpu: queue }, definitions: {} });
const ports = { ...awsPortsFromEnv(), jobs, workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };
// Notices are raised: stored, deduplicated (one per stall, one per failure), then Slack and the bus (the alarm topic).
const notify = noticeNotifier(ports, 'training');

export const handler = middy(async () => checkStalledRuns(ports, notify)).use(obs.middlewares);
