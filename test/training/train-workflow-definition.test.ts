/**
 * The training state machine's definition: valid States Language, inside the two-runtime subset, shaped as
 * documented (each step's failure recorded, the policy job as a GPU Batch job in the training share, its environment
 * per TRAINER_JOB_ENV, a multi-node parallel job when nodes > 1, the sweep waited on in a loop); its retry arithmetic;
 * the names it gives; the one step Lambda's dispatch.
 */
import aslValidator from 'asl-validator';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { aslSubsetViolations } from '../../lib/drivers/local/asl-subset.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { worstCasePauseSeconds } from '../../lib/shared/asl.ts';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { localTrainArns } from '../../lib/training/local/local-training.ts';
import { derivedRunId, policyJobName, trainingExecutionName } from '../../lib/training/runs/run-names.ts';
import { TRAINER_JOB_ENV, TrainingRunInputSchema } from '../../lib/training/schemas.ts';
import { BUILD_DATASET_RETRY, POLICY_JOB_ATTEMPTS, POLICY_JOB_SUBMIT_RETRY, TRAIN_STEP_RETRY } from '../../lib/training/workflow/train-retry-policies.ts';
import { checkpointSweepIdOf, dispatchTrainStep } from '../../lib/training/workflow/train-steps.ts';
import { POLICY_JOB_ENVIRONMENT, TRAIN_SHARE_IDENTIFIER, TRAIN_STATES, TRAIN_WORKFLOW, trainDefinition } from '../../lib/training/workflow/train.asl.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { trainingRunRecord } from '../../lib/training/record-codecs.ts';
import { findCheckpoint } from '../../lib/registry/get-checkpoint.ts';
import { comparisonRecord, sweepRecord } from '../../lib/sweeps/record-codecs.ts';
import { startTrainingRun } from '../../lib/training/runs/training-runs.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { fakeBuildDataset } from './support/train-workflow-fixture.ts';

const deployed = {
  stepFunction: 'arn:aws:lambda:eu-west-1:123456789012:function:Flywheel-dev-Workflows-TrainStep',
  gpuJobQueue: 'arn:aws:batch:eu-west-1:123456789012:job-queue/flywheel-dev-gpu',
  trainerJobDefinition: 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-trainer-policy:1',
  trainerMultiNodeJobDefinition: 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-trainer-policy-mnp:1',
};
type State = Record<string, any>;

describe('train-policy definition', () => {
  it.each([
    ['local placeholders', trainDefinition(localTrainArns())],
    ['deployed-like ARNs', trainDefinition(deployed)],
  ])('%s: valid (asl-validator), inside the subset, accepted by aws-local-stepfunctions', (_label, def) => {
    const result = aslValidator(structuredClone(def) as never, { checkPaths: true, checkArn: true });
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    expect(aslSubsetViolations(def)).toEqual([]);
    expect(() => new StateMachine(structuredClone(def) as never)).not.toThrow();
    expect(TRAIN_WORKFLOW).toBe('train-policy');
  });

  it('builds the dataset, trains, registers, waits for the sweep, compares, proposes; any failure is recorded', () => {
    const def = trainDefinition(deployed);
    const s = def.States as Record<string, State>;
    expect(def.StartAt).toBe(TRAIN_STATES.buildDataset);
    // A run resumed after its checkpoint was registered skips training and registration.
    expect(s[TRAIN_STATES.buildDataset]!.Next).toBe(TRAIN_STATES.alreadyRegistered);
    expect(s[TRAIN_STATES.alreadyRegistered]).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.dataset.registered', BooleanEquals: true, Next: TRAIN_STATES.skipToSweep }], Default: TRAIN_STATES.prepare });
    expect(s[TRAIN_STATES.skipToSweep]).toMatchObject({ Type: 'Pass', InputPath: '$.dataset', ResultPath: '$.registered', Next: TRAIN_STATES.sweepRequested });
    expect(s[TRAIN_STATES.prepare]!.Next).toBe(TRAIN_STATES.shape);
    expect(s[TRAIN_STATES.shape]!.Choices).toEqual([{ Variable: '$.train.nodes', NumericGreaterThan: 1, Next: TRAIN_STATES.trainMultiNode }]);
    expect(s[TRAIN_STATES.shape]!.Default).toBe(TRAIN_STATES.train);
    for (const t of [TRAIN_STATES.train, TRAIN_STATES.trainMultiNode]) {
      expect(s[t]).toMatchObject({ Resource: 'arn:aws:states:::batch:submitJob.sync', Next: TRAIN_STATES.register, Parameters: { JobQueue: deployed.gpuJobQueue, ShareIdentifier: TRAIN_SHARE_IDENTIFIER, 'JobName.$': '$.train.jobName' } });
      // One retry layer for the job: Batch's attempts; a failed job is not run again by the state machine.
      expect(s[t]!.Retry[0]).toEqual({ ErrorEquals: ['Batch.ClientException'], MaxAttempts: 0 });
      expect(s[t]!.Retry.at(-1)).toEqual({ ErrorEquals: ['States.TaskFailed'], MaxAttempts: 0 });
    }
    expect(TRAIN_SHARE_IDENTIFIER).toBe('training');
    const single = s[TRAIN_STATES.train]!.Parameters;
    expect(single.JobDefinition).toBe(deployed.trainerJobDefinition);
    expect((single.ContainerOverrides.Environment as Array<{ Name: string }>).map((e) => e.Name).sort()).toEqual(Object.values(TRAINER_JOB_ENV).sort());
    expect(single.ContainerOverrides.Environment).toContainEqual({ Name: TRAINER_JOB_ENV.metricsKey, 'Value.$': '$.train.env.metricsKey' });
    expect(single.ContainerOverrides['ResourceRequirements.$']).toBe('$.train.resources');
    const multi = s[TRAIN_STATES.trainMultiNode]!.Parameters;
    expect(multi.JobDefinition).toBe(deployed.trainerMultiNodeJobDefinition);
    expect(multi.ContainerOverrides).toBeUndefined();
    expect(multi.NodeOverrides).toMatchObject({ 'NumNodes.$': '$.train.nodes', NodePropertyOverrides: [{ TargetNodes: '0:', ContainerOverrides: { Environment: single.ContainerOverrides.Environment, 'ResourceRequirements.$': '$.train.resources' } }] });
    expect(Object.keys(POLICY_JOB_ENVIRONMENT).sort()).toEqual(Object.values(TRAINER_JOB_ENV).sort());
    // Without a multi-node definition the one definition serves both.
    expect((trainDefinition(localTrainArns()).States[TRAIN_STATES.trainMultiNode] as State).Parameters.JobDefinition).toBe(localTrainArns().trainerJobDefinition);
    // The sweep loop: check, then wait the seconds the check says, until it ended.
    expect(s[TRAIN_STATES.register]!.Next).toBe(TRAIN_STATES.sweepRequested);
    expect(s[TRAIN_STATES.sweepRequested]!.Default).toBe(TRAIN_STATES.finish);
    expect(s[TRAIN_STATES.checkSweep]!.Next).toBe(TRAIN_STATES.sweepEnded);
    expect(s[TRAIN_STATES.sweepEnded]!.Default).toBe(TRAIN_STATES.waitForSweep);
    expect(s[TRAIN_STATES.waitForSweep]).toEqual(expect.objectContaining({ Type: 'Wait', SecondsPath: '$.sweep.waitSeconds', Next: TRAIN_STATES.checkSweep }));
    expect(s[TRAIN_STATES.shouldPropose]!.Choices[0].Next).toBe(TRAIN_STATES.propose);
    expect(s[TRAIN_STATES.propose]!.Next).toBe(TRAIN_STATES.finish);
    expect(s[TRAIN_STATES.finish]!.Next).toBe(TRAIN_STATES.succeeded);
    // Every Task but RecordFailure sends any error to RecordFailure, which ends in Fail; RecordFailure's own failure
    // (after its retries) goes to Fail too, leaving the run to the scheduled check.
    for (const [name, state] of Object.entries(s)) {
      if (state.Type !== 'Task') continue;
      if (name === TRAIN_STATES.failure) expect(state.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failureError', Next: TRAIN_STATES.failed }]);
      else expect(state.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: TRAIN_STATES.failure }]);
      expect(typeof state.TimeoutSeconds).toBe('number');
    }
    expect(s[TRAIN_STATES.failure]!.Next).toBe(TRAIN_STATES.failed);
    expect(s[TRAIN_STATES.failed]).toMatchObject({ Type: 'Fail', Error: 'Flywheel.TrainingRunFailed' });
  });

  it('spells out the worst-case pauses its retry policies document', () => {
    expect(worstCasePauseSeconds(TRAIN_STEP_RETRY)).toBe(2 + 4 + 8 + 16);
    expect(worstCasePauseSeconds(BUILD_DATASET_RETRY)).toBe(10 + 20 + 40 + 80 + 120);
    expect(worstCasePauseSeconds(POLICY_JOB_SUBMIT_RETRY)).toBe(5 + 10 + 20 + 40 + 80 + 120);
    // 1 ASL try × 3 Batch attempts.
    expect(POLICY_JOB_ATTEMPTS).toBe(3);
  });

  it('names: executions within 80 as Step Functions allows, resumes -r<n>, jobs within 128, run ids from the request', () => {
    expect(trainingExecutionName('rl-42')).toBe('rl-42');
    expect(trainingExecutionName('rl-42', 2)).toBe('rl-42-r2');
    const odd = trainingExecutionName('org/run:1');
    expect(odd).toMatch(/^train-org-run-1-[0-9a-f]{8}$/);
    expect(trainingExecutionName('org/run:2')).not.toBe(odd);
    for (const id of ['x'.repeat(200), 'a/b'.repeat(60)]) {
      expect(trainingExecutionName(id, 12)).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
      expect(policyJobName(id)).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    }
    const request = TrainingRunInputSchema.parse({ base: 'tiny:0', dataset: { runs: ['e1'] } });
    expect(derivedRunId(request, 'tiny:0')).toBe(derivedRunId(structuredClone(request), 'tiny:0'));
    expect(derivedRunId(request, 'tiny:0')).toMatch(/^train-tiny-0-[0-9a-f]{12}$/);
    expect(derivedRunId({ ...request, sweep: false }, 'tiny:0')).not.toBe(derivedRunId(request, 'tiny:0'));
    // The sweep the checkpoint.registered trigger starts is the one the run waits for.
    expect(checkpointSweepIdOf('tiny:run-a')).toBe(checkpointSweepId('tiny:run-a'));
  });
});

describe('dispatchTrainStep', () => {
  const newDir = tempDirs('flywheel-train-dispatch-');

  it('refuses an unknown step or a payload without a run id, naming the field; an unknown run is NotFound', async () => {
    const ports = openLocalPorts(newDir());
    try {
      const stepPorts = { ...ports, buildDataset: fakeBuildDataset([]) };
      await expect(dispatchTrainStep(stepPorts, { step: 'nope', input: { runId: 'r' } })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'step' }] });
      await expect(dispatchTrainStep(stepPorts, { step: 'build-dataset', input: {} })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'input.runId' }] });
      await expect(dispatchTrainStep(stepPorts, { step: 'build-dataset', input: { runId: 'missing' } })).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
    } finally {
      ports.close();
    }
  });

  it('prepare-train: the policy job environment per TRAINER_JOB_ENV, a checkpoint base as blob:<artifact>, nodes only where multi-node runs', async () => {
    const ports = openLocalPorts(newDir());
    try {
      const workflows = { start: async () => ({ executionId: 'x' }), describe: async () => ({}) as never, stop: async () => undefined };
      await registerCheckpoint(ports, { id: 'coder:1', model: 'coder', artifactKey: 'models/coder-1', serving: { kind: 'vllm' }, sweep: false });
      await startTrainingRun({ ...ports, workflows }, { runId: 'mn', base: 'coder:1', dataset: { runs: ['e1'] }, trainer: { steps: 5, nodes: 2, gpus: 8 } });
      const stepPorts = { ...ports, buildDataset: fakeBuildDataset([]) };
      expect(await dispatchTrainStep(stepPorts, { step: 'build-dataset', input: { runId: 'mn' } })).toEqual({ datasetId: 'mn', datasetKey: 'training/datasets/mn/manifest.json', registered: false, sweep: true });
      // The base was resolved at request time: retiring the base checkpoint later does not break the run.
      await ports.records.put({ ...(await ports.records.get('CHECKPOINT#coder:1', 'CHECKPOINT'))!, status: 'retired' });
      await expect(startTrainingRun({ ...ports, workflows }, { runId: 'late', base: 'coder:1', dataset: { runs: ['e1'] } })).rejects.toMatchObject({ issues: [{ path: 'base' }] });
      const multi = (await dispatchTrainStep({ ...stepPorts, settings: { multiNode: true } }, { step: 'prepare-train', input: { runId: 'mn' } })) as { jobName: string; nodes: number; env: Record<string, string>; resources: unknown };
      expect(multi.nodes).toBe(2);
      // Batch's ResourceRequirements per node: the run's GPUs, with their share of vCPUs and memory.
      expect(multi.resources).toEqual([
        { Type: 'GPU', Value: '8' },
        { Type: 'VCPU', Value: '32' },
        { Type: 'MEMORY', Value: String(8 * 14 * 1024) },
      ]);
      expect(multi.jobName).toBe(policyJobName('mn'));
      expect(multi.env).toEqual({
        runId: 'mn',
        datasetKey: 'training/datasets/mn/manifest.json',
        base: 'blob:models/coder-1',
        config: expect.any(String),
        outputKey: 'training/runs/mn/checkpoint',
        metricsKey: 'training/runs/mn/metrics.jsonl',
        stateKey: 'training/runs/mn/state',
      });
      expect(JSON.parse(multi.env.config!)).toMatchObject({ steps: 5, nodes: 2, gpus: 8 });
      expect(Object.keys(multi.env).sort()).toEqual(Object.keys(TRAINER_JOB_ENV).sort());
      expect((await dispatchTrainStep({ ...stepPorts, settings: { multiNode: false } }, { step: 'prepare-train', input: { runId: 'mn' } })) as { nodes: number }).toMatchObject({ nodes: 1 });
      const run = trainingRunRecord.decode((await ports.records.get('TRAINRUN#mn', 'RUN'))!);
      expect(run).toMatchObject({ status: 'training', lastHeartbeatAt: expect.any(String) });
      // The trainer ended without a checkpoint folder: a failure of its own name, not a retry.
      await expect(dispatchTrainStep(stepPorts, { step: 'register-checkpoint', input: { runId: 'mn' } })).rejects.toMatchObject({ name: 'Flywheel.TrainingOutputMissing' });
      // With its folder it registers under the base resolved at request time, retired since.
      await ports.blobs.put('training/runs/mn/checkpoint/config.json', '{}');
      const registeredStep = { ...stepPorts, settings: { codeVersion: 'sha-x', trainerImage: '123.dkr.ecr/trainer:latest' } };
      expect(await dispatchTrainStep(registeredStep, { step: 'register-checkpoint', input: { runId: 'mn' } })).toEqual({ checkpointId: 'coder:mn', sweep: true });
      const checkpoint = await findCheckpoint(ports.records, 'coder:mn');
      expect(checkpoint).toMatchObject({ model: 'coder', parent: 'coder:1', metadata: { lineage: { codeVersion: 'sha-x', trainerImage: '123.dkr.ecr/trainer:latest' } } });
      // A resumed run with its checkpoint registered answers `registered` (the workflow skips to its sweep).
      expect(await dispatchTrainStep(stepPorts, { step: 'build-dataset', input: { runId: 'mn' } })).toMatchObject({ registered: true, sweep: true });

      // compare-incumbent reads only a sweep that succeeded with every cell scored.
      const sweepId = checkpointSweepIdOf('coder:mn');
      const now = '2026-12-03T10:00:00.000Z';
      const comparison = (suite: string, verdict: 'better' | 'not-scored') =>
        comparisonRecord.encode({ kind: 'sweep-comparison', sweepId, checkpoint: 'coder:mn', suite, mode: 'strict', incumbent: 'coder:1', score: 0.6, incumbentScore: 0.4, difference: 0.2, ci: { low: 0.1, high: 0.3 }, paired: true, n: 50, verdict });
      const sweep = (status: 'partial' | 'succeeded') =>
        sweepRecord.encode({ kind: 'sweep', sweepId, trigger: 'checkpoint', requestedAt: now, checkpoints: ['coder:mn'], suites: [], modes: ['strict'], attemptsPerTask: 1, status, validatedAt: now, finishedAt: now });
      const compare = async () => ({
        out: await dispatchTrainStep(stepPorts, { step: 'compare-incumbent', input: { runId: 'mn' } }),
        comparison: trainingRunRecord.decode((await ports.records.get('TRAINRUN#mn', 'RUN'))!).comparison,
      });
      await ports.records.put(comparison('suite-a', 'better'));
      await ports.records.put(sweep('partial'));
      expect(await compare()).toMatchObject({ out: { better: false, propose: false }, comparison: { compared: false, reason: `sweep ${sweepId} is partial` } });
      await ports.records.put(sweep('succeeded'));
      await ports.records.put(comparison('suite-b', 'not-scored'));
      expect(await compare()).toMatchObject({ out: { better: false }, comparison: { compared: false, notScored: 1, reason: "1 of the checkpoint's cells were not scored" } });
      await ports.records.delete(comparison('suite-b', 'not-scored').pk as string, comparison('suite-b', 'not-scored').sk as string);
      expect(await compare()).toMatchObject({ out: { better: true, propose: true }, comparison: { compared: true, improvements: 1 } });
      // A store error is not "no sweep": it fails the step (the state machine retries it).
      const broken = { ...stepPorts, records: { ...ports.records, get: ports.records.get.bind(ports.records), put: ports.records.put.bind(ports.records), query: async () => Promise.reject(new Error('store down')) } };
      await expect(dispatchTrainStep(broken as never, { step: 'compare-incumbent', input: { runId: 'mn' } })).rejects.toThrow('store down');
      // A malformed run record fails where it is read, naming the field.
      await ports.records.put({ pk: 'TRAINRUN#bad', sk: 'RUN', runId: 'bad', status: 'sleeping' });
      await expect(dispatchTrainStep(stepPorts, { step: 'build-dataset', input: { runId: 'bad' } })).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord' });
    } finally {
      ports.close();
    }
  });
});
