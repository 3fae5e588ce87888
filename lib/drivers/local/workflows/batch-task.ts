/**
 * The Batch translation: a `arn:aws:states:::batch:submitJob(.sync)` Task state run against the jobs port. The
 * SubmitJob parameters become a submission (queue ARN → pool, job definition ARN → definition name,
 * ShareIdentifier → category); `.sync` polls until the job ends and answers with DescribeJobs' PascalCase fields.
 * A failed job throws `States.TaskFailed`; a submission that fails for a reason a retry may fix throws
 * `Batch.AWSBatchException` (others `Batch.ClientException`), so the definition's Retry and Catch behave as on AWS.
 *
 * @example
 * const answer = await submitBatchTask(spec.batch, parameters, { sync: true, idempotencyToken: () => `${scope}/${name}/0`, signal });
 */
import { z } from 'zod';
import { ErrorNames } from '../../../errors.ts';
import { waitForJob } from '../../../compute/wait-for-job.ts';
import { COMPUTE_CATEGORIES, type JobDescription } from '../../../ports/jobs.ts';
import { namedError } from './named-error.ts';
import type { LocalBatchTargets } from './workflow-spec.ts';

/** The SubmitJob parameters the two-runtime subset uses. */
export const batchSubmitParameters = z.object({
  JobName: z.string(),
  JobQueue: z.string(),
  JobDefinition: z.string(),
  ShareIdentifier: z.string().optional(),
  SchedulingPriorityOverride: z.number().optional(),
  ArrayProperties: z.object({ Size: z.number().optional() }).optional(),
  ContainerOverrides: z
    .object({
      Environment: z.array(z.object({ Name: z.string(), Value: z.unknown() })).optional(),
      Command: z.array(z.string()).optional(),
    })
    .optional(),
  Timeout: z.object({ AttemptDurationSeconds: z.number().optional() }).optional(),
  RetryStrategy: z.object({ Attempts: z.number().optional() }).optional(),
});
export type BatchSubmitParameters = z.output<typeof batchSubmitParameters>;

const category = z.enum(COMPUTE_CATEGORIES);

/** The fields of DescribeJobs' job detail that a `.sync` task returns, PascalCase as Step Functions writes them. */
function describeJobOutput(job: JobDescription) {
  return {
    JobId: job.jobId,
    JobName: job.name,
    Status: job.status,
    ShareIdentifier: job.category,
    ...(job.statusReason ? { StatusReason: job.statusReason } : {}),
    CreatedAt: job.createdAt,
    ...(job.startedAt !== undefined ? { StartedAt: job.startedAt } : {}),
    ...(job.stoppedAt !== undefined ? { StoppedAt: job.stoppedAt } : {}),
    ...(job.arraySize !== undefined ? { ArrayProperties: { Size: job.arraySize, StatusSummary: job.arrayStatusSummary ?? {} } } : {}),
    ...(job.exitCode !== undefined ? { Container: { ExitCode: job.exitCode } } : {}),
  };
}

/** Submits the job (and, with `sync`, waits for its end); throws the errors a Batch task throws on AWS. */
export async function submitBatchTask(
  batch: LocalBatchTargets | undefined,
  parameters: BatchSubmitParameters,
  options: { sync: boolean; idempotencyToken: () => string; signal: AbortSignal },
) {
  if (!batch) throw namedError('Batch.ClientException', 'this workflow has no local Batch targets');
  const pool = batch.queues[parameters.JobQueue];
  const definition = batch.definitions[parameters.JobDefinition];
  if (!pool) throw namedError('Batch.ClientException', `unknown job queue ${parameters.JobQueue}`);
  if (!definition) throw namedError('Batch.ClientException', `unknown job definition ${parameters.JobDefinition}`);
  const share = category.safeParse(parameters.ShareIdentifier);
  if (!share.success) throw namedError('Batch.ClientException', `a fair-share queue needs a ShareIdentifier among ${COMPUTE_CATEGORIES.join(', ')}`);
  const idempotencyToken = options.idempotencyToken();
  const environment = Object.fromEntries((parameters.ContainerOverrides?.Environment ?? []).map((e) => [e.Name, String(e.Value)]));
  let jobId: string;
  try {
    ({ jobId } = await batch.jobs.submit({
      name: parameters.JobName,
      definition,
      category: share.data,
      pool,
      environment,
      ...(parameters.ArrayProperties?.Size !== undefined ? { arraySize: parameters.ArrayProperties.Size } : {}),
      ...(parameters.ContainerOverrides?.Command ? { command: parameters.ContainerOverrides.Command } : {}),
      ...(parameters.Timeout?.AttemptDurationSeconds ? { timeoutSeconds: parameters.Timeout.AttemptDurationSeconds } : {}),
      ...(parameters.RetryStrategy?.Attempts ? { retries: parameters.RetryStrategy.Attempts - 1 } : {}),
      ...(parameters.SchedulingPriorityOverride !== undefined ? { schedulingPriority: parameters.SchedulingPriorityOverride } : {}),
      idempotencyToken,
    }));
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    const retryable = name === ErrorNames.transient || name === 'Batch.AWSBatchException';
    throw namedError(retryable ? 'Batch.AWSBatchException' : 'Batch.ClientException', error instanceof Error ? error.message : String(error));
  }
  if (!options.sync) return { JobId: jobId, JobName: parameters.JobName };
  const job = await waitForJob(batch.jobs, jobId, { pollMs: batch.pollMs ?? 1000, signal: options.signal });
  const description = describeJobOutput(job);
  if (job.status === 'FAILED') throw namedError('States.TaskFailed', JSON.stringify(description));
  return description;
}
