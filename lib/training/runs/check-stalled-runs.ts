import type { Notice } from '../../people/notify.ts';
import { resolveOpenNotice } from '../../people/notices/notice-store.ts';
import type { EventsPort } from '../../ports/events.ts';
import type { JobDescription, JobStatus, JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import { ExecutionNotFoundError } from '../../ports/workflow-errors.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { trainingRunRecord } from '../record-codecs.ts';
import { trainingRunRecordKeys } from '../record-keys.ts';
import { TERMINAL_TRAINING_RUN_STATUSES, TRAINING_RUN_STATUSES, type TrainingRun, type TrainingRunStatus } from '../schemas.ts';
import { TRAINING_RUN_FINISHED, TRAINING_RUN_STALLED } from './events.ts';
import { heartbeatOf, readTrainerHeartbeat } from './read-training-curves.ts';
import { TrainingRunErrorNames } from './run-errors.ts';
import { cancelRunJobs } from './run-job.ts';
import { policyJobName, trainingExecutionName } from './run-names.ts';
import { SAME, updateRun } from './run-store.ts';

/**
 * The dedup key of a training run's stall notice (the heartbeats' own `stall:<runKind>:<runId>`): one notice per stall,
 * resolved when the trainer beats again or the run ends.
 */
export const trainingStallKey = (runId: string): string => `stall:training:${runId}`;

/** The stall check Lambda's variable naming the GPU job queue (the trainer's jobs: waiting ones are not stalls). */
export const STALL_CHECK_JOB_QUEUE_ENV = 'FLYWHEEL_TRAIN_JOB_QUEUE';
/** A job in these has not started: its run waits for capacity. */
const WAITING: readonly JobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING'];
/** A `queued` run whose execution never started (a lost start) is failed after this long. */
export const LOST_START_MINUTES = 10;

/** What one check found. */
export interface StallCheck {
  /** Runs in `training` looked at. */
  checked: number;
  /** Runs whose stall people were told of now (each stall once). */
  stalled: string[];
  /** Runs found non-terminal with no running execution, failed now (each told once). */
  orphaned: string[];
}

async function runsOf(ports: Pick<Ports, 'records'>, status: TrainingRunStatus): Promise<TrainingRun[]> {
  const runs: TrainingRun[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi2', partition: trainingRunRecordKeys.byStatus(status), limit: 1000, ...(cursor ? { cursor } : {}) });
    runs.push(...page.items.map((i) => trainingRunRecord.decode(i)));
    cursor = page.cursor;
  } while (cursor);
  return runs;
}

const latest = (...times: Array<string | undefined>): string | undefined =>
  times.filter((t): t is string => t !== undefined && !Number.isNaN(Date.parse(t))).sort((a, b) => Date.parse(b) - Date.parse(a))[0];

type CheckPorts = Pick<Ports, 'records' | 'blobs' | 'now'> & { events?: EventsPort | undefined; jobs?: JobsPort | undefined; workflows?: WorkflowsPort | undefined };

/**
 * The scheduled watch over training runs (the local runtime every minute, on AWS a scheduled Lambda):
 *
 * - Heartbeats: for every run in `training`, the trainer's newest beat (its small `heartbeat.json`, else its newest
 *   metrics line) goes on the record (step, time). The run's heartbeat is the latest of that beat, the record's
 *   `lastHeartbeatAt` (prepare-train sets it when a job is submitted, a resume included) and the job's start. Older
 *   than its request's `stallMinutes` is a stall, unless its job still waits for capacity (SUBMITTED…STARTING, when
 *   `jobs` is given). People are told once per stall: `stallNotifiedAt` is written before the notice, and only a
 *   heartbeat after it makes a later stall news again.
 * - Orphans (with `workflows`): every non-terminal run's execution is described; one that is not RUNNING (or missing,
 *   for a `queued` run older than `LOST_START_MINUTES`) leaves the run stuck, so the run is `failed` here with one
 *   notice (the same id as RecordFailure's, so a run told of there is not told again).
 *
 * Notices go through `raiseNotice` (`noticeNotifier(ports, 'training')`): a stall is a `stall` notice under
 * `trainingStallKey` (resolved here when a fresh beat arrives), an orphan a `failure` with a resume button. The
 * people heartbeat watch (`lib/people/heartbeats/`) leaves training runs to this check: the trainer's own
 * heartbeat.json is the better signal, and capacity waits are not stalls.
 *
 * @example
 * const { stalled, orphaned } = await checkStalledRuns({ ...ports, jobs, workflows }, noticeNotifier(ports, 'training'));
 */
export async function checkStalledRuns(ports: CheckPorts, notify: (notice: Notice) => Promise<unknown>): Promise<StallCheck> {
  const runs = await runsOf(ports, 'training');
  const stalled: string[] = [];
  // The newest job of each name counts.
  const jobs = new Map<string, JobDescription>();
  if (ports.jobs && runs.length > 0) for (const job of (await ports.jobs.list({ category: 'training', pool: 'gpu' })).reverse()) jobs.set(job.name, job);
  for (const run of runs) {
    const beat = await readTrainerHeartbeat(ports, run.runId);
    const beatAt = beat ? heartbeatOf(beat).lastHeartbeatAt : undefined;
    const job = jobs.get(policyJobName(run.runId));
    // Waiting for capacity (fair share, no GPU free) is not a stall, whatever an earlier attempt wrote.
    if (job && WAITING.includes(job.status)) continue;
    const started = job?.startedAt !== undefined ? new Date(job.startedAt).toISOString() : undefined;
    const heartbeat = latest(beatAt, run.lastHeartbeatAt, started) ?? run.updatedAt;
    const now = ports.now();
    const silentMs = now.getTime() - Date.parse(heartbeat);
    const stall = silentMs > run.request.stallMinutes * 60_000;
    let told = false;
    const updated = await updateRun(ports, run.runId, (r) => {
      told = false;
      if (r.status !== 'training') return SAME;
      const beatNewer = beatAt !== undefined && !(r.lastHeartbeatAt && Date.parse(r.lastHeartbeatAt) >= Date.parse(beatAt));
      const fresh = beat !== undefined && (r.step !== beat.step || beatNewer);
      const tell = stall && !(r.stallNotifiedAt && Date.parse(r.stallNotifiedAt) >= Date.parse(heartbeat));
      if (!fresh && !tell) return SAME;
      told = tell;
      return { ...r, ...(fresh ? { step: beat.step, ...(beatNewer ? { lastHeartbeatAt: beatAt } : {}) } : {}), ...(tell ? { stallNotifiedAt: now.toISOString() } : {}) };
    });
    // A fresh beat after a reported stall: the stall has cleared.
    if (!told && updated.stallNotifiedAt && updated.lastHeartbeatAt && Date.parse(updated.lastHeartbeatAt) > Date.parse(updated.stallNotifiedAt)) {
      await resolveOpenNotice(ports.records, trainingStallKey(run.runId), { by: 'training', outcome: `Heartbeats resumed (step ${updated.step ?? '?'}).` }, ports.now());
    }
    if (!told) continue;
    stalled.push(run.runId);
    const minutes = Math.floor(silentMs / 60_000);
    const id = `${TRAINING_RUN_STALLED}:${run.runId}:${heartbeat}`;
    await ports.events?.publish([{ type: TRAINING_RUN_STALLED, id, detail: { runId: run.runId, lastHeartbeatAt: heartbeat, ...(updated.step !== undefined ? { step: updated.step } : {}), minutes } }]);
    await notify({
      id: trainingStallKey(run.runId),
      kind: 'stall',
      link: `/training/${encodeURIComponent(run.runId)}`,
      source: { capability: 'training', runKind: 'training', runId: run.runId },
      severity: 'warning',
      title: `Training run ${run.runId} stalled: no heartbeat for ${minutes} min`,
      text: `${beat ? `Last step ${beat.step}; last heartbeat ${heartbeat}.` : `No step yet; waiting since ${heartbeat}.`} Look at its job's logs; \`flywheel train stop ${run.runId}\` then \`flywheel train resume ${run.runId}\` continues it from its last saved state.`,
      fields: { run: run.runId, stallMinutes: run.request.stallMinutes, ...(updated.jobId ? { job: updated.jobId } : {}) },
    });
  }
  const orphaned = ports.workflows ? await failOrphans({ ...ports, workflows: ports.workflows }, notify) : [];
  return { checked: runs.length, stalled, orphaned };
}

/** Why a non-terminal run has no running execution, or undefined when it has one (or may yet get one). */
async function orphanReason(ports: CheckPorts & { workflows: WorkflowsPort }, run: TrainingRun): Promise<string | undefined> {
  const now = ports.now().getTime();
  // The execution of the run's current start (a resume writes `resumes` before it starts `<runId>-r<n>`).
  const current = run.executionId?.endsWith(`:${trainingExecutionName(run.runId, run.resumes ?? 0)}`) ? run.executionId : undefined;
  if (!current) {
    const waited = now - Date.parse(run.updatedAt);
    return run.status === 'queued' && waited > LOST_START_MINUTES * 60_000 ? `its execution was never started (queued for ${Math.floor(waited / 60_000)} min)` : undefined;
  }
  try {
    const execution = await ports.workflows.describe(current);
    return execution.status === 'RUNNING' ? undefined : `its execution ${current} is ${execution.status}`;
  } catch (error) {
    if (!(error instanceof ExecutionNotFoundError)) throw error;
    return `its execution ${current} does not exist`;
  }
}

async function failOrphans(ports: CheckPorts & { workflows: WorkflowsPort }, notify: (notice: Notice) => Promise<unknown>): Promise<string[]> {
  const orphaned: string[] = [];
  for (const status of TRAINING_RUN_STATUSES.filter((s) => !TERMINAL_TRAINING_RUN_STATUSES.includes(s))) {
    for (const run of await runsOf(ports, status)) {
      const reason = await orphanReason(ports, run);
      if (!reason) continue;
      const error = { error: TrainingRunErrorNames.orphaned, cause: `training run ${run.runId} was ${run.status} but ${reason}` };
      let failed = false;
      const updated = await updateRun(ports, run.runId, (r) => {
        // Only the run as it was judged: a step or a resume that landed meanwhile wins.
        failed = r.status === run.status && r.executionId === run.executionId && (r.resumes ?? 0) === (run.resumes ?? 0);
        return failed ? { ...r, status: 'failed', error, endedAt: ports.now().toISOString() } : SAME;
      });
      if (!failed) continue;
      orphaned.push(run.runId);
      // Its job, if one still runs, trains for no one now.
      if (ports.jobs) await cancelRunJobs(ports.jobs, updated, error.cause).catch(() => undefined);
      // RecordFailure's id: one failure, one notice, whichever of the two saw it first.
      const id = `${TRAINING_RUN_FINISHED}:${run.runId}:failed:${updated.resumes ?? 0}`;
      await ports.events?.publish([{ type: TRAINING_RUN_FINISHED, id, detail: { runId: run.runId, status: 'failed', error: error.error } }]);
      await notify({
        id,
        kind: 'failure',
        link: `/training/${encodeURIComponent(run.runId)}`,
        source: { capability: 'training', runKind: 'training', runId: run.runId },
        actions: [{ id: 'resume', label: 'Resume the run', style: 'primary', operation: { kind: 'resume-training-run', runId: run.runId } }],
        severity: 'alert',
        title: `Training run ${run.runId} failed: ${error.error}`,
        text: `${error.cause}.\nResume it with \`flywheel train resume ${run.runId}\` (the trainer continues from its last saved state).`,
        fields: { run: run.runId, ...(updated.step !== undefined ? { step: updated.step } : {}), ...(updated.executionId ? { execution: updated.executionId } : {}) },
      });
    }
  }
  return orphaned;
}
