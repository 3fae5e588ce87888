/**
 * The rows of `buildAnalysisSql` read back as the statistics module's `ArmMoments`, per metric and arm, with the
 * units and exposures of each arm and the units left out for being seen in more than one arm.
 *
 * The SQL sums over the units that have events of a metric; every other unit of the arm counts too, with X and Y its
 * exposures where that side is `$exposures` and 0 elsewhere (C = 0: no pre-period events). Those are added here from
 * the arm's totals (units, Σ exposures, Σ exposures²) less the units with events.
 */
import type { QueryRow, QueryValue } from '../../ports/query.ts';
import type { ArmMoments } from '../../shared/statistics/index.ts';
import { analysisSpecs, EXPOSURES_SIDE, FAILURE_MODES_SPEC, ROW_ROLE, type AnalysisSpec, type AnalysisSqlInput } from './build-analysis-sql.ts';

export interface AnalysisAggregates {
  /** Per arm: units analysed (one arm only) and their exposures. */
  arms: Map<string, { units: number; exposures: number }>;
  /** Units whose exposures name more than one arm: left out of every metric. */
  excludedUnits: number;
  /** Per experiment metric (by name), per arm: every arm that has units. */
  metrics: Map<string, Map<string, ArmMoments>>;
  /** Per `failure_mode.<mode>` metric seen after an exposure, per arm: every arm that has units. */
  failureModes: Map<string, Map<string, ArmMoments>>;
}

interface Sums {
  units: number;
  sumE: number;
  sumE2: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
  sumC: number;
  sumC2: number;
  sumXC: number;
}

const NONE: Sums = { units: 0, sumE: 0, sumE2: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0, sumC: 0, sumC2: 0, sumXC: 0 };

function num(row: QueryRow, column: string): number {
  const v = row[column];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`analysis row column ${column} is ${JSON.stringify(v)}, not a number`);
  return v;
}

/** A sum over no rows (NULL) is 0. */
function sum(v: QueryValue | undefined): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function text(row: QueryRow, column: string): string {
  const v = row[column];
  if (typeof v !== 'string') throw new TypeError(`analysis row column ${column} is ${JSON.stringify(v)}, not a string`);
  return v;
}

function partialOf(row: QueryRow): Sums {
  return {
    units: num(row, 'units'),
    sumE: sum(row.sum_e),
    sumE2: sum(row.sum_e2),
    sumX: sum(row.sum_x),
    sumX2: sum(row.sum_x2),
    sumY: sum(row.sum_y),
    sumY2: sum(row.sum_y2),
    sumXY: sum(row.sum_xy),
    sumC: sum(row.sum_c),
    sumC2: sum(row.sum_c2),
    sumXC: sum(row.sum_xc),
  };
}

/** A metric and a failure mode may share a name: the role keeps them apart. */
function presentKey(role: string, key: string): string {
  return `${role}\u0000${key}`;
}

/** The arm's moments: the units with events plus the rest, whose X and Y are their exposures on an `$exposures` side. */
function complete(spec: AnalysisSpec, arm: Sums, present: Sums): ArmMoments {
  const restE = arm.sumE - present.sumE;
  const restE2 = arm.sumE2 - present.sumE2;
  const numIsExposures = spec.numMetric === EXPOSURES_SIDE;
  const denIsExposures = spec.denMetric === EXPOSURES_SIDE;
  const m: ArmMoments = {
    units: arm.units,
    sumX: present.sumX + (numIsExposures ? restE : 0),
    sumX2: present.sumX2 + (numIsExposures ? restE2 : 0),
  };
  if (spec.kind === 'ratio') {
    m.sumY = present.sumY + (denIsExposures ? restE : 0);
    m.sumY2 = present.sumY2 + (denIsExposures ? restE2 : 0);
    m.sumXY = present.sumXY + (numIsExposures && denIsExposures ? restE2 : 0);
  }
  if (spec.covariate) {
    m.sumC = present.sumC;
    m.sumC2 = present.sumC2;
    m.sumXC = present.sumXC;
  }
  return m;
}

/**
 * @example
 * const aggregates = readAnalysisRows((await query.run(buildAnalysisSql(input))).rows, input);
 * aggregates.metrics.get('accepted')?.get('control'); // { units: 5012, sumX: 1203, sumX2: 1203, sumC: …, … }
 */
export function readAnalysisRows(rows: readonly QueryRow[], input: Pick<AnalysisSqlInput, 'metrics' | 'cupedPreDays'>): AnalysisAggregates {
  const armTotals = new Map<string, Sums>();
  const present = new Map<string, Map<string, Sums>>();
  const modes = new Set<string>();
  let excludedUnits = 0;
  for (const row of rows) {
    const kind = text(row, 'row_kind');
    if (kind === 'excluded') excludedUnits = num(row, 'units');
    else if (kind === 'arm') armTotals.set(text(row, 'arm'), partialOf(row));
    else if (kind === 'metric') {
      const key = text(row, 'key');
      const role = text(row, 'role');
      if (role === ROW_ROLE.failureMode) modes.add(key);
      let byArm = present.get(presentKey(role, key));
      if (!byArm) present.set(presentKey(role, key), (byArm = new Map()));
      byArm.set(text(row, 'arm'), partialOf(row));
    } else throw new TypeError(`analysis row of unknown kind ${kind}`);
  }
  const out: AnalysisAggregates = { arms: new Map(), excludedUnits, metrics: new Map(), failureModes: new Map() };
  for (const [arm, t] of armTotals) out.arms.set(arm, { units: t.units, exposures: t.sumE });
  const specs = analysisSpecs(input);
  const fill = (target: Map<string, Map<string, ArmMoments>>, key: string, spec: AnalysisSpec) => {
    const role = spec.key === FAILURE_MODES_SPEC ? ROW_ROLE.failureMode : ROW_ROLE.metric;
    const byArm = new Map<string, ArmMoments>();
    for (const [arm, totals] of armTotals) byArm.set(arm, complete(spec, totals, present.get(presentKey(role, key))?.get(arm) ?? NONE));
    target.set(key, byArm);
  };
  for (const spec of specs) {
    if (spec.key === FAILURE_MODES_SPEC) for (const mode of [...modes].sort()) fill(out.failureModes, mode, spec);
    else fill(out.metrics, spec.key, spec);
  }
  return out;
}
