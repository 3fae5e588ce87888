/**
 * The training runs' use cases on the local records store with a recording workflows port: the request validated
 * (each field named), the base checked, idempotent on the run id (derived from the request when absent), listing by
 * status, stop (execution stopped, status stopped, harmless twice), resume (`<runId>-r<n>`), the curves, and the
 * heartbeat watch (one notice per stall; a new heartbeat makes a later stall news again).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { Notice } from '../../lib/people/notify.ts';
import type { JobDescription, JobsPort } from '../../lib/ports/jobs.ts';
import { ExecutionNotFoundError } from '../../lib/ports/workflow-errors.ts';
import type { ExecutionDescription, ExecutionStatus, StartOptions, WorkflowsPort } from '../../lib/ports/workflows.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { trainingRunRecord } from '../../lib/training/record-codecs.ts';
import { policyJobName } from '../../lib/training/runs/run-names.ts';
import {
  checkStalledRuns,
  getTrainingRun,
  listTrainingRuns,
  readTrainingCurves,
  resumeTrainingRun,
  startTrainingRun,
  stopTrainingRun,
  TRAINING_RUN_FINISHED,
  TRAINING_RUN_STALLED,
} from '../../lib/training/runs/training-runs.ts';
import { CURVE_MAX_POINTS, downsample, readTrainerHeartbeat } from '../../lib/training/runs/read-training-curves.ts';
import { trainingRunKeys, type TrainingRun } from '../../lib/training/schemas.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const newDir = tempDirs('flywheel-train-runs-');

/** Starts nothing: records what was asked; `statuses` says how each execution is described (default RUNNING). */
function recordingWorkflows() {
  const started: Array<{ workflow: string } & StartOptions> = [];
  const stopped: string[] = [];
  const statuses = new Map<string, ExecutionStatus | 'missing'>();
  const workflows: WorkflowsPort = {
    start: async (workflow, options) => (started.push({ workflow, ...options }), { executionId: `arn:exec:${workflow}:${options.name}` }),
    describe: async (executionId) => {
      const status = statuses.get(executionId) ?? 'RUNNING';
      if (status === 'missing') throw new ExecutionNotFoundError(executionId);
      return { executionId, name: executionId.split(':').at(-1)!, workflow: 'train-policy', status, input: {}, startedAt: Date.parse('2026-12-03T10:00:00Z') } satisfies ExecutionDescription;
    },
    stop: async (executionId) => void stopped.push(executionId),
  };
  return { workflows, started, stopped, statuses };
}

let ports: LocalPorts | undefined;
afterEach(() => {
  ports?.close();
  ports = undefined;
});

function open(at = new Date('2026-12-03T10:00:00Z')) {
  let now = at;
  const local = openLocalPorts(newDir(), { now: () => now });
  ports = local;
  const wf = recordingWorkflows();
  return { p: { ...local, workflows: wf.workflows }, wf, setNow: (d: Date) => (now = d) };
}

describe('startTrainingRun', () => {
  it('validates the request, naming each field', async () => {
    const { p, wf } = open();
    await expect(startTrainingRun(p, { base: '', dataset: { runs: 'x' }, trainer: { steps: 0, extra: 1 } })).rejects.toMatchObject({
      name: 'Flywheel.ValidationError',
      issues: expect.arrayContaining([expect.objectContaining({ path: 'base' }), expect.objectContaining({ path: 'dataset.runs' }), expect.objectContaining({ path: 'trainer.steps' })]),
    });
    await expect(startTrainingRun(p, { base: 'no-such:ckpt', dataset: { runs: ['eval-1'] } })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'base', message: 'tiny:<seed> or a registered checkpoint id' }] });
    await registerCheckpoint(p, { id: 'coder:ep', model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@https://m.example.com/v1' }, sweep: false });
    await expect(startTrainingRun(p, { base: 'coder:ep', dataset: { runs: ['eval-1'] } })).rejects.toMatchObject({ issues: [{ path: 'base', message: 'checkpoint without artifactKey' }] });
    expect(wf.started).toEqual([]);
    await expect(startTrainingRun({ ...p, workflows: undefined }, { base: 'tiny:0', dataset: { runs: ['eval-1'] } })).rejects.toMatchObject({ name: 'Flywheel.ConfigurationError' });
  });

  it('is idempotent on the run id (derived from the request when absent); another request under the id is refused', async () => {
    const { p, wf } = open();
    await registerCheckpoint(p, { id: 'coder:1', model: 'coder', artifactKey: 'models/coder-1', serving: { kind: 'vllm' }, sweep: false });
    const input = { base: 'coder:1', dataset: { runs: ['eval-1'] }, trainer: { steps: 3 } };
    const first = await startTrainingRun(p, input, 'alice');
    expect(first.created).toBe(true);
    expect(first.run.runId).toMatch(/^train-coder-1-[0-9a-f]{12}$/);
    expect(first.run).toMatchObject({ status: 'queued', createdBy: 'alice', request: { base: 'coder:1', runId: first.run.runId, sweep: true, trainer: { steps: 3, batchSize: 8 } } });
    const again = await startTrainingRun(p, input, 'alice');
    expect(again).toMatchObject({ created: false, run: { runId: first.run.runId, executionId: first.run.executionId } });
    // Both calls asked for the one execution, named after the run, with the run id as input.
    expect(wf.started.map((s) => [s.workflow, s.name, s.input])).toEqual([
      ['train-policy', first.run.runId, { runId: first.run.runId }],
      ['train-policy', first.run.runId, { runId: first.run.runId }],
    ]);
    await expect(startTrainingRun(p, { ...input, runId: first.run.runId, trainer: { steps: 4 } })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'runId' }] });
    const other = await startTrainingRun(p, { ...input, runId: 'named-run' });
    expect(other.run.runId).toBe('named-run');
    expect((await listTrainingRuns(p)).items.map((r) => r.runId).sort()).toEqual(['named-run', first.run.runId].sort());
    expect((await listTrainingRuns(p, { status: 'queued', limit: 1 })).cursor).toBeDefined();
    expect((await listTrainingRuns(p, { status: 'training' })).items).toEqual([]);
    await expect(getTrainingRun(p, 'nope')).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
  });
});

describe('startTrainingRun refuses', () => {
  it('an empty dataset, a run id with / or ending like a resume, a checkpoint id already registered; keeps the resolved base', async () => {
    const { p, wf } = open();
    await expect(startTrainingRun(p, { base: 'tiny:0', dataset: {} })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'dataset' }] });
    await expect(startTrainingRun(p, { base: 'tiny:0', dataset: { decisions: 'none' } })).rejects.toMatchObject({ issues: [{ path: 'dataset' }] });
    // `x-r1` would be the execution of run `x`'s first resume.
    for (const runId of ['x-r1', 'org/run', '-lead', 'a'.repeat(73)]) {
      await expect(startTrainingRun(p, { runId, base: 'tiny:0', dataset: { runs: ['e'] } })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'runId' }] });
    }
    await registerCheckpoint(p, { id: 'coder:1', model: 'coder', artifactKey: 'models/coder-1', serving: { kind: 'vllm' }, sweep: false });
    await expect(startTrainingRun(p, { runId: 'c1', base: 'tiny:0', dataset: { runs: ['e'] }, checkpointId: 'coder:1' })).rejects.toMatchObject({ issues: [{ path: 'checkpointId', message: 'already registered: pick another checkpointId' }] });
    // The default id (`<model>:<runId>`) too, unless this run registered it (a retry after registration).
    await registerCheckpoint(p, { id: 'tiny:c2', model: 'tiny', artifactKey: 'x', serving: { kind: 'vllm' }, sweep: false });
    await expect(startTrainingRun(p, { runId: 'c2', base: 'tiny:0', dataset: { runs: ['e'] } })).rejects.toMatchObject({ issues: [{ path: 'checkpointId' }] });
    await registerCheckpoint(p, { id: 'tiny:c3', model: 'tiny', artifactKey: 'x', serving: { kind: 'vllm' }, sweep: false, trainingRun: 'c3' });
    expect((await startTrainingRun(p, { runId: 'c3', base: 'tiny:0', dataset: { runs: ['e'] } })).created).toBe(true);
    expect(wf.started.map((x) => x.name)).toEqual(['c3']);
    const { run } = await startTrainingRun(p, { runId: 'c4', base: 'coder:1', dataset: { runs: ['e'] } });
    expect(run.resolvedBase).toEqual({ trainerBase: 'blob:models/coder-1', model: 'coder', parent: 'coder:1' });
    expect((await getTrainingRun(p, 'c4')).resolvedBase).toEqual(run.resolvedBase);
  });
});

describe('stop, resume and curves', () => {
  it('stops a run (its execution too), harmlessly twice; resumes it as <runId>-r1; an ended run is refused', async () => {
    const { p, wf } = open();
    const { run } = await startTrainingRun(p, { runId: 'r1', base: 'tiny:3', dataset: { runs: ['eval-1'] } });
    const stopped = await stopTrainingRun(p, 'r1', 'bob');
    expect(stopped).toMatchObject({ status: 'stopped', stoppedBy: 'bob', endedAt: '2026-12-03T10:00:00.000Z' });
    expect(wf.stopped).toEqual([run.executionId]);
    expect(await stopTrainingRun(p, 'r1', 'carol')).toMatchObject({ status: 'stopped', stoppedBy: 'bob' });
    expect(wf.stopped).toHaveLength(1);
    const resumed = await resumeTrainingRun(p, 'r1');
    expect(resumed).toMatchObject({ status: 'queued', resumes: 1, executionId: 'arn:exec:train-policy:r1-r1' });
    expect(resumed.endedAt).toBeUndefined();
    expect(wf.started.at(-1)).toMatchObject({ name: 'r1-r1', input: { runId: 'r1', resume: 1 } });
    // A resume whose start was lost (still queued) starts the same execution again.
    expect(await resumeTrainingRun(p, 'r1')).toMatchObject({ resumes: 1, executionId: 'arn:exec:train-policy:r1-r1' });
    await expect(resumeTrainingRun(p, 'nope')).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
    await startTrainingRun(p, { runId: 'r2', base: 'tiny:3', dataset: { runs: ['eval-1'] } });
    await expect(resumeTrainingRun(p, 'r2')).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'status', message: 'is queued' }] });
  });

  it('reads the curves: one line per step, lines that are not metrics skipped', async () => {
    const { p } = open();
    expect(await readTrainingCurves(p, 'none')).toEqual([]);
    await p.blobs.put(trainingRunKeys('c1').metrics, '{"step":0,"at":"2026-12-03T10:00:00Z","loss":2.5,"tokens":10,"decision":0.3}\nnot json\n{"step":"x"}\n{"step":1,"at":"2026-12-03T10:00:01Z","loss":2.1}\n{"step":2,"at":');
    expect(await readTrainingCurves(p, 'c1')).toEqual([
      { step: 0, at: '2026-12-03T10:00:00Z', loss: 2.5, tokens: 10, decision: 0.3 },
      { step: 1, at: '2026-12-03T10:00:01Z', loss: 2.1 },
    ]);
  });

  it('thins a long run to at most 2,000 evenly spaced lines, the first and last kept', async () => {
    const { p } = open();
    const text = Array.from({ length: 10_001 }, (_, i) => JSON.stringify({ step: i, at: '2026-12-03T10:00:00Z', loss: 1 / (i + 1) })).join('\n');
    await p.blobs.put(trainingRunKeys('long').metrics, text);
    const lines = await readTrainingCurves(p, 'long');
    expect(lines).toHaveLength(CURVE_MAX_POINTS);
    expect(lines[0]!.step).toBe(0);
    expect(lines.at(-1)!.step).toBe(10_000);
    const gaps = new Set(lines.slice(1).map((l, i) => l.step - lines[i]!.step));
    expect(Math.max(...gaps) - Math.min(...gaps)).toBeLessThanOrEqual(1);
    expect(downsample([1, 2, 3], 5)).toEqual([1, 2, 3]);
    expect(await readTrainingCurves(p, 'long', { maxPoints: 3 })).toMatchObject([{ step: 0 }, { step: 5000 }, { step: 10_000 }]);
  });
});

describe('checkStalledRuns', () => {
  async function trainingRun(p: LocalPorts, runId: string, stallMinutes: number): Promise<void> {
    const { run } = await startTrainingRun({ ...p, workflows: recordingWorkflows().workflows }, { runId, base: 'tiny:0', dataset: { runs: ['eval-1'] }, stallMinutes });
    const started: TrainingRun = { ...run, status: 'training', lastHeartbeatAt: '2026-12-03T10:00:00.000Z', revision: (run.revision ?? 0) + 1 };
    await p.records.put(trainingRunRecord.encode(started));
  }
  const line = (step: number, at: string) => `${JSON.stringify({ step, at, loss: 1 })}\n`;

  it('tells people once per stall, keeps the heartbeat on the record, and a fresh heartbeat makes a later stall news', async () => {
    const { p, setNow } = open();
    const notices: Notice[] = [];
    const notify = async (n: Notice) => void notices.push(n);
    await trainingRun(p as LocalPorts, 'h1', 10);
    await trainingRun(p as LocalPorts, 'h2', 60);
    await p.blobs.put(trainingRunKeys('h1').metrics, line(0, '2026-12-03T10:01:00Z') + line(1, '2026-12-03T10:02:00Z'));
    setNow(new Date('2026-12-03T10:05:00Z'));
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 2, stalled: [], orphaned: [] });
    expect(await getTrainingRun(p, 'h1')).toMatchObject({ step: 1, lastHeartbeatAt: '2026-12-03T10:02:00.000Z' });
    // 13 min after h1's last step (stallMinutes 10): one notice, however often the watch runs; h2 waits an hour.
    setNow(new Date('2026-12-03T10:15:00Z'));
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 2, stalled: ['h1'], orphaned: [] });
    setNow(new Date('2026-12-03T10:25:00Z'));
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 2, stalled: [], orphaned: [] });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ severity: 'warning', title: 'Training run h1 stalled: no heartbeat for 13 min', fields: { run: 'h1', stallMinutes: 10 } });
    expect((await getTrainingRun(p, 'h1')).stallNotifiedAt).toBe('2026-12-03T10:15:00.000Z');
    expect(p.events.recent({ type: TRAINING_RUN_STALLED })).toHaveLength(1);
    // The trainer beats again, then stalls again: a new stall, a new notice. h2 (no step yet) stalls after its hour.
    await p.blobs.put(trainingRunKeys('h1').metrics, line(0, '2026-12-03T10:01:00Z') + line(1, '2026-12-03T10:02:00Z') + line(2, '2026-12-03T10:26:00Z'));
    setNow(new Date('2026-12-03T10:30:00Z'));
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 2, stalled: [], orphaned: [] });
    setNow(new Date('2026-12-03T11:01:00Z'));
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 2, stalled: ['h1', 'h2'], orphaned: [] });
    expect(notices.map((n) => n.title)).toEqual([
      'Training run h1 stalled: no heartbeat for 13 min',
      'Training run h1 stalled: no heartbeat for 35 min',
      'Training run h2 stalled: no heartbeat for 61 min',
    ]);
    // A run that is no longer training is not watched.
    await stopTrainingRun(p, 'h1');
    expect(await checkStalledRuns(p, notify)).toEqual({ checked: 1, stalled: [], orphaned: [] });
  });

  it('with the jobs port: a job waiting for capacity is not a stall; before the first step it counts from the job’s start', async () => {
    const { p, setNow } = open();
    const notices: Notice[] = [];
    await trainingRun(p as LocalPorts, 'q1', 10);
    let job: JobDescription = { jobId: 'j1', name: policyJobName('q1'), definition: 'trainer-policy', category: 'training', pool: 'gpu', status: 'RUNNABLE', createdAt: Date.parse('2026-12-03T10:00:00Z') };
    const jobs = { list: async () => [job] } as unknown as JobsPort;
    setNow(new Date('2026-12-03T12:00:00Z'));
    expect(await checkStalledRuns({ ...p, jobs }, async (n) => void notices.push(n))).toEqual({ checked: 1, stalled: [], orphaned: [] });
    job = { ...job, status: 'RUNNING', startedAt: Date.parse('2026-12-03T11:55:00Z') };
    expect(await checkStalledRuns({ ...p, jobs }, async (n) => void notices.push(n))).toEqual({ checked: 1, stalled: [], orphaned: [] });
    setNow(new Date('2026-12-03T12:06:00Z'));
    expect(await checkStalledRuns({ ...p, jobs }, async (n) => void notices.push(n))).toEqual({ checked: 1, stalled: ['q1'], orphaned: [] });
    expect(notices.map((n) => n.title)).toEqual(['Training run q1 stalled: no heartbeat for 11 min']);
  });

  it('a resumed run is measured from its resume, a waiting job is never a stall, and heartbeat.json is read before the metrics', async () => {
    const { p, setNow } = open();
    const notices: Notice[] = [];
    const notify = async (n: Notice) => void notices.push(n);
    await trainingRun(p as LocalPorts, 'rs', 10);
    // Its first execution beat until 10:02, then stopped; resumed at 11:00 (prepare-train writes the heartbeat).
    await p.blobs.put(trainingRunKeys('rs').metrics, line(1, '2026-12-03T10:01:00Z') + line(2, '2026-12-03T10:02:00Z'));
    const run = await getTrainingRun(p, 'rs');
    await p.records.put(trainingRunRecord.encode({ ...run, resumes: 1, lastHeartbeatAt: '2026-12-03T11:00:00.000Z', revision: (run.revision ?? 0) + 1 }));
    setNow(new Date('2026-12-03T11:05:00Z'));
    expect(await checkStalledRuns(p, notify)).toMatchObject({ stalled: [] });
    // The old beat does not move the heartbeat back.
    expect(await getTrainingRun(p, 'rs')).toMatchObject({ step: 2, lastHeartbeatAt: '2026-12-03T11:00:00.000Z' });
    // Its job waits for a GPU: however long, not a stall (an earlier attempt's beat notwithstanding).
    let job: JobDescription = { jobId: 'j2', name: policyJobName('rs'), definition: 'trainer-policy', category: 'training', pool: 'gpu', status: 'RUNNABLE', createdAt: Date.parse('2026-12-03T11:00:00Z') };
    const jobs = { list: async () => [job] } as unknown as JobsPort;
    setNow(new Date('2026-12-03T13:00:00Z'));
    expect(await checkStalledRuns({ ...p, jobs }, notify)).toMatchObject({ stalled: [] });
    // It starts and beats: heartbeat.json (step 3, 13:04) wins over the metrics file (step 2).
    job = { ...job, status: 'RUNNING', startedAt: Date.parse('2026-12-03T13:01:00Z') };
    await p.blobs.put(trainingRunKeys('rs').heartbeat, JSON.stringify({ step: 3, at: '2026-12-03T13:04:00Z' }));
    setNow(new Date('2026-12-03T13:10:00Z'));
    expect(await checkStalledRuns({ ...p, jobs }, notify)).toMatchObject({ stalled: [] });
    expect(await getTrainingRun(p, 'rs')).toMatchObject({ step: 3, lastHeartbeatAt: '2026-12-03T13:04:00.000Z' });
    setNow(new Date('2026-12-03T13:15:00Z'));
    expect(await checkStalledRuns({ ...p, jobs }, notify)).toMatchObject({ stalled: ['rs'] });
    // A heartbeat file that is not one falls back to the metrics.
    await p.blobs.put(trainingRunKeys('rs').heartbeat, '{"step":');
    expect(await readTrainerHeartbeat(p, 'rs')).toEqual({ step: 2, at: '2026-12-03T10:02:00Z' });
    expect(notices.map((n) => n.title)).toEqual(['Training run rs stalled: no heartbeat for 11 min']);
  });
});

describe('checkStalledRuns: runs left without a running execution', () => {
  it('fails a non-terminal run whose execution ended or is missing, or a queued one never started after 10 min; one notice each', async () => {
    const { p, wf, setNow } = open();
    const notices: Notice[] = [];
    const notify = async (n: Notice) => void notices.push(n);
    const start = async (runId: string) => (await startTrainingRun(p, { runId, base: 'tiny:0', dataset: { runs: ['e'] } })).run;
    const ended = await start('o-ended');
    const gone = await start('o-gone');
    await start('o-fine');
    const put = async (run: TrainingRun) => p.records.put(trainingRunRecord.encode({ ...run, revision: (run.revision ?? 0) + 1 }));
    await put({ ...(await getTrainingRun(p, 'o-ended')), status: 'evaluating' });
    wf.statuses.set(ended.executionId!, 'FAILED');
    wf.statuses.set(gone.executionId!, 'missing');
    // Queued with no execution (its start was lost), and queued for a resume whose execution is not started yet.
    const lost = await start('o-lost');
    const { executionId: _e, ...withoutExecution } = await getTrainingRun(p, 'o-lost');
    await put(withoutExecution);
    const resuming = await start('o-resuming');
    await put({ ...(await getTrainingRun(p, 'o-resuming')), resumes: 1 });
    wf.statuses.set(resuming.executionId!, 'ABORTED');
    expect(lost.executionId).toBeDefined();
    setNow(new Date('2026-12-03T10:05:00Z'));
    expect((await checkStalledRuns(p, notify)).orphaned.sort()).toEqual(['o-ended', 'o-gone']);
    expect(await getTrainingRun(p, 'o-ended')).toMatchObject({ status: 'failed', error: { error: 'Flywheel.TrainingRunOrphaned', cause: expect.stringContaining('is FAILED') } });
    expect((await getTrainingRun(p, 'o-gone')).error!.cause).toMatch(/does not exist/);
    setNow(new Date('2026-12-03T10:11:00Z'));
    expect((await checkStalledRuns(p, notify)).orphaned.sort()).toEqual(['o-lost', 'o-resuming']);
    expect(await checkStalledRuns(p, notify)).toMatchObject({ orphaned: [] });
    expect((await getTrainingRun(p, 'o-fine')).status).toBe('queued');
    expect(notices.map((n) => n.id).sort()).toEqual(['o-ended', 'o-gone', 'o-lost', 'o-resuming'].map((r) => `training.run.finished:${r}:failed:${r === 'o-resuming' ? 1 : 0}`).sort());
    expect(notices.every((n) => n.severity === 'alert')).toBe(true);
    expect(p.events.recent({ type: TRAINING_RUN_FINISHED })).toHaveLength(4);
  });
});
