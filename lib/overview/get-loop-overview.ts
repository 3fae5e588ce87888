/**
 * The loop overview: feedback (24 h, 7 days), failure modes (7 days), checkpoints, sweeps, suites, training runs,
 * experiments and notices, each read from its own index. What each part costs:
 * - feedback: settled hours are stored counts (`feedback-hours.ts`): one query plus about two hours of events;
 * - failure modes: one stored count per checkpoint and day (`lib/modes/mode-day-rollup.ts`, counted again from the
 *   tally rows when a minute old for today, ten minutes for the three days before, a day before that); checkpoints
 *   with signals up to `MAX_MODE_CHECKPOINTS`;
 * - counts (checkpoints, pending reviews) read index keys up to `OVERVIEW_COUNT_CAP` and say when they stop there;
 * - lists read the first page of their index, newest first.
 * Notices come from the notices capability's store; if its read fails the overview still answers, with none.
 */
import type { Ports } from '../ports/ports.ts';
import type { RecordsPort } from '../ports/records.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { readModeDays } from '../modes/mode-day-rollup.ts';
import { modelSeenRecord } from '../modes/record-codecs.ts';
import { modeKeys } from '../modes/record-keys.ts';
import { listNotices } from '../people/notices/notice-store.ts';
import { getIncumbent } from '../registry/incumbent.ts';
import { listCheckpoints } from '../registry/list-checkpoints.ts';
import { registryKeys } from '../registry/record-keys.ts';
import { listAllSuites } from '../registry/list-suites.ts';
import { listSweeps } from '../sweeps/list-sweeps.ts';
import { listExperiments } from '../experiments/experiment-store.ts';
import { listTrainingRuns } from '../training/runs/read-training-runs.ts';
import { TERMINAL_TRAINING_RUN_STATUSES, type TrainingRun } from '../training/schemas.ts';
import { countFeedback, type FeedbackCounts } from './feedback-hours.ts';
import { OVERVIEW_COUNT_CAP, OVERVIEW_RECENT, type FeedbackWindow, type LoopOverview } from './schemas.ts';

const DAY_MS = 86_400_000;
/** Checkpoints whose failure modes the overview sums at most (the first by id). */
export const MAX_MODE_CHECKPOINTS = 50;
/** Modes in `failureModes.top`. */
const TOP_MODES = 5;

/**
 * @example
 * const overview = await getLoopOverview(ports);
 * console.log(overview.feedback.last24h.negativeShare, overview.sweeps.running.length);
 */
export async function getLoopOverview(ports: Pick<Ports, 'records'>, now: Date = new Date()): Promise<LoopOverview> {
  const { records } = ports;
  const [last24h, last7d, modes, pending, checkpoints, incumbent, sweepsRunning, sweepsRecent, suites, training, experiments, notices] = await Promise.all([
    countFeedback(records, new Date(now.getTime() - DAY_MS), now),
    countFeedback(records, new Date(now.getTime() - 7 * DAY_MS), now),
    modeCounts(records, now),
    countIndex(records, 'gsi1', modeKeys.reviewQueue('pending')),
    countIndex(records, 'gsi1', registryKeys.allCheckpoints),
    getIncumbent(records),
    listSweeps(records, { status: 'running', limit: OVERVIEW_RECENT }),
    listSweeps(records, { limit: OVERVIEW_RECENT }),
    listAllSuites(ports),
    listTrainingRuns(ports, { limit: 50 }),
    listExperiments(records, { status: 'running', limit: OVERVIEW_RECENT }),
    openNotices(records),
  ]);
  const latest = (await listCheckpoints(ports, { limit: '1' })).items[0];
  const isRunning = (r: TrainingRun) => !TERMINAL_TRAINING_RUN_STATUSES.includes(r.status);
  const runView = (r: TrainingRun) => ({ runId: r.runId, status: r.status, createdAt: r.createdAt, ...(r.step !== undefined ? { step: r.step } : {}) });
  return {
    generatedAt: now.toISOString(),
    feedback: { last24h: windowOf(last24h), last7d: windowOf(last7d) },
    failureModes: {
      open: modes.size,
      top: [...modes]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, TOP_MODES)
        .map(([mode, count]) => ({ mode, count })),
      pendingReview: pending.count,
      pendingReviewCapped: pending.capped,
    },
    checkpoints: {
      total: checkpoints.count,
      totalCapped: checkpoints.capped,
      incumbent: incumbent ? { checkpoint: incumbent.checkpoint, since: incumbent.since } : null,
      latest: latest ? { id: latest.id, model: latest.model, registeredAt: latest.registeredAt } : null,
    },
    sweeps: {
      running: sweepsRunning.sweeps.map((s) => ({ sweepId: s.sweepId, status: s.status, requestedAt: s.requestedAt })),
      recent: sweepsRecent.sweeps.map((s) => ({ sweepId: s.sweepId, status: s.status, requestedAt: s.requestedAt, ...(s.finishedAt ? { finishedAt: s.finishedAt } : {}) })),
    },
    suites: { active: suites.filter((s) => s.status === 'active').length, saturated: suites.filter((s) => s.status === 'saturated').length },
    trainingRuns: {
      running: training.items.filter(isRunning).slice(0, OVERVIEW_RECENT).map(runView),
      recent: training.items.slice(0, OVERVIEW_RECENT).map(runView),
    },
    experiments: {
      running: experiments.items.map((e) => ({ experimentId: e.definition.id, name: e.definition.name, ...(e.startedAt ? { startedAt: e.startedAt } : {}) })),
    },
    notices,
  };
}

function windowOf(c: FeedbackCounts): FeedbackWindow {
  return { events: c.events, up: c.up, down: c.down, negativeShare: c.up + c.down > 0 ? c.down / (c.up + c.down) : null };
}

/** Per mode, its signals over the last 7 days (today and the 6 before), every checkpoint together. */
async function modeCounts(records: RecordsPort, now: Date): Promise<Map<string, number>> {
  const days: string[] = [];
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let i = 6; i >= 0; i--) days.push(new Date(today - i * DAY_MS).toISOString().slice(0, 10));
  const models = (await records.query({ partition: modeKeys.models, limit: MAX_MODE_CHECKPOINTS })).items.map((i) => modelSeenRecord.decode(i).model);
  const out = new Map<string, number>();
  await forEachLimited(models, 4, async (model) => {
    for (const d of (await readModeDays(records, model, days, now)).values()) {
      for (const [m, n] of Object.entries(d.modes)) out.set(m, (out.get(m) ?? 0) + n);
    }
  });
  return out;
}

/** Items of an index partition, counted (keys only: no record is decoded) up to the cap. */
async function countIndex(records: RecordsPort, index: 'gsi1' | 'gsi2', partition: string): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await records.query({ index, partition, limit: 1000, ...(cursor ? { cursor } : {}) });
    count += page.items.length;
    cursor = page.cursor;
  } while (cursor && count < OVERVIEW_COUNT_CAP);
  return { count: Math.min(count, OVERVIEW_COUNT_CAP), capped: cursor !== undefined || count > OVERVIEW_COUNT_CAP };
}

async function openNotices(records: RecordsPort): Promise<LoopOverview['notices']> {
  try {
    const page = await listNotices(records, { status: 'open', limit: 200 });
    return {
      open: page.notices.length,
      decisions: page.notices.filter((n) => (n.actions?.length ?? 0) > 0).length,
      recent: page.notices.slice(0, OVERVIEW_RECENT).map((n) => ({ noticeId: n.noticeId, kind: n.kind, severity: n.severity, title: n.title, createdAt: n.createdAt })),
    };
  } catch {
    // The overview must answer even when the notices store cannot (an old record, a capability not deployed).
    return { open: 0, decisions: 0, recent: [] };
  }
}
