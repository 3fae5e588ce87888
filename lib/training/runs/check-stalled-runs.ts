import type { Notice } from '../../people/notify.ts';
import type { EventsPort } from '../../ports/events.ts';
import type { JobDescription, JobStatus, JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import { trainingRunRecord } from '../record-codecs.ts';
import { trainingRunRecordKeys } from '../record-keys.ts';
import type { TrainingRun } from '../schemas.ts';
import { TRAINING_RUN_STALLED } from './events.ts';
import { heartbeatOf, lastMetricsLine } from './read-training-curves.ts';
import { policyJobName } from './run-names.ts';
import { SAME, updateRun } from './run-store.ts';

/** A job in these has not started: its run waits for capacity. */
const WAITING: readonly JobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING'];

/** What one check found. */
export interface StallCheck {
  /** Runs in `training` looked at. */
  checked: number;
  /** Runs whose stall people were told of now (each stall once). */
  stalled: string[];
}

async function trainingRuns(ports: Pick<Ports, 'records'>): Promise<TrainingRun[]> {
  const runs: TrainingRun[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi2', partition: trainingRunRecordKeys.byStatus('training'), limit: 1000, ...(cursor ? { cursor } : {}) });
    runs.push(...page.items.map((i) => trainingRunRecord.decode(i)));
    cursor = page.cursor;
  } while (cursor);
  return runs;
}

/**
 * The heartbeat watch: for every run in `training`, the trainer's newest metrics line (written every step) is its
 * heartbeat; the run record gets its step and time. A run whose heartbeat (or, before the first step, the job's start)
 * is older than its request's `stallMinutes` is a stall (a job still waiting for capacity is not, when `jobs` is given), and people are told once per stall: `stallNotifiedAt` is
 * written before the notice (a second checker finds it), and only a heartbeat after it makes a later stall news again.
 * Run by the local runtime every minute and on AWS by a scheduled Lambda.
 *
 * @example
 * const { stalled } = await checkStalledRuns(ports, (n) => notifyPeople(n, notifyOptionsFromEnv()));
 */
export async function checkStalledRuns(
  ports: Pick<Ports, 'records' | 'blobs' | 'now'> & { events?: EventsPort | undefined; jobs?: JobsPort | undefined },
  notify: (notice: Notice) => Promise<unknown>,
): Promise<StallCheck> {
  const runs = await trainingRuns(ports);
  const stalled: string[] = [];
  // With the jobs port, a run whose job still waits for capacity (fair share, no GPU free) is waiting, not stalled,
  // and before its first step it is measured from the job's start. The newest job of each name counts.
  const jobs = new Map<string, JobDescription>();
  if (ports.jobs && runs.length > 0) for (const job of (await ports.jobs.list({ category: 'training' })).reverse()) jobs.set(job.name, job);
  for (const run of runs) {
    const last = await lastMetricsLine(ports, run.runId);
    const beat = last ? heartbeatOf(last).lastHeartbeatAt : undefined;
    const job = jobs.get(policyJobName(run.runId));
    if (!beat && job && WAITING.includes(job.status)) continue;
    const started = !beat && job?.startedAt !== undefined ? new Date(job.startedAt).toISOString() : undefined;
    const heartbeat = beat ?? started ?? run.lastHeartbeatAt ?? run.updatedAt;
    const now = ports.now();
    const silentMs = now.getTime() - Date.parse(heartbeat);
    const stall = silentMs > run.request.stallMinutes * 60_000 && !(run.stallNotifiedAt && Date.parse(run.stallNotifiedAt) >= Date.parse(heartbeat));
    let told = false;
    const updated = await updateRun(ports, run.runId, (r) => {
      told = false;
      if (r.status !== 'training') return SAME;
      const fresh = last !== undefined && (r.step !== last.step || (beat !== undefined && r.lastHeartbeatAt !== beat));
      const tell = stall && !(r.stallNotifiedAt && Date.parse(r.stallNotifiedAt) >= Date.parse(heartbeat));
      if (!fresh && !tell) return SAME;
      told = tell;
      return { ...r, ...(fresh ? { step: last.step, ...(beat ? { lastHeartbeatAt: beat } : {}) } : {}), ...(tell ? { stallNotifiedAt: now.toISOString() } : {}) };
    });
    if (!told) continue;
    stalled.push(run.runId);
    const minutes = Math.floor(silentMs / 60_000);
    const id = `${TRAINING_RUN_STALLED}:${run.runId}:${heartbeat}`;
    await ports.events?.publish([{ type: TRAINING_RUN_STALLED, id, detail: { runId: run.runId, lastHeartbeatAt: heartbeat, ...(updated.step !== undefined ? { step: updated.step } : {}), minutes } }]);
    await notify({
      id,
      severity: 'warning',
      title: `Training run ${run.runId} stalled: no heartbeat for ${minutes} min`,
      text: `${last ? `Last step ${last.step} at ${heartbeat}.` : `No step yet since the job started at ${heartbeat}.`} Look at its job's logs; \`flywheel train stop ${run.runId}\` then \`flywheel train resume ${run.runId}\` continues it from its last saved state.`,
      fields: { run: run.runId, stallMinutes: run.request.stallMinutes, ...(updated.jobId ? { job: updated.jobId } : {}) },
    });
  }
  return { checked: runs.length, stalled };
}
