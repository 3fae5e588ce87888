/**
 * Runs a sweep's steps in the order the state machine does (validate → plan → per shard: job + aggregate, or
 * record-shard-failure when the job fails → compare → saturation → notify), calling the same step handlers, with a
 * scripted rollout in place of the Batch job. For step tests and the benchmark's step-overhead measure; the state
 * machine itself is exercised by the workflow helper's tests (test/workflow/).
 */
import type { SweepExecutionInput, SweepNotice, SweepSteps, SweepStepPorts, ShardOutcome, ShardRef } from '../../../lib/sweeps/workflow/sweep-steps.ts';
import { runScriptedShard, type AttemptScript } from './scripted-rollout.ts';

export interface DriveOptions {
  script: AttemptScript;
  /** Shards whose "job" fails (record-shard-failure is called instead of aggregate-shard). */
  failShard?: (shard: ShardRef) => boolean;
  /** Skip the rollout (attempts already written: a resumed sweep). */
  skipRollout?: boolean;
  /** Time spent in each step, summed by name. */
  timings?: Map<string, number>;
}

export async function driveSweep(steps: SweepSteps, ports: SweepStepPorts, input: SweepExecutionInput, options: DriveOptions): Promise<{ notice: SweepNotice; outcomes: ShardOutcome[] }> {
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      options.timings?.set(name, (options.timings.get(name) ?? 0) + performance.now() - t0);
    }
  };
  await timed('validate-sweep', () => steps['validate-sweep'](ports, input));
  const plan = await timed('plan-shards', () => steps['plan-shards'](ports, { sweepId: input.sweepId }));
  const outcomes: ShardOutcome[] = [];
  for (const shard of plan.shards) {
    if (options.failShard?.(shard)) {
      outcomes.push(await timed('record-shard-failure', () => steps['record-shard-failure'](ports, { sweepId: input.sweepId, shard, error: { Error: 'States.TaskFailed', Cause: '{"StatusReason":"Essential container in task exited"}' } })));
      continue;
    }
    if (!options.skipRollout) await timed('rollout', () => runScriptedShard(ports, shard.shardKey, options.script));
    outcomes.push(await timed('aggregate-shard', () => steps['aggregate-shard'](ports, { sweepId: input.sweepId, shard, job: { jobId: `job-${shard.shardId}`, status: 'SUCCEEDED' } })));
  }
  const comparison = await timed('compare-incumbent', () => steps['compare-incumbent'](ports, { sweepId: input.sweepId }));
  const saturation = await timed('check-saturation', () => steps['check-saturation'](ports, { sweepId: input.sweepId }));
  const notice = await timed('notify', () => steps.notify(ports, { sweepId: input.sweepId, shards: outcomes, comparison, saturation }));
  return { notice, outcomes };
}
