/**
 * Every state machine definition the project renders, held to the subset both runtimes execute (DESIGN.md, "One
 * workflow definition, two runtimes") and validated against the States Language with `asl-validator`; and the
 * rendering the CDK app synthesizes is the same definition the local runtime runs.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import aslValidator from 'asl-validator';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';
import { aslSubsetViolations } from '../../lib/drivers/local/asl-subset.ts';
import { localDeriveArns } from '../../lib/judges/local/local-derive-judges.ts';
import { deriveJudgesDefinition } from '../../lib/judges/workflow/derive-judges.asl.ts';
import { localSweepArns } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import { localTrainArns } from '../../lib/training/local/local-training.ts';
import { trainDefinition } from '../../lib/training/workflow/train.asl.ts';
import { worstCasePauseSeconds, type AslDefinition } from '../../lib/shared/asl.ts';
import { BATCH_JOB_RETRY, BATCH_SUBMIT_RETRY, LAMBDA_STEP_RETRY } from '../../lib/sweeps/workflow/retry-policies.ts';
import {
  INLINE_MAP_MAX_CONCURRENCY,
  SHARD_JOB_ENVIRONMENT,
  SWEEP_SHARE_IDENTIFIER,
  SWEEP_STATES,
  sweepDefinition,
} from '../../lib/sweeps/workflow/sweep.asl.ts';
import { SWEEP_STEP_NAMES, type ShardRef } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { synthesizedSweepDefinition } from './synthesized-definition.ts';

/** ARNs shaped like what CloudFormation substitutes for the tokens CDK passes. */
const deployedLikeArns = {
  functions: Object.fromEntries(SWEEP_STEP_NAMES.map((s) => [s, `arn:aws:lambda:eu-west-1:123456789012:function:Flywheel-dev-Workflows-${s}`])) as Record<
    (typeof SWEEP_STEP_NAMES)[number],
    string
  >,
  gpuJobQueue: 'arn:aws:batch:eu-west-1:123456789012:job-queue/flywheel-dev-gpu',
  rolloutJobDefinition: 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-rollout:1',
};

/** Every definition factory (`lib/<capability>/workflow/*.asl.ts`) with the renderings to check. A new file must be added here. */
const RENDERINGS: Record<string, () => Record<string, unknown>> = {
  'lib/judges/workflow/derive-judges.asl.ts': () => ({ 'judge derivation, local placeholders': deriveJudgesDefinition(localDeriveArns()) }),
  'lib/training/workflow/train.asl.ts': () => ({ 'training run, local placeholders': trainDefinition(localTrainArns()) }),
  'lib/sweeps/workflow/sweep.asl.ts': () => ({
    'sweep, local placeholders': sweepDefinition(localSweepArns()),
    'sweep, deployed-like ARNs': sweepDefinition(deployedLikeArns),
    'sweep, as synthesized by the CDK app (dev)': synthesizedSweepDefinition('dev'),
  }),
};

function aslFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.asl.ts'))
    .map((e) => relative(PROJECT_ROOT, join(e.parentPath, e.name)))
    .sort();
}

const rendered = Object.entries(RENDERINGS).flatMap(([file, render]) => Object.entries(render()).map(([label, def]) => ({ file, label, def })));

describe('workflow definitions', () => {
  it('every definition factory in lib/ is rendered here', () => {
    expect(aslFiles(join(PROJECT_ROOT, 'lib'))).toEqual(Object.keys(RENDERINGS).sort());
  });

  it.each(rendered.map((r) => [r.label, r.def] as const))('%s: inside the two-runtime subset', (_label, def) => {
    expect(aslSubsetViolations(def)).toEqual([]);
  });

  it.each(rendered.map((r) => [r.label, r.def] as const))('%s: valid States Language (asl-validator) and accepted by aws-local-stepfunctions', (_label, def) => {
    // asl-validator writes a QueryLanguage into every state it checks: give it a copy.
    const result = aslValidator(structuredClone(def) as never, { checkPaths: true, checkArn: true });
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    expect(() => new StateMachine(structuredClone(def) as never)).not.toThrow();
  });

  it('the CDK app synthesizes the very definition the local runtime runs, ARNs aside', () => {
    const synthesized = JSON.stringify(synthesizedSweepDefinition('dev'));
    const local = JSON.stringify(sweepDefinition(localSweepArns()));
    const arnLike = /arn:aws:(lambda|batch):[^"]+/g;
    expect(synthesized.replace(arnLike, 'ARN')).toBe(local.replace(arnLike, 'ARN'));
  });
});

describe('the subset check is not vacuous', () => {
  const base = (): AslDefinition => sweepDefinition(localSweepArns());
  const cases: Array<[string, (d: AslDefinition) => void, RegExp]> = [
    ['JSONata query language', (d) => void (d.QueryLanguage = 'JSONata'), /QueryLanguage JSONata/],
    ['a JSONata expression', (d) => void ((d.States[SWEEP_STATES.validate]!.Parameters as Record<string, unknown>).Extra = '{% $states.input %}'), /JSONata expression/],
    ['variables', (d) => void (d.States[SWEEP_STATES.plan]!.Assign = { x: 1 }), /Assign/],
    ['an ItemReader', (d) => void (d.States[SWEEP_STATES.distributedMap]!.ItemReader = { Resource: 'arn:aws:states:::s3:getObject' }), /ItemReader/],
    ['a ResultWriter', (d) => void (d.States[SWEEP_STATES.distributedMap]!.ResultWriter = {}), /ResultWriter/],
    ['an ItemBatcher', (d) => void (d.States[SWEEP_STATES.distributedMap]!.ItemBatcher = { MaxItemsPerBatch: 2 }), /ItemBatcher/],
    ['tolerated failures', (d) => void (d.States[SWEEP_STATES.distributedMap]!.ToleratedFailurePercentage = 5), /ToleratedFailurePercentage/],
    ['a heartbeat', (d) => void (d.States[SWEEP_STATES.compare]!.HeartbeatSeconds = 60), /HeartbeatSeconds/],
    ['another Task resource', (d) => void (d.States[SWEEP_STATES.compare]!.Resource = 'arn:aws:states:::sqs:sendMessage'), /sqs:sendMessage/],
    ['a Task without timeout', (d) => void delete d.States[SWEEP_STATES.compare]!.TimeoutSeconds, /without TimeoutSeconds/],
    [
      'a forbidden field inside a Map iteration',
      (d) => {
        const processor = d.States[SWEEP_STATES.inlineMap]!.ItemProcessor as { States: Record<string, Record<string, unknown>> };
        processor.States.SubmitShardJob!.HeartbeatSeconds = 30;
      },
      /ItemProcessor\.States\.SubmitShardJob: HeartbeatSeconds/,
    ],
  ];
  it.each(cases)('flags %s', (_name, mutate, expected) => {
    const def = base();
    mutate(def);
    expect(aslSubsetViolations(def).join('\n')).toMatch(expected);
  });
});

describe('sweep definition', () => {
  const def = sweepDefinition(localSweepArns());
  const iteration = (mapState: string) => (def.States[mapState]!.ItemProcessor as { States: Record<string, Record<string, any>> }).States;
  /** The iteration's state names carry the Map's suffix (`SubmitShardJob`, `SubmitShardJobDistributed`). */
  const suffixOf = (mapState: string) => (mapState === SWEEP_STATES.distributedMap ? 'Distributed' : '');

  it('runs validate → plan → Map (inline or distributed by plan size) → compare → saturation → notify', () => {
    expect(def.StartAt).toBe(SWEEP_STATES.validate);
    expect(def.States[SWEEP_STATES.validate]!.Next).toBe(SWEEP_STATES.plan);
    expect(def.States[SWEEP_STATES.plan]!.Next).toBe(SWEEP_STATES.chooseMap);
    expect(def.States[SWEEP_STATES.chooseMap]!.Default).toBe(SWEEP_STATES.inlineMap);
    for (const map of [SWEEP_STATES.inlineMap, SWEEP_STATES.distributedMap]) {
      expect(def.States[map]!.Next).toBe(SWEEP_STATES.compare);
      expect(def.States[map]!.ItemsPath).toBe('$.plan.shards');
    }
    expect(def.States[SWEEP_STATES.inlineMap]!.MaxConcurrency).toBe(INLINE_MAP_MAX_CONCURRENCY);
    expect((def.States[SWEEP_STATES.distributedMap]!.ItemProcessor as { ProcessorConfig: unknown }).ProcessorConfig).toEqual({
      Mode: 'DISTRIBUTED',
      ExecutionType: 'STANDARD',
    });
    expect(def.States[SWEEP_STATES.compare]!.Next).toBe(SWEEP_STATES.saturation);
    expect(def.States[SWEEP_STATES.saturation]!.Next).toBe(SWEEP_STATES.notify);
    expect(def.States[SWEEP_STATES.notify]!.End).toBe(true);
  });

  it.each([SWEEP_STATES.inlineMap, SWEEP_STATES.distributedMap])('%s: each shard is a Batch array job on the GPU queue under the evaluation share', (map) => {
    const submit = iteration(map)[`SubmitShardJob${suffixOf(map)}`];
    expect(submit).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::batch:submitJob.sync',
      Parameters: {
        JobQueue: localSweepArns().gpuJobQueue,
        JobDefinition: localSweepArns().rolloutJobDefinition,
        ShareIdentifier: SWEEP_SHARE_IDENTIFIER,
        ArrayProperties: { 'Size.$': '$.shard.arraySize' },
      },
    });
    expect(SWEEP_SHARE_IDENTIFIER).toBe('evaluation');
    const env = submit!.Parameters.ContainerOverrides.Environment as Array<{ Name: string; 'Value.$': string }>;
    expect(env).toContainEqual({ Name: 'FLYWHEEL_SHARD_KEY', 'Value.$': '$.shard.shardKey' });
    expect(env.map((e) => e.Name).sort()).toEqual(Object.keys(SHARD_JOB_ENVIRONMENT).sort());
    // Each child asks for the shard's GPUs (Batch wants the value as a string).
    expect(submit!.Parameters.ContainerOverrides.ResourceRequirements).toEqual([{ Type: 'GPU', 'Value.$': "States.Format('{}', $.shard.gpus)" }]);
    // Keys, not bodies: only ids and keys go in, only the job id and status come out.
    expect(submit!.ResultSelector).toEqual({ 'jobId.$': '$.JobId', 'status.$': '$.Status' });
  });

  it.each([SWEEP_STATES.inlineMap, SWEEP_STATES.distributedMap])('%s: retries with full jitter, and catches every error inside the iteration', (map) => {
    const states = iteration(map);
    const [submit, aggregate, failure] = ['SubmitShardJob', 'AggregateShard', 'RecordShardFailure'].map((n) => [`${n}${suffixOf(map)}`, states[`${n}${suffixOf(map)}`]!] as const);
    expect(submit![1].Retry).toEqual([
      // First, so that the States.TaskFailed retrier (which matches every Task error) never retries a refused submission.
      { ErrorEquals: ['Batch.ClientException'], MaxAttempts: 0 },
      expect.objectContaining({ ErrorEquals: expect.arrayContaining(['Batch.AWSBatchException']), MaxAttempts: BATCH_SUBMIT_RETRY.maxAttempts, JitterStrategy: 'FULL' }),
      expect.objectContaining({ ErrorEquals: ['States.TaskFailed'], MaxAttempts: BATCH_JOB_RETRY.maxAttempts, JitterStrategy: 'FULL' }),
    ]);
    for (const [, state] of [submit!, aggregate!]) {
      expect(state.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: failure![0] }]);
    }
    expect(failure![1]).toMatchObject({ Resource: 'arn:aws:states:::lambda:invoke', End: true, OutputPath: '$.Payload' });
    expect(failure![1].Parameters.FunctionName).toBe(localSweepArns().functions['record-shard-failure']);
  });

  it.each([SWEEP_STATES.inlineMap, SWEEP_STATES.distributedMap])('%s: a shard done in an earlier run of the sweep id is kept without a job', (map) => {
    const suffix = suffixOf(map);
    const processor = (sweepDefinition(localSweepArns()).States[map] as any).ItemProcessor;
    expect(processor.StartAt).toBe(`IsShardDone${suffix}`);
    expect(processor.States[`IsShardDone${suffix}`]).toEqual(
      expect.objectContaining({
        Type: 'Choice',
        Choices: [
          { Variable: '$.shard.done', IsPresent: true, Next: `KeepShardResult${suffix}` },
          { Variable: '$.shard.jobDefinition', IsPresent: true, Next: `SubmitShardJobInImage${suffix}` },
        ],
        Default: `SubmitShardJob${suffix}`,
      }),
    );
    expect(processor.States[`KeepShardResult${suffix}`]).toMatchObject({ Type: 'Pass', Parameters: { 'shardId.$': '$.shard.shardId', status: 'succeeded', kept: true }, End: true });
  });

  it.each([SWEEP_STATES.inlineMap, SWEEP_STATES.distributedMap])(
    "%s: a shard in an environment image is the same Batch task under the ShardRef's job definition",
    (map) => {
      const suffix = suffixOf(map);
      const { Comment: _a, Parameters: plain, ...plainRest } = iteration(map)[`SubmitShardJob${suffix}`]!;
      const { Comment: _b, Parameters: inImage, ...inImageRest } = iteration(map)[`SubmitShardJobInImage${suffix}`]!;
      expect(inImageRest).toEqual(plainRest);
      const { JobDefinition, ...plainParameters } = plain;
      expect(JobDefinition).toBe(localSweepArns().rolloutJobDefinition);
      expect(inImage).toEqual({ ...plainParameters, 'JobDefinition.$': '$.shard.jobDefinition' });
    },
  );

  it('every Lambda step retries service errors with full jitter and names its function', () => {
    const lambdaStates = [
      ...Object.values(def.States),
      ...Object.values(iteration(SWEEP_STATES.inlineMap)),
    ].filter((s) => s.Resource === 'arn:aws:states:::lambda:invoke');
    expect(lambdaStates).toHaveLength(SWEEP_STEP_NAMES.length);
    for (const state of lambdaStates) {
      expect(state.Retry).toEqual([expect.objectContaining({ ErrorEquals: expect.arrayContaining(['Lambda.TooManyRequestsException']), JitterStrategy: 'FULL' })]);
    }
    expect(lambdaStates.map((s) => (s.Parameters as { FunctionName: string }).FunctionName).sort()).toEqual(Object.values(localSweepArns().functions).sort());
  });

  describe('the shard Batch task, run by aws-local-stepfunctions (the Batch call replaced by a handler)', () => {
    const name = 'SubmitShardJob';
    const shard: ShardRef = { shardId: 'c0-s0-strict-0', shardKey: 'sweeps/s1/shards/c0-s0-strict-0.json', checkpoint: 'ck-0', suite: 'calc', mode: 'strict', arraySize: 3, gpus: 4 };
    /** The iteration's submit state alone (no Catch, so an error ends the run), its Retry as rendered. */
    async function submitWith(fail: (call: number) => string | undefined): Promise<{ calls: Array<Record<string, any>>; error?: string }> {
      const { Catch: _catch, Next: _next, ...state } = iteration(SWEEP_STATES.inlineMap)[name]!;
      const machine = new StateMachine({ StartAt: name, States: { [name]: { ...state, End: true } } } as never);
      const calls: Array<Record<string, any>> = [];
      const handler = async (parameters: Record<string, any>) => {
        calls.push(parameters);
        const error = fail(calls.length);
        if (error) throw Object.assign(new Error(`failed with ${error}`), { name: error });
        return { JobId: 'job-1', Status: 'SUCCEEDED' };
      };
      try {
        await machine.run({ sweepId: 's1', shard: { ...shard } }, { overrides: { taskResourceLocalHandlers: { [name]: handler } as never, retryIntervalOverrides: { [name]: 0 } } }).result;
        return { calls };
      } catch (error) {
        return { calls, error: String((error as { cause?: { name?: string } }).cause?.name ?? (error as Error).name) };
      }
    }

    it('submits the shard with its environment and GPU count (formatted as the string Batch takes)', async () => {
      const { calls, error } = await submitWith(() => undefined);
      expect(error).toBeUndefined();
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ JobName: 's1-c0-s0-strict-0', ArrayProperties: { Size: 3 }, ShareIdentifier: SWEEP_SHARE_IDENTIFIER });
      expect(calls[0]!.ContainerOverrides.ResourceRequirements).toEqual([{ Type: 'GPU', Value: '4' }]);
      expect(calls[0]!.ContainerOverrides.Environment).toContainEqual({ Name: 'FLYWHEEL_SHARD_KEY', Value: shard.shardKey });
    });

    it.each([
      ['a refused submission (Batch.ClientException) is not retried', 'Batch.ClientException', 1],
      ['a throttled one is retried up to BATCH_SUBMIT_RETRY', 'Batch.AWSBatchException', 1 + BATCH_SUBMIT_RETRY.maxAttempts],
      ['a failed job is run once more (BATCH_JOB_RETRY)', 'States.TaskFailed', 1 + BATCH_JOB_RETRY.maxAttempts],
    ] as const)('%s', async (_what, errorName, tries) => {
      const { calls, error } = await submitWith(() => errorName);
      expect(calls).toHaveLength(tries);
      expect(error).toBe(errorName);
    });
  });

  it('retry constants: the worst cases their comments state', () => {
    expect(worstCasePauseSeconds(BATCH_SUBMIT_RETRY)).toBe(5 + 10 + 20 + 40 + 80 + 120);
    expect(worstCasePauseSeconds(BATCH_JOB_RETRY)).toBe(60);
    expect(worstCasePauseSeconds(LAMBDA_STEP_RETRY)).toBe(2 + 4 + 8 + 16);
  });
});
