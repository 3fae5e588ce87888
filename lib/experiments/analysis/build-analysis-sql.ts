/**
 * The one SQL text of an experiment's analysis: exposures and metric events of the raw archive in, a few rows per arm
 * out (the sufficient statistics `ArmMoments` of every metric), so no per-unit data leaves the engine.
 *
 * The text keeps to what Trino/Athena and DuckDB both read: CTEs, VALUES, joins, GROUP BY, CASE, COALESCE, SUM,
 * COUNT, MIN, MAX, FLOOR, substr, CAST. Timestamps are ISO-8601 UTC strings (`toISOString()`), compared as strings;
 * `dt` bounds prune partitions; the tenant is named in every table read (Athena's projection refuses a query that
 * does not). Every literal goes through `sqlString` or is a finite number written by this file.
 *
 * Per unit (the experiment's unit type): its first exposure in [from, to] (time and arm) and its exposures (turns
 * served); a unit seen in more than one arm is left out and counted. Per unit and metric: the sum, count and maximum
 * of each source metric's events at or after the first exposure (mean metrics capped at `capValue`, binomial = any
 * value > 0, ratios keep numerator and denominator); for binomial and mean metrics the same source over the
 * `cupedPreDays` before the first exposure is the CUPED covariate (capped like the metric). Every
 * `failure_mode.<mode>` metric seen after an exposure becomes a ratio: its events over the unit's exposures.
 *
 * Occurred-at strings must be `toISOString()` forms (what the ingest path writes): string order is time order only
 * between strings of one format.
 */
import { sqlString } from '../../ports/query.ts';
import { ARCHIVE_TABLES } from '../record-keys.ts';
import { FAILURE_MODE_METRIC_PREFIX, type MetricDefinition, type UnitType } from '../schemas.ts';

/** `$exposures`: a ratio side that counts the unit's exposures (turns served) rather than a metric's events. */
export const EXPOSURES_SIDE = '$exposures';

/** The role column of a metric row: one of the experiment's metrics, or a failure mode found in the data. */
export const ROW_ROLE = { metric: 'metric', failureMode: 'failure-mode' } as const;

/** What the SQL needs of one experiment metric (its definition, by name). */
export type AnalysisMetricSpec = Pick<MetricDefinition, 'name' | 'kind' | 'source' | 'numerator' | 'denominator' | 'capValue'>;

export interface AnalysisSqlInput {
  /** The query port's tenant (`ports.query.tenant`). */
  tenant: string;
  experimentId: string;
  unitType: UnitType;
  /** The exposure window, ISO-8601 UTC (`toISOString()`). */
  from: string;
  to: string;
  /** Days before a unit's first exposure read as its CUPED covariate; 0 reads none. */
  cupedPreDays: number;
  metrics: readonly AnalysisMetricSpec[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** The `dt` partition (`YYYY-MM-DD`) of an ISO-8601 UTC time. */
function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

/** A finite number as a DOUBLE literal both engines read (a bare `1.5` is DECIMAL in Trino). */
function double(value: number | undefined): string {
  if (value === undefined) return 'CAST(NULL AS DOUBLE)';
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  return `CAST(${String(value)} AS DOUBLE)`;
}

function nullableString(value: string | undefined): string {
  return value === undefined ? 'CAST(NULL AS VARCHAR)' : sqlString(value);
}

/**
 * Seconds since 1970 of an ISO-8601 UTC string column, in integer arithmetic both engines agree on (days from the
 * civil date, Howard Hinnant's algorithm; FLOOR of non-negative quotients, since Trino divides integers and DuckDB
 * does not). Only the pre-period bound needs it: everything else compares the strings.
 */
export function isoEpochSecondsSql(column: string): string {
  const int = (from: number, length: number) => `CAST(substr(${column}, ${from}, ${length}) AS INTEGER)`;
  const month = int(6, 2);
  const year = `(${int(1, 4)} - CASE WHEN ${month} <= 2 THEN 1 ELSE 0 END)`;
  const era = `FLOOR(${year} / 400)`;
  const yearOfEra = `(${year} - ${era} * 400)`;
  const dayOfYear = `(FLOOR((153 * (CASE WHEN ${month} > 2 THEN ${month} - 3 ELSE ${month} + 9 END) + 2) / 5) + ${int(9, 2)} - 1)`;
  const dayOfEra = `(${yearOfEra} * 365 + FLOOR(${yearOfEra} / 4) - FLOOR(${yearOfEra} / 100) + ${dayOfYear})`;
  const days = `(${era} * 146097 + ${dayOfEra} - 719468)`;
  return `(${days} * 86400 + ${int(12, 2)} * 3600 + ${int(15, 2)} * 60 + ${int(18, 2)})`;
}

/** One metric of the analysis as the SQL reads it (a failure mode's is `FAILURE_MODES_SPEC`). */
export interface AnalysisSpec {
  key: string;
  kind: 'binomial' | 'mean' | 'ratio';
  numMetric: string;
  /** `any`: 1 when some value > 0 (binomial). */
  numAgg: 'sum' | 'count' | 'any';
  denMetric?: string;
  denAgg?: 'sum' | 'count';
  cap?: number;
  covariate: boolean;
}

function specRowOf(m: AnalysisMetricSpec, cupedPreDays: number): AnalysisSpec {
  if (m.kind === 'ratio') {
    if (!m.numerator || !m.denominator) throw new RangeError(`ratio metric ${m.name} lacks a numerator or a denominator`);
    return { key: m.name, kind: 'ratio', numMetric: m.numerator.metric, numAgg: m.numerator.aggregate, denMetric: m.denominator.metric, denAgg: m.denominator.aggregate, covariate: false };
  }
  if (!m.source) throw new RangeError(`${m.kind} metric ${m.name} lacks a source`);
  return {
    key: m.name,
    kind: m.kind,
    numMetric: m.source,
    numAgg: m.kind === 'binomial' ? 'any' : 'sum',
    ...(m.kind === 'mean' && m.capValue !== undefined ? { cap: m.capValue } : {}),
    covariate: cupedPreDays > 0,
  };
}

/** The spec row that stands for every failure mode: the join gives it the mode's name as its key. */
export const FAILURE_MODES_SPEC = '$failure_modes';

/** One side's per-unit value of a unit with events: its exposures, or a metric's post-exposure count or sum. */
function sideValue(metricColumn: string, agg: string, side: 'num' | 'den'): string {
  return `CASE WHEN ${metricColumn} = ${sqlString(EXPOSURES_SIDE)} THEN exposures WHEN ${agg} = 'count' THEN COALESCE(${side}_n, 0) ELSE COALESCE(${side}_s, 0) END`;
}

/** A mean metric's value, capped (LEAST is not used: Trino answers NULL for a NULL argument, DuckDB ignores it). */
function capped(value: string): string {
  return `CASE WHEN cap_value IS NOT NULL AND ${value} > cap_value THEN cap_value ELSE ${value} END`;
}

/** The spec rows of the analysis: one per experiment metric and one for all failure modes. */
export function analysisSpecs(input: Pick<AnalysisSqlInput, 'metrics' | 'cupedPreDays'>): AnalysisSpec[] {
  return [
    ...input.metrics.map((m) => specRowOf(m, input.cupedPreDays)),
    { key: FAILURE_MODES_SPEC, kind: 'ratio', numMetric: FAILURE_MODES_SPEC, numAgg: 'count', denMetric: EXPOSURES_SIDE, denAgg: 'count', covariate: false },
  ];
}

/**
 * The analysis SQL of one experiment. The archive's metric events are read by one join (Trino inlines CTEs, so a CTE
 * referenced twice is scanned twice on Athena): per unit and metric, the post-exposure sum, count and maximum and the
 * pre-period sum and maximum; then per unit and experiment metric (or failure mode) its X, Y and C, for the units that
 * have events of it. A unit without events of a metric adds its exposures where a side is `$exposures` and 0
 * elsewhere: `readAnalysisRows` adds those from the arm's totals, so no units × metrics cross join is needed.
 *
 * Rows it returns (`row_kind`): `arm` (per arm: `units`, `sum_e` and `sum_e2`, the sum of exposures and of their
 * squares), `excluded` (`units` seen in more than one arm), `metric` (per arm and `key`, with `role` `metric` or
 * `failure-mode`, over the units with events: `units`, `sum_e`, `sum_e2`, `sum_x`, `sum_x2`, `sum_y`, `sum_y2`,
 * `sum_xy`, `sum_c`, `sum_c2`, `sum_xc`; the y sums NULL but for ratios, the c sums NULL without a covariate).
 *
 * @example
 * const input = { tenant: query.tenant, experimentId: 'exp-1', unitType: 'user', from, to, cupedPreDays: 14, metrics };
 * const aggregates = readAnalysisRows((await query.run(buildAnalysisSql(input))).rows, input);
 */
export function buildAnalysisSql(input: AnalysisSqlInput): string {
  const { tenant, experimentId, unitType, from, to, cupedPreDays } = input;
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (!ISO_UTC.test(value)) throw new RangeError(`${name} must be an ISO-8601 UTC time (toISOString()), got ${value}`);
  }
  if (!Number.isInteger(cupedPreDays) || cupedPreDays < 0) throw new RangeError(`cupedPreDays must be a whole number ≥ 0, got ${cupedPreDays}`);
  if (input.metrics.length === 0) throw new RangeError('an analysis reads at least one metric');

  const specs = analysisSpecs(input);
  const sources = new Set<string>();
  for (const s of specs) {
    for (const m of [s.numMetric, s.denMetric]) if (m !== undefined && m !== EXPOSURES_SIDE && m !== FAILURE_MODES_SPEC) sources.add(m);
  }
  const covariates = [...new Set(specs.filter((s) => s.covariate).map((s) => s.numMetric))];
  const preFrom = new Date(Date.parse(from) - cupedPreDays * DAY_MS).toISOString();
  const unitColumn = unitType === 'user' ? 'user_id' : 'workspace_id';
  const t = sqlString(tenant);
  const fmTest = (column: string) => `substr(${column}, 1, ${FAILURE_MODE_METRIC_PREFIX.length}) = ${sqlString(FAILURE_MODE_METRIC_PREFIX)}`;
  const sourceList = sources.size > 0 ? [...sources].map(sqlString).join(', ') : sqlString(EXPOSURES_SIDE);
  const fm = sqlString(FAILURE_MODES_SPEC);
  const isNum = `(ue.metric = k.num_metric OR k.num_metric = ${fm})`;

  const specValues = specs
    .map(
      (s) =>
        `(${sqlString(s.key)}, ${sqlString(s.key === FAILURE_MODES_SPEC ? ROW_ROLE.failureMode : ROW_ROLE.metric)}, ${sqlString(s.kind)}, ${sqlString(s.numMetric)}, ${sqlString(s.numAgg)}, ${nullableString(s.denMetric)}, ${nullableString(s.denAgg)}, ${double(s.cap)}, ${s.covariate ? 1 : 0})`,
    )
    .join(',\n    ');

  // The epoch arithmetic runs once per unit (its pre-period start) and once per pre-exposure event of a covariate.
  const pre = covariates.length === 0 ? '1 = 0' : `e.metric IN (${covariates.map(sqlString).join(', ')}) AND ${isoEpochSecondsSql('e.occurred_at')} >= u.pre_from_s`;

  const x = `CASE kind
      WHEN 'binomial' THEN CASE WHEN num_mx > 0 THEN 1 ELSE 0 END
      WHEN 'mean' THEN ${capped('COALESCE(num_s, 0)')}
      ELSE ${sideValue('num_metric', 'num_agg', 'num')} END`;
  const y = `CASE WHEN kind = 'ratio' THEN ${sideValue('den_metric', 'den_agg', 'den')} END`;
  const c = `CASE WHEN use_cov = 0 THEN NULL
      WHEN kind = 'binomial' THEN CASE WHEN pre_mx > 0 THEN 1 ELSE 0 END
      ELSE ${capped('COALESCE(pre_s, 0)')} END`;
  const nullDoubles = (n: number) => Array.from({ length: n }, () => 'CAST(NULL AS DOUBLE)').join(', ');

  return `WITH spec (key, role, kind, num_metric, num_agg, den_metric, den_agg, cap_value, use_cov) AS (
  VALUES
    ${specValues}
),
exposed AS (
  SELECT unit_id, arm, occurred_at
  FROM ${ARCHIVE_TABLES.exposures}
  WHERE tenant = ${t} AND experiment = ${sqlString(experimentId)} AND unit_type = ${sqlString(unitType)}
    AND dt >= ${sqlString(dayOf(from))} AND dt <= ${sqlString(dayOf(to))}
    AND occurred_at >= ${sqlString(from)} AND occurred_at <= ${sqlString(to)}
),
seen AS (
  SELECT unit_id, MIN(arm) AS arm, MAX(arm) AS last_arm, MIN(occurred_at) AS first_at, COUNT(*) AS exposures
  FROM exposed
  GROUP BY unit_id
),
units AS (
  SELECT unit_id, arm, first_at, CAST(exposures AS DOUBLE) AS exposures,
    ${covariates.length === 0 ? '0' : `${isoEpochSecondsSql('first_at')} - ${cupedPreDays * 86400}`} AS pre_from_s
  FROM seen
  WHERE arm = last_arm
),
joined AS (
  SELECT u.arm, u.unit_id, u.exposures, e.metric, e.value,
    CASE WHEN e.occurred_at >= u.first_at THEN 1 WHEN ${pre} THEN 2 ELSE 0 END AS phase
  FROM units u
  JOIN ${ARCHIVE_TABLES.metrics} e ON e.${unitColumn} = u.unit_id
  WHERE e.tenant = ${t} AND e.dt >= ${sqlString(dayOf(preFrom))} AND e.dt <= ${sqlString(dayOf(to))}
    AND e.occurred_at <= ${sqlString(to)} AND e.occurred_at >= ${sqlString(preFrom)}
    AND (e.metric IN (${sourceList}) OR ${fmTest('e.metric')})
),
unit_events AS (
  SELECT arm, unit_id, exposures, metric,
    SUM(CASE WHEN phase = 1 THEN value END) AS s,
    SUM(CASE WHEN phase = 1 THEN 1 ELSE 0 END) AS n,
    MAX(CASE WHEN phase = 1 THEN value END) AS mx,
    SUM(CASE WHEN phase = 2 THEN value END) AS pre_s,
    MAX(CASE WHEN phase = 2 THEN value END) AS pre_mx
  FROM joined
  GROUP BY arm, unit_id, exposures, metric
),
present AS (
  SELECT ue.arm, ue.unit_id, ue.exposures,
    CASE WHEN k.num_metric = ${fm} THEN ue.metric ELSE k.key END AS key,
    k.role, k.kind, k.num_metric, k.num_agg, k.den_metric, k.den_agg, k.cap_value, k.use_cov,
    SUM(CASE WHEN ${isNum} THEN ue.s END) AS num_s,
    SUM(CASE WHEN ${isNum} THEN ue.n END) AS num_n,
    MAX(CASE WHEN ${isNum} THEN ue.mx END) AS num_mx,
    SUM(CASE WHEN ${isNum} THEN ue.pre_s END) AS pre_s,
    MAX(CASE WHEN ${isNum} THEN ue.pre_mx END) AS pre_mx,
    SUM(CASE WHEN ue.metric = k.den_metric THEN ue.s END) AS den_s,
    SUM(CASE WHEN ue.metric = k.den_metric THEN ue.n END) AS den_n
  FROM unit_events ue
  JOIN spec k ON ue.metric = k.num_metric OR ue.metric = k.den_metric OR (k.num_metric = ${fm} AND ue.n > 0 AND ${fmTest('ue.metric')})
  GROUP BY ue.arm, ue.unit_id, ue.exposures, CASE WHEN k.num_metric = ${fm} THEN ue.metric ELSE k.key END,
    k.role, k.kind, k.num_metric, k.num_agg, k.den_metric, k.den_agg, k.cap_value, k.use_cov
),
per_unit AS (
  SELECT arm, key, role, exposures,
    CAST(${x} AS DOUBLE) AS x,
    CAST(${y} AS DOUBLE) AS y,
    CAST(${c} AS DOUBLE) AS c
  FROM present
)
SELECT 'metric' AS row_kind, arm, key, role, COUNT(*) AS units, SUM(exposures) AS sum_e, SUM(exposures * exposures) AS sum_e2,
  SUM(x) AS sum_x, SUM(x * x) AS sum_x2, SUM(y) AS sum_y, SUM(y * y) AS sum_y2, SUM(x * y) AS sum_xy,
  SUM(c) AS sum_c, SUM(c * c) AS sum_c2, SUM(x * c) AS sum_xc
FROM per_unit
GROUP BY arm, key, role
UNION ALL
SELECT 'arm', arm, CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), COUNT(*), SUM(exposures), SUM(exposures * exposures), ${nullDoubles(8)}
FROM units
GROUP BY arm
UNION ALL
SELECT 'excluded', CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), COUNT(*), ${nullDoubles(10)}
FROM seen
WHERE arm <> last_arm`;
}
