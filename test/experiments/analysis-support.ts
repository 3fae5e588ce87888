/**
 * Fixtures of the analysis tests: a seeded simulation of an experiment's raw archive (users with heterogeneous base
 * rates and repeat turns, known true effects, pre-period history, noise the SQL must ignore), written as JSON Lines
 * through the archive writer, and an independent per-unit computation in JavaScript of the same moments the SQL
 * returns (the cross-check).
 */
import { writeExposureRows, writeMetricRows } from '../../lib/experiments/archive/write-archive-rows.ts';
import { archiveKeys } from '../../lib/experiments/record-keys.ts';
import { createExperimentRecord } from '../../lib/experiments/experiment-store.ts';
import { putMetricDefinition } from '../../lib/experiments/metric-definitions.ts';
import { BUILT_IN_METRICS, ExperimentInput, type ExperimentRecord, type ExposureRow, type MetricDefinition, type MetricDefinitionInput, type MetricRow, type UnitType } from '../../lib/experiments/schemas.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { Ports } from '../../lib/ports/ports.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';
import type { ArmMoments } from '../../lib/shared/statistics/index.ts';
import { mulberry32 } from '../../lib/shared/seeded-random.ts';

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;


function normal(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export interface SimulationOptions {
  seed: number;
  experimentId: string;
  tenant?: string;
  startedAt: Date;
  users: number;
  arms: Array<{ id: string; weight: number }>;
  /** Relative effect per arm on the share of users who accept, on cost per unit, on latency per turn. */
  effects?: Record<string, { accepted?: number; cost?: number; latency?: number; failureRate?: number }>;
  /** Share of an arm's units whose exposures are all lost (a serving path that does not log): the SRM case. */
  dropUnits?: Record<string, number>;
  /** Users who also get an exposure in another arm (must be excluded). */
  crossoverUsers?: number;
  /** Days over which units enter. */
  entryDays?: number;
  unitType?: UnitType;
}

export interface SimulatedArchive {
  exposures: ExposureRow[];
  metrics: MetricRow[];
}

/**
 * An experiment's archive rows. Each user: a base acceptance propensity and a spending level (heterogeneous), a first
 * exposure within `entryDays`, 1–8 turns (each an exposure, a latency, maybe a failure mode, an acceptance flag, a
 * cost), pre-period cost and acceptance events that predict the post period (CUPED), events before the pre-period
 * window (ignored), and events before the first exposure (not counted as post).
 */
export function simulateArchive(options: SimulationOptions): SimulatedArchive {
  const random = mulberry32(options.seed);
  const tenant = options.tenant ?? 'default';
  const entryDays = options.entryDays ?? 2;
  const totalWeight = options.arms.reduce((s, a) => s + a.weight, 0);
  const exposures: ExposureRow[] = [];
  const metrics: MetricRow[] = [];
  let seq = 0;
  const id = (p: string) => `${p}-${tenant}-${options.seed}-${seq++}`;
  const iso = (ms: number) => new Date(ms).toISOString();
  const metric = (user: string, name: string, value: number, at: number): MetricRow => ({
    id: id('m'),
    metric: name,
    value,
    scope: 'turn',
    user_id: user,
    workspace_id: `ws-${user}`,
    model: 'ckpt',
    experiment: null,
    arm: null,
    session_id: null,
    turn_id: null,
    occurred_at: iso(at),
    received_at: iso(at + 1000),
  });
  const start = options.startedAt.getTime();
  for (let i = 0; i < options.users; i++) {
    // Users of one simulated experiment only: metric events belong to users, not experiments.
    const user = `${options.experimentId}.u${i}`;
    let pick = random() * totalWeight;
    const arm = options.arms.find((a) => (pick -= a.weight) < 0)?.id ?? options.arms.at(-1)!.id;
    const effect = options.effects?.[arm] ?? {};
    const propensity = 0.05 + 0.4 * random();
    const spend = Math.exp(normal(random) * 0.6);
    const first = start + random() * entryDays * DAY;
    // Pre-period history: predictive of the post period (same propensity and spend).
    for (let k = 0; k < 3; k++) {
      const at = first - (1 + random() * 9) * DAY;
      metrics.push(metric(user, 'cost_usd', spend * (0.8 + 0.4 * random()), at));
      metrics.push(metric(user, 'accepted', random() < propensity ? 1 : 0, at));
    }
    // Older than any pre-period window used here: never read.
    metrics.push(metric(user, 'cost_usd', 1000, first - 40 * DAY));
    const turns = 1 + Math.floor(random() * 8);
    const logged = random() >= (options.dropUnits?.[arm] ?? 0);
    for (let k = 0; k < turns; k++) {
      const at = first + k * 2 * HOUR;
      if (logged) {
        exposures.push({ id: id('x'), experiment: options.experimentId, arm, checkpoint: `ckpt-${arm}`, unit_type: options.unitType ?? 'user', unit_id: options.unitType === 'workspace' ? `ws-${user}` : user, session_id: null, turn_id: null, occurred_at: iso(at), received_at: iso(at + 500) });
      }
      const accept = random() < Math.min(1, propensity * (1 + (effect.accepted ?? 0))) ? 1 : 0;
      metrics.push(metric(user, 'accepted', accept, at + 60_000));
      metrics.push(metric(user, 'cost_usd', spend * (1 + (effect.cost ?? 0)) * (0.8 + 0.4 * random()) / 3, at + 60_000));
      metrics.push(metric(user, 'latency_ms', 800 * (1 + (effect.latency ?? 0)) * Math.exp(normal(random) * 0.3), at + 30_000));
      // Sparse: most units have no tool errors at all (their sums come from the arm's totals).
      if (random() < 0.05) metrics.push(metric(user, 'tool_errors', 1 + Math.floor(random() * 2), at + 20_000));
      if (random() < 0.02 * (1 + (effect.failureRate ?? 0))) metrics.push(metric(user, 'failure_mode.wrong-tool', 1, at + 40_000));
      if (random() < 0.01) metrics.push(metric(user, 'failure_mode.gave-up', 1, at + 40_000));
    }
  }
  // Crossovers: users exposed in two arms (a bug in a serving layer): excluded, whatever their metrics.
  for (let i = 0; i < (options.crossoverUsers ?? 0); i++) {
    const user = `${options.experimentId}.cross${i}`;
    const at = start + (0.5 + random()) * HOUR;
    options.arms.slice(0, 2).forEach((a, k) => {
      exposures.push({ id: id('x'), experiment: options.experimentId, arm: a.id, checkpoint: `ckpt-${a.id}`, unit_type: options.unitType ?? 'user', unit_id: options.unitType === 'workspace' ? `ws-${user}` : user, session_id: null, turn_id: null, occurred_at: iso(at + k * HOUR), received_at: iso(at + k * HOUR) });
    });
    metrics.push(metric(user, 'accepted', 1, at + 3 * HOUR));
    metrics.push(metric(user, 'cost_usd', 500, at + 3 * HOUR));
  }
  return { exposures, metrics };
}

/** Writes the rows through the archive writer, one object per tenant, table and day. */
export async function writeArchive(rootBlobs: BlobsPort, tenant: string, archive: SimulatedArchive, batch = 'sim'): Promise<void> {
  const byDay = <R extends { occurred_at: string }>(rows: readonly R[]) => {
    const days = new Map<string, R[]>();
    for (const r of rows) {
      const day = r.occurred_at.slice(0, 10);
      let list = days.get(day);
      if (!list) days.set(day, (list = []));
      list.push(r);
    }
    return days;
  };
  for (const [day, rows] of byDay(archive.exposures)) await writeExposureRows(rootBlobs, tenant, archiveKeys.exposures(tenant, day, batch), rows);
  for (const [day, rows] of byDay(archive.metrics)) await writeMetricRows(rootBlobs, tenant, archiveKeys.metrics(tenant, day, batch), rows);
}

export interface DirectResult {
  arms: Map<string, { units: number; exposures: number }>;
  excludedUnits: number;
  metrics: Map<string, Map<string, ArmMoments>>;
  failureModes: Map<string, Map<string, ArmMoments>>;
}

function add(target: Map<string, Map<string, ArmMoments>>, key: string, arm: string, x: number, y: number | undefined, c: number | undefined): void {
  let byArm = target.get(key);
  if (!byArm) target.set(key, (byArm = new Map()));
  let m = byArm.get(arm);
  if (!m) byArm.set(arm, (m = { units: 0, sumX: 0, sumX2: 0 }));
  m.units += 1;
  m.sumX += x;
  m.sumX2 += x * x;
  if (y !== undefined) {
    m.sumY = (m.sumY ?? 0) + y;
    m.sumY2 = (m.sumY2 ?? 0) + y * y;
    m.sumXY = (m.sumXY ?? 0) + x * y;
  }
  if (c !== undefined) {
    m.sumC = (m.sumC ?? 0) + c;
    m.sumC2 = (m.sumC2 ?? 0) + c * c;
    m.sumXC = (m.sumXC ?? 0) + x * c;
  }
}

/**
 * The same aggregation the SQL does, per unit in JavaScript, from the rows themselves: the cross-check.
 */
export function computeDirectly(archive: SimulatedArchive, input: { experimentId: string; unitType: UnitType; from: Date; to: Date; cupedPreDays: number; metrics: readonly MetricDefinition[] }): DirectResult {
  const from = input.from.getTime();
  const to = input.to.getTime();
  const units = new Map<string, { arms: Set<string>; first: number; exposures: number }>();
  for (const e of archive.exposures) {
    const at = Date.parse(e.occurred_at);
    if (e.experiment !== input.experimentId || e.unit_type !== input.unitType || at < from || at > to) continue;
    const u = units.get(e.unit_id) ?? { arms: new Set<string>(), first: Infinity, exposures: 0 };
    u.arms.add(e.arm);
    u.first = Math.min(u.first, at);
    u.exposures += 1;
    units.set(e.unit_id, u);
  }
  const eventsOf = new Map<string, MetricRow[]>();
  for (const m of archive.metrics) {
    const unit = input.unitType === 'user' ? m.user_id : m.workspace_id;
    if (unit === null) continue;
    let list = eventsOf.get(unit);
    if (!list) eventsOf.set(unit, (list = []));
    list.push(m);
  }
  const out: DirectResult = { arms: new Map(), excludedUnits: 0, metrics: new Map(), failureModes: new Map() };
  for (const [unitId, u] of units) {
    if (u.arms.size > 1) {
      out.excludedUnits += 1;
      continue;
    }
    const arm = [...u.arms][0]!;
    const a = out.arms.get(arm) ?? { units: 0, exposures: 0 };
    a.units += 1;
    a.exposures += u.exposures;
    out.arms.set(arm, a);
    const events = eventsOf.get(unitId) ?? [];
    const post = events.filter((e) => Date.parse(e.occurred_at) >= u.first && Date.parse(e.occurred_at) <= to);
    const pre = events.filter((e) => Date.parse(e.occurred_at) < u.first && Date.parse(e.occurred_at) >= u.first - input.cupedPreDays * DAY);
    const side = (rows: MetricRow[], metric: string, aggregate: 'sum' | 'count') => {
      if (metric === '$exposures') return u.exposures;
      const of = rows.filter((r) => r.metric === metric);
      return aggregate === 'count' ? of.length : of.reduce((s, r) => s + r.value, 0);
    };
    for (const d of input.metrics) {
      if (d.kind === 'ratio') {
        add(out.metrics, d.name, arm, side(post, d.numerator!.metric, d.numerator!.aggregate), side(post, d.denominator!.metric, d.denominator!.aggregate), undefined);
        continue;
      }
      const value = (rows: MetricRow[]) => {
        const of = rows.filter((r) => r.metric === d.source);
        if (d.kind === 'binomial') return of.some((r) => r.value > 0) ? 1 : 0;
        const sum = of.reduce((s, r) => s + r.value, 0);
        return d.capValue !== undefined ? Math.min(sum, d.capValue) : sum;
      };
      add(out.metrics, d.name, arm, value(post), undefined, input.cupedPreDays > 0 ? value(pre) : undefined);
    }
  }
  // Failure modes: every mode seen after some analysed unit's first exposure, for every analysed unit.
  const modes = new Set<string>();
  for (const [unitId, u] of units) {
    if (u.arms.size > 1) continue;
    for (const e of eventsOf.get(unitId) ?? []) {
      const at = Date.parse(e.occurred_at);
      if (e.metric.startsWith('failure_mode.') && at >= u.first && at <= to) modes.add(e.metric);
    }
  }
  for (const [unitId, u] of units) {
    if (u.arms.size > 1) continue;
    const arm = [...u.arms][0]!;
    const events = (eventsOf.get(unitId) ?? []).filter((e) => Date.parse(e.occurred_at) >= u.first && Date.parse(e.occurred_at) <= to);
    for (const mode of modes) add(out.failureModes, mode, arm, events.filter((e) => e.metric === mode).length, u.exposures, undefined);
  }
  return out;
}

/** Metric definitions the tests declare (names apart from the built-ins), and the built-in latency ratio. */
export const TEST_METRICS = {
  accepted: { name: 'accept_rate', kind: 'binomial', source: 'accepted', direction: 'increase', displayScale: 100 },
  spend: { name: 'spend', kind: 'mean', source: 'cost_usd', direction: 'decrease', capValue: 50, displayScale: 1 },
} as const satisfies Record<string, MetricDefinitionInput>;

export const LATENCY: MetricDefinition = BUILT_IN_METRICS.find((m) => m.name === 'latency_ms_per_turn')!;
export const TOOL_ERRORS: MetricDefinition = BUILT_IN_METRICS.find((m) => m.name === 'tool_errors_per_turn')!;

/** Sparse sources and an `$exposures` numerator: the SQL sums units with events and adds the rest from arm totals. */
export const SPARSE_METRICS: MetricDefinitionInput[] = [
  { name: 'any_tool_error', kind: 'binomial', source: 'tool_errors', direction: 'decrease' },
  { name: 'tool_error_sum', kind: 'mean', source: 'tool_errors', direction: 'decrease', capValue: 3 },
  { name: 'turns_per_error', kind: 'ratio', numerator: { metric: '$exposures', aggregate: 'count' }, denominator: { metric: 'tool_errors', aggregate: 'count' }, direction: 'increase' },
];

/** The definitions as stored (what `computeDirectly` reads). */
export function definitionsOf(...inputs: MetricDefinitionInput[]): MetricDefinition[] {
  return inputs.map((d) => ({ displayScale: 1, ...d, createdAt: '1970-01-01T00:00:00.000Z' }) as MetricDefinition);
}

/** Declares the test metrics. */
export async function declareTestMetrics(ports: Pick<Ports, 'records' | 'now'>): Promise<void> {
  for (const d of Object.values(TEST_METRICS)) await putMetricDefinition(ports, d);
}

/**
 * A running experiment stored as the lifecycle would leave it (the definition parsed with its defaults), started at
 * `startedAt`.
 */
export async function storeRunningExperiment(
  records: RecordsPort,
  input: ExperimentInput,
  startedAt: Date,
  extra: Partial<Pick<ExperimentRecord, 'status' | 'stoppedArms' | 'rampStep' | 'rampStepSince' | 'stoppedAt'>> = {},
): Promise<ExperimentRecord> {
  const definition = ExperimentInput.parse(input);
  const record: ExperimentRecord = {
    definition,
    status: 'running',
    plannedUnitsPerArm: definition.plannedUnitsPerArm ?? 1000,
    rampStep: 0,
    rampStepSince: startedAt.toISOString(),
    stoppedArms: [],
    origin: { kind: 'person', by: 'test' },
    createdAt: new Date(startedAt.getTime() - HOUR).toISOString(),
    startedAt: startedAt.toISOString(),
    revision: 0,
    ...extra,
  };
  await createExperimentRecord(records, record, 'test', startedAt);
  return record;
}
