/**
 * The training workflow run whole by the local runtime's pieces (the definition the CDK app synthesizes, the local
 * workflows and jobs drivers) with a FAKE policy trainer: a run end to end (dataset → job → checkpoint with lineage →
 * its sweep → compared → A/B test proposed), its status in step with each state; stop mid-train (job cancelled,
 * status stopped) and resume (from the trainer's state); a failed job (failed, people told once); two runs at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findCheckpoint } from '../../lib/registry/get-checkpoint.ts';
import { CHECKPOINT_REGISTERED } from '../../lib/registry/register-checkpoint.ts';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { EXPERIMENT_PROPOSED, getTrainingRun, readTrainingCurves, resumeTrainingRun, startTrainingRun, stopTrainingRun, TRAINING_RUN_FINISHED } from '../../lib/training/runs/training-runs.ts';
import { policyJobName } from '../../lib/training/runs/run-names.ts';
import { trainingRunKeys } from '../../lib/training/schemas.ts';
import { TRAIN_STATES } from '../../lib/training/workflow/train.asl.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';
import { openTrainFixture, type TrainFixture } from './support/train-workflow-fixture.ts';

const newDir = tempDirs('flywheel-train-');
let fx: TrainFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const request = (runId: string, extra: Record<string, unknown> = {}) => ({ runId, base: 'tiny:0', dataset: { runs: ['eval-1'] }, trainer: { steps: 4 }, ...extra });

describe('the training workflow, locally, with a fake trainer', () => {
  it('runs a whole run: dataset, policy job, checkpoint with lineage, its sweep, the comparison, an A/B test proposed', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    await f.control('run-a', { holdAtStep: 2 });
    const { run, created } = await startTrainingRun(f.ports, request('run-a'), 'alice');
    expect(created).toBe(true);
    expect(run).toMatchObject({ runId: 'run-a', status: 'queued', createdBy: 'alice', resumes: 0 });
    expect(run.executionId).toMatch(/:train-policy:run-a$/);
    // The trainer holds at step 2: the run is `training`, its job a training-share job on the GPU pool.
    const training = await f.waitStatus('run-a', 'training');
    expect(training).toMatchObject({ datasetId: 'run-a', datasetKey: 'training/datasets/run-a/manifest.json' });
    await waitFor(async () => ((await readTrainingCurves(f.ports, 'run-a')).length === 2 ? true : undefined), { what: 'two metrics lines' });
    const [job] = (await f.ports.jobs!.list({ category: 'training', status: 'RUNNING' })).filter((j) => j.name === policyJobName('run-a'));
    expect(job).toMatchObject({ pool: 'gpu', category: 'training', definition: 'fake-trainer' });
    await f.release('run-a');
    // Registered, its sweep started by the trigger (played here): the run waits for it, `evaluating`.
    const evaluating = await f.waitStatus('run-a', 'evaluating');
    const checkpointId = 'tiny:run-a';
    expect(evaluating).toMatchObject({ checkpointId, artifactKey: trainingRunKeys('run-a').checkpoint, sweepId: checkpointSweepId(checkpointId), step: 4, jobId: job!.jobId });
    const checkpoint = await findCheckpoint(f.ports.records, checkpointId);
    expect(checkpoint).toMatchObject({ model: 'tiny', trainingRun: 'run-a', artifactKey: 'training/runs/run-a/checkpoint', serving: { kind: 'vllm' } });
    expect(checkpoint!.metadata.lineage).toMatchObject({
      trainingRun: 'run-a',
      base: 'tiny:0',
      datasetId: 'run-a',
      decisions: ['dec-00000000000000000001'],
      decisionCount: 1,
      rewardSpecs: { 'suite-a': { kind: 'tests' } },
      codeVersion: 'test-sha-1',
      trainerImage: 'local:batch-images/trainer',
      steps: 4,
    });
    expect(f.ports.events.recent({ type: CHECKPOINT_REGISTERED }).map((e) => e.detail)).toEqual([expect.objectContaining({ checkpointId, sweep: true })]);
    await f.finishSweep(evaluating.sweepId!, checkpointId, 'better');
    const done = await f.waitStatus('run-a', 'succeeded');
    expect(done.comparison).toMatchObject({ better: true, improvements: 1, regressions: 0, sweepStatus: 'succeeded' });
    expect(done.proposal).toMatchObject({ checkpointId, incumbents: ['coder:incumbent'], status: 'proposed', evidence: [expect.objectContaining({ suite: 'suite-a', incumbent: 'coder:incumbent', difference: 0.2 })] });
    expect(done.endedAt).toBeDefined();
    const proposed = f.ports.events.recent({ type: EXPERIMENT_PROPOSED });
    expect(proposed).toHaveLength(1);
    expect(proposed[0]!.detail).toMatchObject({ runId: 'run-a', checkpointId, incumbents: ['coder:incumbent'], evidence: [expect.objectContaining({ suite: 'suite-a', score: 0.6, incumbentScore: 0.4 })] });
    expect(f.notices.map((n) => n.severity)).toEqual(['info', 'info']);
    expect(f.notices[0]!.title).toMatch(/A\/B test proposed: tiny:run-a against coder:incumbent/);
    expect(f.notices[1]!.title).toMatch(/Training run run-a succeeded/);
    // Every state ran, in order; the execution succeeded.
    const execution = await f.training.workflows.waitFor(done.executionId!);
    expect(execution.status).toBe('SUCCEEDED');
    const entered = f.training.workflows.history(done.executionId!).filter((e) => e.type === 'StateEntered').map((e) => e.state);
    expect(entered.filter((s, i) => s !== entered[i - 1])).toEqual(
      expect.arrayContaining([TRAIN_STATES.buildDataset, TRAIN_STATES.prepare, TRAIN_STATES.train, TRAIN_STATES.register, TRAIN_STATES.checkSweep, TRAIN_STATES.compare, TRAIN_STATES.propose, TRAIN_STATES.finish]),
    );
    expect(entered).not.toContain(TRAIN_STATES.failure);
    expect((await readTrainingCurves(f.ports, 'run-a')).map((l) => l.step)).toEqual([1, 2, 3, 4]);
    // The same request again is the same run; nothing starts again.
    expect(await startTrainingRun(f.ports, request('run-a'), 'alice')).toMatchObject({ created: false, run: { status: 'succeeded' } });
  });

  it('stop mid-train cancels the job and stops the run; resume continues from the trainer’s state as <runId>-r1', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    await f.control('run-s', { holdAtStep: 1 });
    const { run } = await startTrainingRun(f.ports, request('run-s', { sweep: false }));
    await f.waitStatus('run-s', 'training');
    await waitFor(async () => ((await readTrainingCurves(f.ports, 'run-s')).length === 1 ? true : undefined), { what: 'the first metrics line' });
    const stopped = await stopTrainingRun(f.ports, 'run-s', 'bob');
    expect(stopped).toMatchObject({ status: 'stopped', stoppedBy: 'bob' });
    expect(await f.ports.workflows.describe(run.executionId!)).toMatchObject({ status: 'ABORTED', error: 'Flywheel.TrainingRunStopped' });
    const job = await waitFor(
      async () => {
        const [j] = (await f.ports.jobs!.list({ category: 'training' })).filter((x) => x.name === policyJobName('run-s'));
        return j?.status === 'FAILED' ? j : undefined;
      },
      { what: 'the policy job to be cancelled' },
    );
    expect(job.statusReason).toMatch(/stopped by bob/);
    // Stopping again changes nothing; nobody was told of a failure.
    expect(await stopTrainingRun(f.ports, 'run-s')).toMatchObject({ status: 'stopped', stoppedBy: 'bob' });
    expect(f.notices).toEqual([]);
    expect((await getTrainingRun(f.ports, 'run-s')).status).toBe('stopped');

    const resumed = await resumeTrainingRun(f.ports, 'run-s');
    expect(resumed).toMatchObject({ status: 'queued', resumes: 1 });
    expect(resumed.executionId).toMatch(/:train-policy:run-s-r1$/);
    expect(resumed.stoppedBy).toBeUndefined();
    const done = await f.waitStatus('run-s', 'succeeded');
    // The trainer went on after its saved step: step 1 once, then 2–4; the dataset was built once.
    expect((await readTrainingCurves(f.ports, 'run-s')).map((l) => l.step)).toEqual([1, 2, 3, 4]);
    expect(f.datasetsBuilt).toEqual(['run-s']);
    expect(done).toMatchObject({ checkpointId: 'tiny:run-s', resumes: 1 });
    expect(done.sweepId).toBeUndefined();
    await expect(resumeTrainingRun(f.ports, 'run-s')).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'status', message: 'is succeeded' }] });
  });

  it('a failed policy job fails the run: the error recorded, people told once, the execution FAILED', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    await f.control('run-f', { exitCode: 2 });
    const { run } = await startTrainingRun(f.ports, request('run-f'));
    const failed = await f.waitStatus('run-f', 'failed');
    expect(failed.error).toMatchObject({ error: 'States.TaskFailed' });
    expect(failed.endedAt).toBeDefined();
    const execution = await f.training.workflows.waitFor(run.executionId!);
    expect(execution).toMatchObject({ status: 'FAILED', error: 'Flywheel.TrainingRunFailed' });
    expect(f.notices).toHaveLength(1);
    expect(f.notices[0]).toMatchObject({ severity: 'alert', title: 'Training run run-f failed: States.TaskFailed' });
    expect(f.ports.events.recent({ type: TRAINING_RUN_FINISHED }).map((e) => e.detail)).toEqual([{ runId: 'run-f', status: 'failed', error: 'States.TaskFailed' }]);
    // Resumed after a fix, it trains.
    await f.control('run-f', {});
    await resumeTrainingRun(f.ports, 'run-f');
    await f.finishSweep(checkpointSweepId('tiny:run-f'), 'tiny:run-f', 'worse');
    const done = await f.waitStatus('run-f', 'succeeded');
    expect(done.error).toBeUndefined();
    expect(done.comparison).toMatchObject({ better: false, regressions: 1 });
    expect(done.proposal).toBeUndefined();
  });

  it('a run resumed after registration skips training and registration, and goes on with its sweep', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    const { run } = await startTrainingRun(f.ports, request('run-r'));
    const evaluating = await f.waitStatus('run-r', 'evaluating');
    await stopTrainingRun(f.ports, 'run-r', 'bob');
    const resumed = await resumeTrainingRun(f.ports, 'run-r');
    expect(resumed.executionId).toMatch(/:train-policy:run-r-r1$/);
    await waitFor(async () => (f.training.workflows.history(resumed.executionId!).some((e) => e.state === TRAIN_STATES.checkSweep) ? true : undefined), { what: 'the resumed run at its sweep' });
    expect((await getTrainingRun(f.ports, 'run-r')).status).toBe('evaluating');
    await f.finishSweep(evaluating.sweepId!, 'tiny:run-r', 'no-difference');
    const done = await f.waitStatus('run-r', 'succeeded');
    expect(done).toMatchObject({ checkpointId: 'tiny:run-r', resumes: 1, comparison: { compared: true, better: false } });
    const entered = f.training.workflows.history(resumed.executionId!).filter((e) => e.type === 'StateEntered').map((e) => e.state);
    expect(entered).toContain(TRAIN_STATES.skipToSweep);
    for (const skipped of [TRAIN_STATES.prepare, TRAIN_STATES.train, TRAIN_STATES.register]) expect(entered).not.toContain(skipped);
    // One dataset, one job, one registration.
    expect(f.datasetsBuilt).toEqual(['run-r']);
    expect((await f.ports.jobs!.list({ category: 'training' })).filter((j) => j.name === policyJobName('run-r'))).toHaveLength(1);
    expect(f.ports.events.recent({ type: CHECKPOINT_REGISTERED })).toHaveLength(1);
    expect(run.executionId).not.toBe(resumed.executionId);
  });

  it('a sweep that never appears ends the wait: the run succeeds "not compared" and people are told why', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir(), { sweepMissingSeconds: 1 });
    const f = fx;
    await startTrainingRun(f.ports, request('run-m'));
    const done = await f.waitStatus('run-m', 'succeeded');
    expect(done.comparison).toMatchObject({ sweepStatus: 'missing', compared: false, better: false, reason: expect.stringMatching(/^no sweep checkpoint-/) });
    expect(done.proposal).toBeUndefined();
    expect(f.notices).toHaveLength(1);
    expect(f.notices[0]).toMatchObject({ severity: 'info', title: expect.stringMatching(/run-m succeeded/), text: expect.stringMatching(/^Not compared with the incumbent: no sweep/) });
  });

  it('the scheduled check fails a run whose execution ended under it, once, and cancels its job', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    await f.control('run-o', { holdAtStep: 1 });
    const { run } = await startTrainingRun(f.ports, request('run-o'));
    await f.waitStatus('run-o', 'training');
    // The execution ends without its steps knowing (an operator, a lost RecordFailure).
    await f.training.workflows.stop(run.executionId!, { error: 'Operator', cause: 'stopped in the console' });
    const check = await f.training.checkStalls();
    expect(check.orphaned).toEqual(['run-o']);
    expect(await getTrainingRun(f.ports, 'run-o')).toMatchObject({ status: 'failed', error: { error: 'Flywheel.TrainingRunOrphaned', cause: expect.stringMatching(/is ABORTED/) } });
    expect((await f.training.checkStalls()).orphaned).toEqual([]);
    expect(f.notices.map((n) => [n.severity, n.title])).toEqual([['alert', 'Training run run-o failed: Flywheel.TrainingRunOrphaned']]);
    await waitFor(
      async () => ((await f.ports.jobs!.list({ category: 'training' })).find((j) => j.name === policyJobName('run-o'))?.status === 'FAILED' ? true : undefined),
      { what: 'the orphaned run’s job to end' },
    );
  });

  it('runs two runs at once, each its own job in the training share', { timeout: 120_000 }, async () => {
    fx = openTrainFixture(newDir());
    const f = fx;
    for (const id of ['run-p1', 'run-p2']) await f.control(id, { holdAtStep: 1 });
    await Promise.all(['run-p1', 'run-p2'].map((id) => startTrainingRun(f.ports, request(id, { sweep: false }))));
    // Both hold at their first step at the same time: both jobs run together.
    await waitFor(async () => ((await f.ports.jobs!.list({ category: 'training', status: 'RUNNING' })).length === 2 ? true : undefined), { what: 'two policy jobs running at once' });
    for (const id of ['run-p1', 'run-p2']) await waitFor(async () => ((await readTrainingCurves(f.ports, id)).length === 1 ? true : undefined), { what: `${id} at step 1` });
    for (const id of ['run-p1', 'run-p2']) await f.release(id);
    const done = await Promise.all(['run-p1', 'run-p2'].map((id) => f.waitStatus(id, 'succeeded')));
    expect(done.map((r) => r.checkpointId)).toEqual(['tiny:run-p1', 'tiny:run-p2']);
  });
});
