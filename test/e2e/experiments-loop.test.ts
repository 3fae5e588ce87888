/**
 * The experiments loop end to end on one machine (`flywheel start` as a child process, real HTTP, DuckDB over the
 * raw archive):
 *
 * 1. Two checkpoints are registered, a binomial metric is declared, and an experiment between them is created with a
 *    power calculation, then started.
 * 2. `POST /v1/assignments` places 400 users (sticky: asked twice, the same arms); the serving layer's side is played
 *    here: an exposure per served turn with the arm's checkpoint, then metric events with a true effect (the
 *    treatment lifts the success rate from 20% to 50%, seeded) and a few rated feedback events (the derived thumbs).
 * 3. `POST /v1/experiments/{id}/analyze` once the archive holds every row: the JSON names the effect, its arm values
 *    and lift match a direct computation over the rows posted, SRM is clear; the lift chart is a PNG.
 * 4. Ship: `GET /v1/incumbent` names the treatment's checkpoint and the experiment records the analysis it rests on.
 * 5. A proposal: `experiment.proposed` published on the runtime's event log, as the training workflow publishes it,
 *    drafts an experiment of the new checkpoint against the new incumbent; `start` approves it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { EXPERIMENT_PROPOSED, type ExperimentProposedDetail } from '../../lib/training/runs/events.ts';
import { startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';
import { mulberry32 } from '../../lib/shared/seeded-random.ts';

// Fixed ids (every run has a fresh data folder): the same units land in the same arms with the same seeded outcomes,
// so the figures the test checks are the same on every run.
const CONTROL_CKPT = 'e2e-exp-a';
const TREATMENT_CKPT = 'e2e-exp-b';
const PROPOSED_CKPT = 'e2e-exp-c';
const EXPERIMENT = 'e2e-exp-1';
const METRIC = 'task_success';
const SOURCE = 'task_done';
const UNITS = 400;
/**
 * The true success rates: +150% for the treatment, an effect 400 units show beyond the always-valid interval's
 * width (z ≈ 9 at the fixed horizon), so the verdict does not hang on the seed.
 */
const SUCCESS_RATE = { control: 0.2, treatment: 0.5 } as const;
const THUMB_UP_RATE = { control: 0.5, treatment: 0.8 } as const;
const RATED_UNITS = 60;

const tempDir = tempDirs('flywheel-experiments-loop-');
let dataDir: string;
let rt: RuntimeProcess;

beforeAll(async () => {
  dataDir = join(tempDir(), 'data');
  // The schedule off: the test analyses when it is ready, and nothing else acts on the experiment meanwhile.
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_SCHEDULE: 'off' } });
}, 120_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
});

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as any };
};

const tail = () => rt.output().slice(-4000);


/** Rows the raw archive holds under `folder` (lines of its `.jsonl` objects) that pass `keep`. */
function archiveRows(folder: string, keep: (row: Record<string, unknown>) => boolean = () => true): number {
  const root = join(dataDir, 'blobs', folder);
  let files: string[];
  try {
    files = readdirSync(root, { recursive: true, encoding: 'utf8' });
  } catch {
    return 0;
  }
  let n = 0;
  for (const file of files.filter((f) => f.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) if (line !== '' && keep(JSON.parse(line) as Record<string, unknown>)) n++;
  }
  return n;
}

/** Posts items in batches of 500 (the batch limit); every batch must be accepted. */
async function postBatches(path: string, key: string, items: unknown[]) {
  for (let i = 0; i < items.length; i += 500) {
    const r = await api(path, { method: 'POST', body: { [key]: items.slice(i, i + 500) } });
    expect(r.status, JSON.stringify(r.json)).toBe(202);
  }
}

type ArmId = 'control' | 'treatment';
interface Unit {
  id: string;
  arm: ArmId;
  checkpoint: string;
  turns: number;
  success: boolean;
  thumb?: 'up' | 'down';
}
const units: Unit[] = [];
let analysis: any;

describe('experiment: create → start → assign → exposures and metrics → analyze → ship → incumbent; proposal → draft → approve', () => {
  it('registers two checkpoints, declares a metric, creates an experiment with a power calculation and starts it', async () => {
    for (const id of [CONTROL_CKPT, TREATMENT_CKPT, PROPOSED_CKPT]) {
      const r = await api('/v1/checkpoints', { method: 'POST', body: { id, model: 'e2e-model', serving: { kind: 'endpoint', model: `openai:${id}@http://127.0.0.1:9/v1` }, sweep: false } });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
    }
    const metric = await api('/v1/metric-definitions', { method: 'POST', body: { name: METRIC, description: 'The agent finished the task.', kind: 'binomial', source: SOURCE, direction: 'increase' } });
    expect(metric.status, JSON.stringify(metric.json)).toBe(201);

    const created = await api('/v1/experiments', {
      method: 'POST',
      body: {
        id: EXPERIMENT,
        name: 'e2e: does b finish more tasks than a?',
        arms: [
          { id: 'control', checkpoint: CONTROL_CKPT, control: true },
          { id: 'treatment', checkpoint: TREATMENT_CKPT },
        ],
        metrics: { primary: METRIC, secondary: ['thumbs_up_rate'], guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.1 }] },
        power: { mde: 0.5, baselineMean: SUCCESS_RATE.control },
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json.experiment.status).toBe('draft');
    // The power calculation planned a sample: a whole number of units per arm.
    expect(Number.isInteger(created.json.experiment.plannedUnitsPerArm) && created.json.experiment.plannedUnitsPerArm > 0).toBe(true);

    const started = await api(`/v1/experiments/${EXPERIMENT}/start`, { method: 'POST' });
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    expect(started.json.experiment.status).toBe('running');
  }, 60_000);

  it('assigns units stickily, then logs exposures, metric events with a true effect and rated feedback', async () => {
    const ids = Array.from({ length: UNITS }, (_, i) => `e2e-user-${i}`);
    const ask = async () => {
      const out = new Map<string, any>();
      for (let i = 0; i < ids.length; i += 100) {
        const r = await api('/v1/assignments', { method: 'POST', body: { unitType: 'user', unitIds: ids.slice(i, i + 100), experiments: [EXPERIMENT] } });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        for (const a of r.json.assignments) out.set(a.unitId, a);
      }
      return out;
    };
    // The cache reloads on a miss (started a moment ago), so the first ask already sees the running experiment.
    const first = await ask();
    const again = await ask();
    expect(first.size).toBe(UNITS);
    for (const id of ids) {
      const a = first.get(id);
      expect(a).toMatchObject({ experiment: EXPERIMENT, reason: 'assigned', logExposure: true });
      expect(again.get(id).arm).toBe(a.arm);
      expect(a.checkpoint).toBe(a.arm === 'control' ? CONTROL_CKPT : TREATMENT_CKPT);
    }

    const random = mulberry32(1404);
    for (const [i, id] of ids.entries()) {
      const a = first.get(id);
      const arm = a.arm as ArmId;
      const unit: Unit = { id, arm, checkpoint: a.checkpoint, turns: 1 + (i % 2), success: random() < SUCCESS_RATE[arm] };
      if (i < RATED_UNITS) unit.thumb = random() < THUMB_UP_RATE[arm] ? 'up' : 'down';
      units.push(unit);
    }
    // Both arms got units, in proportions the weights allow (a 1:1 split of 400 lies inside 150–250 but for p < 1e-6).
    for (const arm of ['control', 'treatment'] as const) expect(units.filter((u) => u.arm === arm).length).toBeGreaterThan(150);

    const exposedAt = new Date().toISOString();
    await postBatches(
      '/v1/exposures',
      'exposures',
      units.flatMap((u) =>
        Array.from({ length: u.turns }, (_, t) => ({ exposureId: `x-${u.id}-${t}`, experiment: EXPERIMENT, arm: u.arm, checkpoint: u.checkpoint, unitType: 'user', unitId: u.id, sessionId: `s-${u.id}`, turnId: `t${t}`, occurredAt: exposedAt })),
      ),
    );
    // After the exposures: the analysis counts only what follows a unit's first exposure.
    const measuredAt = new Date(Math.max(Date.now(), Date.parse(exposedAt) + 1)).toISOString();
    await postBatches('/v1/metrics', 'metrics', [
      ...units.map((u) => ({ metricEventId: `m-${u.id}`, metric: SOURCE, value: u.success ? 1 : 0, userId: u.id, model: u.checkpoint, experiment: EXPERIMENT, arm: u.arm, occurredAt: measuredAt })),
      ...units.flatMap((u) =>
        Array.from({ length: u.turns }, (_, t) => ({ metricEventId: `l-${u.id}-${t}`, metric: 'latency_ms', value: 800 + Math.round(200 * random()), userId: u.id, model: u.checkpoint, experiment: EXPERIMENT, arm: u.arm, turnId: `t${t}`, occurredAt: measuredAt })),
      ),
    ]);
    const rated = units.filter((u) => u.thumb);
    await postBatches(
      '/v1/feedback',
      'events',
      rated.map((u) => ({ eventId: `f-${u.id}`, kind: 'rating', rating: u.thumb, traceId: `trace-${u.id}`, sessionId: `s-${u.id}`, turnId: 't0', model: u.checkpoint, experiment: EXPERIMENT, arm: u.arm, source: 'user', reporter: u.id, trainingConsent: true, occurredAt: measuredAt })),
    );

    // Stored once the raw archive holds every row (the processor runs behind the 202s).
    const exposures = units.reduce((n, u) => n + u.turns, 0);
    const expected = { exposures, metrics: UNITS + exposures, thumbs: rated.length };
    await waitFor(
      () => {
        const held = {
          exposures: archiveRows('raw/exposures', (r) => r['experiment'] === EXPERIMENT),
          metrics: archiveRows('raw/metrics', (r) => r['experiment'] === EXPERIMENT && r['metric'] !== 'feedback.thumb'),
          thumbs: archiveRows('raw/metrics', (r) => r['metric'] === 'feedback.thumb' && String(r['user_id']).startsWith('e2e-user-')),
        };
        return held.exposures === expected.exposures && held.metrics === expected.metrics && held.thumbs === expected.thumbs ? held : undefined;
      },
      { what: () => `the archive to hold ${JSON.stringify(expected)}:\n${tail()}`, timeoutMs: 60_000, everyMs: 200 },
    );
  }, 90_000);

  it('analyses: the JSON names the effect, matching a direct computation over the rows posted; the lift chart is a PNG', async () => {
    const r = await api(`/v1/experiments/${EXPERIMENT}/analyze`, { method: 'POST' });
    expect(r.status, `${JSON.stringify(r.json)}\n${tail()}`).toBe(200);
    analysis = r.json.analysis ?? r.json;

    const byArm = (arm: ArmId) => units.filter((u) => u.arm === arm);
    for (const arm of ['control', 'treatment'] as const) expect(analysis.unitsPerArm[arm]).toBe(byArm(arm).length);
    expect(analysis.srm.mismatch).toBe(false);
    expect(analysis.engine).toBe('duckdb');

    const rate = (arm: ArmId) => byArm(arm).filter((u) => u.success).length / byArm(arm).length;
    const primary = analysis.metrics.find((m: any) => m.metric === METRIC);
    expect(primary.role).toBe('primary');
    for (const arm of ['control', 'treatment'] as const) expect(primary.arms.find((a: any) => a.arm === arm).value).toBeCloseTo(rate(arm), 12);
    const comparison = primary.comparisons.find((c: any) => c.arm === 'treatment');
    expect(comparison.relativeLift).toBeCloseTo((rate('treatment') - rate('control')) / rate('control'), 9);
    // The effect is named: better, its interval above zero, inside its bounds (a lift is never below −100%).
    expect(comparison.verdict).toBe('better');
    expect(comparison.ci.low).toBeGreaterThan(0);
    expect(comparison.ci.low).toBeLessThan(comparison.relativeLift);
    expect(comparison.ci.high).toBeGreaterThan(comparison.relativeLift);
    expect(comparison.sequentialCi.low).toBeLessThanOrEqual(comparison.ci.low);
    expect(comparison.pValue).toBeLessThan(0.05);
    expect(typeof comparison.rule).toBe('string');

    // The derived thumbs: per arm Σ up / Σ rated, as posted.
    const thumbs = analysis.metrics.find((m: any) => m.metric === 'thumbs_up_rate');
    for (const arm of ['control', 'treatment'] as const) {
      const rated = byArm(arm).filter((u) => u.thumb);
      const summary = thumbs.arms.find((a: any) => a.arm === arm);
      expect(summary.denominatorSum).toBe(rated.length);
      expect(summary.numeratorSum).toBe(rated.filter((u) => u.thumb === 'up').length);
    }
    expect(analysis.metrics.find((m: any) => m.metric === 'latency_ms_per_turn').role).toBe('guardrail');

    const png = await fetch(`${rt.url}/v1/experiments/${EXPERIMENT}/lift/${METRIC}`, { headers: { 'x-api-key': rt.apiKey } });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toContain('image/png');
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  }, 60_000);

  it('ships the treatment: the registry incumbent names its checkpoint, the decision names its analysis', async () => {
    const decided = await api(`/v1/experiments/${EXPERIMENT}/decide`, { method: 'POST', body: { kind: 'ship', arm: 'treatment', reason: 'e2e: b finishes more tasks' } });
    expect(decided.status, JSON.stringify(decided.json)).toBe(200);

    const incumbent = await api('/v1/incumbent');
    expect(incumbent.status, JSON.stringify(incumbent.json)).toBe(200);
    expect(incumbent.json).toMatchObject({ checkpoint: TREATMENT_CKPT, experimentId: EXPERIMENT });

    const detail = await api(`/v1/experiments/${EXPERIMENT}`);
    expect(detail.json.experiment.status).toBe('decided');
    expect(detail.json.experiment.decision).toMatchObject({ kind: 'ship', arm: 'treatment', analysisId: analysis.analysisId, promoted: TREATMENT_CKPT });
    // Every change recorded, in order.
    const changes = detail.json.changes.map((c: any) => c.change);
    expect(changes.indexOf('created')).toBeLessThan(changes.indexOf('started'));
    expect(changes.indexOf('analysed')).toBeLessThan(changes.indexOf('decided'));
  }, 30_000);

  it('drafts an experiment from experiment.proposed against the new incumbent; start approves it', async () => {
    const runId = 'e2e-run-1';
    const detail: ExperimentProposedDetail = {
      runId,
      proposalId: `exp-${runId}`,
      checkpointId: PROPOSED_CKPT,
      incumbents: [CONTROL_CKPT],
      sweepId: 'e2e-sweep-1',
      evidence: [{ suite: 'calc', mode: 'strict', incumbent: CONTROL_CKPT, score: 0.9, incumbentScore: 0.6, difference: 0.3, ci: { low: 0.1, high: 0.5 }, n: 40 }],
    };
    // As the training workflow publishes it: on the data folder's event log, with its stable id.
    const ports = openLocalPorts(dataDir);
    try {
      await ports.events.publish([{ type: EXPERIMENT_PROPOSED, id: `${EXPERIMENT_PROPOSED}:${runId}`, detail: { ...detail } }]);
    } finally {
      ports.close();
    }
    const draft = await waitFor(
      async () => {
        const r = await api(`/v1/experiments/${encodeURIComponent(detail.proposalId)}`);
        return r.status === 200 ? r.json.experiment : undefined;
      },
      { what: () => `the proposal's draft experiment ${detail.proposalId}:\n${tail()}`, timeoutMs: 30_000, everyMs: 100 },
    );
    expect(draft.status).toBe('draft');
    expect(draft.origin).toMatchObject({ kind: 'training-proposal', runId, checkpoint: PROPOSED_CKPT });
    // Against the incumbent the ship just made, not the one the sweep compared with.
    const arms = Object.fromEntries(draft.definition.arms.map((a: any) => [a.control ? 'control' : 'treatment', a.checkpoint]));
    expect(arms).toEqual({ control: TREATMENT_CKPT, treatment: PROPOSED_CKPT });

    const approved = await api(`/v1/experiments/${encodeURIComponent(detail.proposalId)}/start`, { method: 'POST' });
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    expect(approved.json.experiment.status).toBe('running');
  }, 60_000);
});
