/**
 * The sweep workflow as the local runtime runs it: the definition `sweepDefinition` renders for the CDK app, with
 * placeholder ARNs, and one local handler per Task state: each Lambda step calls the same step function the Lambda
 * entry calls (`functions/sweeps/<step>.ts`), each Batch submission goes to the local jobs driver (GPU pool, the
 * `rollout` definition, the `evaluation` share).
 *
 * @example
 * const workflows = new LocalWorkflows(db, { [SWEEP_WORKFLOW]: localSweepWorkflow({ steps: sweepStepHandlers(), ports, jobs }) });
 */
import type { LocalWorkflowSpec } from '../../drivers/local/workflows/workflow-spec.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import { sweepDefinition, type SweepDefinitionArns, type SweepDefinitionOptions } from '../workflow/sweep.asl.ts';
import { SWEEP_STEP_NAMES, type ImageJobDefinitions, type SweepStepName, type SweepStepPorts, type SweepSteps } from '../workflow/sweep-steps.ts';

/** The job definition name the rollout image is known by (on Batch: the job definition `rollout` of the stage). */
export const ROLLOUT_JOB_DEFINITION = 'rollout';

/** Placeholder ARNs of the local runtime (region `local`, account 000000000000). */
export function localSweepArns(): SweepDefinitionArns {
  return {
    functions: Object.fromEntries(
      SWEEP_STEP_NAMES.map((step) => [step, `arn:aws:lambda:local:000000000000:function:flywheel-sweep-${step}`]),
    ) as Record<SweepStepName, string>,
    gpuJobQueue: 'arn:aws:batch:local:000000000000:job-queue/flywheel-gpu',
    rolloutJobDefinition: `arn:aws:batch:local:000000000000:job-definition/flywheel-${ROLLOUT_JOB_DEFINITION}`,
  };
}

export interface LocalSweepWorkflowOptions {
  steps: SweepSteps;
  ports: SweepStepPorts;
  jobs: JobsPort;
  /** Between DescribeJobs polls while a shard's job runs; default 1000 ms. */
  pollMs?: number;
  /** Rendering options (tests lower the inline Map's bound to run the Distributed Map branch). */
  definition?: SweepDefinitionOptions;
}

/**
 * The job definitions of environment images locally: the rollout definition for every image. The local jobs driver
 * runs no images (the harness builds each task's cached environment instead), so a shard in an image takes the
 * `SubmitShardJobInImage` path of the definition and runs as the rollout process, as on AWS it would run in the image.
 */
export function localImageDefinitions(): ImageJobDefinitions {
  const rollout = localSweepArns().rolloutJobDefinition;
  return { forImage: async () => rollout };
}

export function localSweepWorkflow(options: LocalSweepWorkflowOptions): LocalWorkflowSpec {
  const arns = localSweepArns();
  const ports: SweepStepPorts = { ...options.ports, imageDefinitions: options.ports.imageDefinitions ?? localImageDefinitions() };
  const lambdas = Object.fromEntries(
    SWEEP_STEP_NAMES.map((step) => [arns.functions[step], (payload: unknown) => options.steps[step](ports, payload as never)]),
  );
  return {
    definition: sweepDefinition(arns, options.definition),
    lambdas,
    batch: {
      jobs: options.jobs,
      queues: { [arns.gpuJobQueue]: 'gpu' },
      definitions: { [arns.rolloutJobDefinition]: ROLLOUT_JOB_DEFINITION },
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    },
  };
}
