/**
 * What the local workflows driver runs for one workflow: its definition (the very one the CDK app synthesizes), the
 * in-process handlers of the Lambda functions it invokes, and where its Batch submissions go.
 *
 * @example
 * const spec: LocalWorkflowSpec = { definition, lambdas: { 'flywheel-plan-shards': planShards }, batch: { jobs, queues, definitions } };
 */
import type { ComputePool, JobsPort } from '../../../ports/jobs.ts';

/** A Lambda step run in-process: the invoke's Payload in, the function's answer out. */
export type LocalLambdaHandler = (payload: unknown) => Promise<unknown>;

export interface LocalBatchTargets {
  jobs: JobsPort;
  /** Job queue ARN (as written in the definition) → pool. */
  queues: Record<string, ComputePool>;
  /** Job definition ARN (as written in the definition) → the jobs port's definition name. */
  definitions: Record<string, string>;
  /** Between DescribeJobs polls of a `.sync` task; default 1000 ms. */
  pollMs?: number;
}

export interface LocalWorkflowSpec {
  definition: object;
  /** Lambda handlers by the FunctionName the definition invokes. */
  lambdas: Record<string, LocalLambdaHandler>;
  batch?: LocalBatchTargets;
}
