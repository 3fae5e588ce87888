/**
 * The experiments capability's data: online metric events and exposures (what arrives), metric definitions (what a
 * team declares), experiments (arms, unit, metrics, power, ramp, lifecycle), assignments, analyses and decisions.
 * zod 4 schemas that validate requests AND write the OpenAPI document, and type the records.
 *
 * The archive rows (`MetricRow`, `ExposureRow`) are what the processor writes, one JSON object per line, under
 * `raw/metrics/tenant=<t>/dt=<day>/` and `raw/exposures/tenant=<t>/dt=<day>/`: the columns of the Glue tables on AWS
 * and of the DuckDB views locally, so one SQL text serves both engines.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { boundedJson } from '../shared/json-bounds.ts';

extendZodWithOpenApi(z);

/** Limits exported so tests, docs and clients use the same numbers. */
export const EXPERIMENT_LIMITS = {
  /** Items per `{ metrics: [...] }` or `{ exposures: [...] }` batch. */
  batchMaxItems: 500,
  /** How far ahead of the server clock `occurredAt` may be. */
  occurredAtMaxFutureMs: 15 * 60 * 1000,
  /** How far back `occurredAt` may be (late events beyond it would land in partitions analyses no longer read). */
  occurredAtMaxPastMs: 35 * 24 * 60 * 60 * 1000,
  armsMax: 8,
  metricsPerExperimentMax: 20,
  rampStepsMax: 10,
  /** Bytes of an arm's `config` JSON (a serving configuration). */
  armConfigMaxBytes: 8 * 1024,
  /** Units per `POST /v1/assignments` request. */
  assignmentUnitsMax: 100,
} as const;

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=/-]*$/;
/** An id that may sit inside a record key or an archive row: no `#`, no whitespace. */
export const ExperimentId = z
  .string()
  .min(1)
  .max(128)
  .regex(ID_PATTERN, 'letters, digits and . _ : @ + = / - only (no # or spaces), starting with a letter or digit');
const idString = (max: number, description: string) =>
  z.string().min(1).max(max).regex(/^[A-Za-z0-9._:@+=/-]+$/, 'may contain only letters, digits and . _ : @ + = / -').openapi({ description });

/** A metric's name: lowercase words joined by `.` `_` `-` (`latency_ms`, `feedback.thumb`, `failure_mode.wrong-tool`). */
export const MetricName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z][a-z0-9_.-]*$/, 'lowercase letters, digits and _ . - only, starting with a letter')
  .openapi({ example: 'latency_ms' });

const isoDateTime = z.iso.datetime({ offset: true }).openapi({ description: 'ISO 8601 date-time', example: '2026-12-04T10:00:00Z' });

/** The randomisation unit: every assignment, exposure and per-unit aggregation is of one of these. */
export const UnitTypeSchema = z.enum(['user', 'workspace']).openapi('UnitType');
export type UnitType = z.infer<typeof UnitTypeSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Ingest: metric events and exposures
// ---------------------------------------------------------------------------------------------------------------

/**
 * One numeric observation of a turn or a session (`POST /v1/metrics`). Idempotent by `metricEventId`. Its arm is not
 * taken from the event: analyses join metrics to the unit's first exposure, and count only what came after it.
 */
export const MetricEventInput = z
  .strictObject({
    metricEventId: idString(128, 'Client-chosen idempotency key: a retried delivery with the same id is stored once.'),
    metric: MetricName,
    value: z.number().finite().openapi({ description: 'The observation (ms, tokens, USD, errors, seconds, 0/1 …).' }),
    scope: z.enum(['turn', 'session']).default('turn'),
    userId: idString(256, 'The user the observation is about (the `user` unit).'),
    workspaceId: idString(256, 'The workspace (the `workspace` unit), when the product has them.').optional(),
    model: idString(256, 'Checkpoint id of the model that served.'),
    experiment: ExperimentId.optional().openapi({ description: 'Experiment the serving layer assigned (kept; analyses use exposures).' }),
    arm: ExperimentId.optional(),
    sessionId: idString(256, 'The user session.').optional(),
    turnId: idString(256, 'The turn inside the session.').optional(),
    occurredAt: isoDateTime,
  })
  .openapi('MetricEventInput');
export type MetricEventInput = z.input<typeof MetricEventInput>;
export type MetricEvent = z.output<typeof MetricEventInput>;

/**
 * Where a checkpoint actually served a unit in an experiment (`POST /v1/exposures`): the denominator of every rate and
 * the input of the sample-ratio check. Log one per served turn (`turnId`) or at least one per unit; the first one
 * decides when the unit entered.
 */
export const ExposureInput = z
  .strictObject({
    exposureId: idString(128, 'Client-chosen idempotency key.'),
    experiment: ExperimentId,
    arm: ExperimentId,
    checkpoint: idString(200, 'The checkpoint that served (the arm\'s, unless the serving layer fell back).'),
    unitType: UnitTypeSchema,
    unitId: idString(256, 'The unit\'s id (the user or the workspace).'),
    sessionId: idString(256, 'The user session.').optional(),
    turnId: idString(256, 'The turn served.').optional(),
    occurredAt: isoDateTime,
  })
  .openapi('ExposureInput');
export type ExposureInput = z.input<typeof ExposureInput>;
export type Exposure = z.output<typeof ExposureInput>;

export const MetricBatchShape = z.strictObject({ metrics: z.array(z.unknown()).min(1).max(EXPERIMENT_LIMITS.batchMaxItems) });
export const ExposureBatchShape = z.strictObject({ exposures: z.array(z.unknown()).min(1).max(EXPERIMENT_LIMITS.batchMaxItems) });
export const MetricBatchInput = z.strictObject({ metrics: z.array(MetricEventInput).min(1).max(EXPERIMENT_LIMITS.batchMaxItems) }).openapi('MetricBatchInput');
export const ExposureBatchInput = z.strictObject({ exposures: z.array(ExposureInput).min(1).max(EXPERIMENT_LIMITS.batchMaxItems) }).openapi('ExposureBatchInput');

/**
 * One archived metric row (JSON Lines, snake_case: the Glue table's columns). `tenant` and `dt` are partitions (in the
 * path, not the row). Rows are also derived: `feedback.thumb` (1 up, 0 down) from a rated feedback event, and
 * `failure_mode.<mode>` (1) from the classifier's verdict on one.
 */
export interface MetricRow {
  id: string;
  metric: string;
  value: number;
  scope: 'turn' | 'session';
  user_id: string;
  workspace_id: string | null;
  model: string;
  experiment: string | null;
  arm: string | null;
  session_id: string | null;
  turn_id: string | null;
  occurred_at: string;
  received_at: string;
}

/** One archived exposure row. */
export interface ExposureRow {
  id: string;
  experiment: string;
  arm: string;
  checkpoint: string;
  unit_type: UnitType;
  unit_id: string;
  session_id: string | null;
  turn_id: string | null;
  occurred_at: string;
  received_at: string;
}

/** The archive's column lists in order: the Glue tables (`lib/experiments/infra/`) and the DuckDB views use them. */
export const METRIC_ROW_COLUMNS = ['id', 'metric', 'value', 'scope', 'user_id', 'workspace_id', 'model', 'experiment', 'arm', 'session_id', 'turn_id', 'occurred_at', 'received_at'] as const;
export const EXPOSURE_ROW_COLUMNS = ['id', 'experiment', 'arm', 'checkpoint', 'unit_type', 'unit_id', 'session_id', 'turn_id', 'occurred_at', 'received_at'] as const;
/** Column types (Glue / Athena names; DuckDB maps `string` → VARCHAR, `double` → DOUBLE). */
export const ARCHIVE_COLUMN_TYPES: Record<string, 'string' | 'double'> = { value: 'double' };

/** Derived metric names. */
export const FEEDBACK_THUMB_METRIC = 'feedback.thumb';
export const FAILURE_MODE_METRIC_PREFIX = 'failure_mode.';

// ---------------------------------------------------------------------------------------------------------------
// Metric definitions
// ---------------------------------------------------------------------------------------------------------------

/** One side of a ratio: the per-unit sum of a metric's values, or the count of its events; `$exposures` counts exposures (turns served). */
export const MetricAggregateSchema = z
  .strictObject({
    metric: z.union([MetricName, z.literal('$exposures')]),
    aggregate: z.enum(['sum', 'count']).default('sum'),
  })
  .openapi('MetricAggregate');
export type MetricAggregate = z.output<typeof MetricAggregateSchema>;

/**
 * How a declared metric is computed per unit, then compared between arms:
 * - `binomial`: 1 when the unit has an event of `source` with a value > 0 after its first exposure, else 0;
 * - `mean`: the unit's sum of `source` values (0 when none), averaged over units;
 * - `ratio`: per arm Σ numerator / Σ denominator over units, its variance by the delta method (turns of one user are
 *   correlated, so the unit, not the turn, is the sample).
 */
export const MetricDefinitionInput = z
  .strictObject({
    name: MetricName,
    description: z.string().max(1000).optional(),
    kind: z.enum(['binomial', 'mean', 'ratio']),
    /** binomial and mean: the metric events it reads. */
    source: MetricName.optional(),
    /** ratio only. */
    numerator: MetricAggregateSchema.optional(),
    denominator: MetricAggregateSchema.optional(),
    /** Which way is good. */
    direction: z.enum(['increase', 'decrease']),
    /** A mean metric's per-unit value is capped here (winsorised) so one heavy user cannot swing it. */
    capValue: z.number().positive().optional(),
    /** Display unit (`ms`, `USD`, `%`). */
    unit: z.string().max(32).optional(),
    /** A scaling for display (1000 for "per thousand turns"). */
    displayScale: z.number().positive().default(1),
  })
  .superRefine((d, ctx) => {
    if (d.kind === 'ratio') {
      if (!d.numerator) ctx.addIssue({ code: 'custom', path: ['numerator'], message: 'a ratio metric needs a numerator' });
      if (!d.denominator) ctx.addIssue({ code: 'custom', path: ['denominator'], message: 'a ratio metric needs a denominator' });
      if (d.source) ctx.addIssue({ code: 'custom', path: ['source'], message: 'a ratio metric has numerator and denominator, not source' });
    } else {
      if (!d.source) ctx.addIssue({ code: 'custom', path: ['source'], message: `a ${d.kind} metric needs a source metric` });
      if (d.numerator || d.denominator) ctx.addIssue({ code: 'custom', path: [d.numerator ? 'numerator' : 'denominator'], message: 'only a ratio metric has a numerator and a denominator' });
    }
    if (d.capValue !== undefined && d.kind !== 'mean') ctx.addIssue({ code: 'custom', path: ['capValue'], message: 'only a mean metric is capped' });
  })
  .openapi('MetricDefinitionInput');
export type MetricDefinitionInput = z.input<typeof MetricDefinitionInput>;
export type MetricDefinition = z.output<typeof MetricDefinitionInput> & { createdAt: string; builtIn?: boolean };

/**
 * Metrics every tenant has without declaring them. `failure-mode rates` are not listed: the analysis adds one ratio per
 * mode seen (`failure_mode.<mode>` count per thousand exposures), adjusted together (Benjamini–Hochberg).
 */
export const BUILT_IN_METRICS: readonly MetricDefinition[] = [
  { name: 'thumbs_up_rate', description: 'Share of rated turns rated up (feedback with a rating).', kind: 'ratio', numerator: { metric: FEEDBACK_THUMB_METRIC, aggregate: 'sum' }, denominator: { metric: FEEDBACK_THUMB_METRIC, aggregate: 'count' }, direction: 'increase', unit: '%', displayScale: 100, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'latency_ms_per_turn', description: 'Mean latency of a turn.', kind: 'ratio', numerator: { metric: 'latency_ms', aggregate: 'sum' }, denominator: { metric: 'latency_ms', aggregate: 'count' }, direction: 'decrease', unit: 'ms', displayScale: 1, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'tool_errors_per_turn', description: 'Tool errors per turn served.', kind: 'ratio', numerator: { metric: 'tool_errors', aggregate: 'sum' }, denominator: { metric: '$exposures', aggregate: 'count' }, direction: 'decrease', displayScale: 1, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'cost_usd', description: 'Cost per unit.', kind: 'mean', source: 'cost_usd', direction: 'decrease', unit: 'USD', displayScale: 1, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'tokens', description: 'Tokens per unit.', kind: 'mean', source: 'tokens', direction: 'decrease', displayScale: 1, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'accepted', description: 'Units that accepted at least one change (`accepted` events with value > 0).', kind: 'binomial', source: 'accepted', direction: 'increase', unit: '%', displayScale: 100, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
  { name: 'time_to_accept_s', description: 'Mean seconds from answer to acceptance.', kind: 'ratio', numerator: { metric: 'time_to_accept_s', aggregate: 'sum' }, denominator: { metric: 'time_to_accept_s', aggregate: 'count' }, direction: 'decrease', unit: 's', displayScale: 1, createdAt: '1970-01-01T00:00:00.000Z', builtIn: true },
];

// ---------------------------------------------------------------------------------------------------------------
// Experiments
// ---------------------------------------------------------------------------------------------------------------

export const ArmSchema = z
  .strictObject({
    id: ExperimentId,
    /** The checkpoint this arm serves (registry id). */
    checkpoint: idString(200, 'Registry checkpoint id the arm serves.'),
    /** A serving configuration for the serving layer (sampling, system prompt…), returned with the assignment. */
    config: z.record(z.string(), z.unknown()).superRefine(boundedJson({ maxBytes: EXPERIMENT_LIMITS.armConfigMaxBytes })).default({}),
    /** Relative traffic weight (weights need not sum to 1). */
    weight: z.number().positive().max(1000).default(1),
    /** The control arm (exactly one): every comparison is against it. */
    control: z.boolean().default(false),
  })
  .openapi('Arm');
export type Arm = z.output<typeof ArmSchema>;

/** The experiment's metrics by role; names are declared metric definitions or built-ins. */
export const ExperimentMetricsSchema = z
  .strictObject({
    primary: MetricName,
    secondary: z.array(MetricName).max(EXPERIMENT_LIMITS.metricsPerExperimentMax).default([]),
    /** A guardrail breach (the always-valid interval wholly on the bad side beyond `maxRegression`) stops the arm at once. */
    guardrails: z
      .array(z.strictObject({ metric: MetricName, maxRegression: z.number().min(0).max(1).default(0).openapi({ description: 'Relative regression tolerated (0.05 = 5%).' }) }))
      .max(EXPERIMENT_LIMITS.metricsPerExperimentMax)
      .default([]),
  })
  .openapi('ExperimentMetrics');

/** A ramp step: share of eligible units exposed, and the least hours it holds before widening (when guardrails hold). */
export const RampStepSchema = z.strictObject({ percent: z.number().gt(0).max(100), minHours: z.number().min(0).max(24 * 90).default(24) }).openapi('RampStep');

export const StoppingRuleSchema = z
  .discriminatedUnion('kind', [
    /** Decide at the planned sample only; intervals before it are shown but not acted on. */
    z.strictObject({ kind: z.literal('fixed-horizon') }),
    /** Always-valid intervals (asymptotic confidence sequences): a decision may be taken whenever they exclude 0. */
    z.strictObject({ kind: z.literal('sequential') }),
  ])
  .openapi('StoppingRule');

export const PowerInputSchema = z
  .strictObject({
    /** Minimum detectable effect, relative to the control mean (0.02 = 2%). */
    mde: z.number().gt(0).max(10),
    alpha: z.number().gt(0).lt(0.5).default(0.05),
    power: z.number().gt(0.5).lt(1).default(0.8),
    /** The primary metric's control mean and per-unit standard deviation (binomial: sd is derived from the mean). */
    baselineMean: z.number().finite(),
    baselineSd: z.number().positive().optional(),
  })
  .openapi('PowerInput');

export const ExperimentInput = z
  .strictObject({
    id: ExperimentId,
    name: z.string().min(1).max(200),
    hypothesis: z.string().max(4000).optional(),
    unitType: UnitTypeSchema.default('user'),
    /** The hashing seed (default the id): a new seed reshuffles units. */
    seed: z.string().min(1).max(128).optional(),
    arms: z.array(ArmSchema).min(2).max(EXPERIMENT_LIMITS.armsMax),
    metrics: ExperimentMetricsSchema,
    /** Power calculation: the planned sample is worked out from it (or given as `plannedUnitsPerArm`). */
    power: PowerInputSchema.optional(),
    plannedUnitsPerArm: z.number().int().positive().optional(),
    stoppingRule: StoppingRuleSchema.default({ kind: 'sequential' }),
    /** Share of units (0–0.5) kept out of the experiment entirely and served the control: a long-term holdout. */
    holdout: z.number().min(0).max(0.5).default(0),
    ramp: z.array(RampStepSchema).min(1).max(EXPERIMENT_LIMITS.rampStepsMax).default([{ percent: 100, minHours: 0 }]),
    /** Stop and say so after this many days running. */
    maxDurationDays: z.number().positive().max(365).default(28),
    /** Days before a unit's first exposure read as the CUPED covariate (0 turns CUPED off). */
    cupedPreDays: z.number().int().min(0).max(60).default(14),
  })
  .superRefine((e, ctx) => {
    const controls = e.arms.filter((a) => a.control === true).length;
    if (controls !== 1) ctx.addIssue({ code: 'custom', path: ['arms'], message: `exactly one arm has control: true (found ${controls})` });
    const ids = new Set<string>();
    e.arms.forEach((a, i) => {
      if (ids.has(a.id)) ctx.addIssue({ code: 'custom', path: ['arms', i, 'id'], message: `duplicate arm id ${a.id}` });
      ids.add(a.id);
    });
    if (!e.power && e.plannedUnitsPerArm === undefined) ctx.addIssue({ code: 'custom', path: ['power'], message: 'give power (mde, baselineMean…) or plannedUnitsPerArm' });
    for (let i = 1; i < e.ramp.length; i++) {
      if (e.ramp[i]!.percent <= e.ramp[i - 1]!.percent) ctx.addIssue({ code: 'custom', path: ['ramp', i, 'percent'], message: 'ramp steps widen: each percent above the one before' });
    }
    const names = [e.metrics.primary, ...e.metrics.secondary, ...e.metrics.guardrails.map((g) => g.metric)];
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', path: ['metrics'], message: 'a metric appears in more than one role' });
  })
  .openapi('ExperimentInput');
export type ExperimentInput = z.input<typeof ExperimentInput>;
export type ExperimentDefinition = z.output<typeof ExperimentInput>;

export const EXPERIMENT_STATUSES = ['draft', 'running', 'stopped', 'decided'] as const;
export const ExperimentStatusSchema = z.enum(EXPERIMENT_STATUSES).openapi('ExperimentStatus');
export type ExperimentStatus = z.infer<typeof ExperimentStatusSchema>;

/** Why an arm was stopped (it then serves no new units; its units get the control). */
export const StoppedArmSchema = z.strictObject({ arm: ExperimentId, reason: z.enum(['guardrail', 'srm', 'person']), at: isoDateTime, analysisId: z.string().optional(), detail: z.string().max(2000) });
export type StoppedArm = z.infer<typeof StoppedArmSchema>;

export const DecisionKindSchema = z.enum(['ship', 'rollback', 'extend']).openapi('DecisionKind');
export const ExperimentDecisionSchema = z
  .strictObject({
    kind: DecisionKindSchema,
    /** ship: the winning arm (its checkpoint becomes the incumbent); rollback: back to the control. */
    arm: ExperimentId.optional(),
    reason: z.string().min(1).max(4000),
    by: z.string().min(1).max(256),
    at: isoDateTime,
    /** The analysis the decision rests on. */
    analysisId: z.string(),
    /** extend: days added to `maxDurationDays`. */
    extendDays: z.number().positive().max(365).optional(),
    /** ship: the checkpoint made incumbent. */
    promoted: z.string().optional(),
  })
  .openapi('ExperimentDecision');
export type ExperimentDecision = z.infer<typeof ExperimentDecisionSchema>;

/** Where a draft came from: a person, or a training run's checkpoint that beat the incumbent in a sweep. */
export const ExperimentOriginSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('person'), by: z.string() }),
  z.strictObject({ kind: z.literal('training-proposal'), runId: z.string(), proposalId: z.string(), sweepId: z.string(), checkpoint: z.string(), evidence: z.array(z.record(z.string(), z.unknown())) }),
]);

/** The stored experiment: its definition and where it stands. */
export const ExperimentRecordSchema = z
  .strictObject({
    definition: z.custom<ExperimentDefinition>((v) => typeof v === 'object' && v !== null).openapi({ type: 'object', description: 'The definition as created (ExperimentInput with its defaults applied).' }),
    status: ExperimentStatusSchema,
    /** Units per arm the power calculation (or the author) planned. */
    plannedUnitsPerArm: z.number().int().positive(),
    /** Index into `definition.ramp` of the step in force. */
    rampStep: z.number().int().min(0),
    rampStepSince: isoDateTime.optional(),
    stoppedArms: z.array(StoppedArmSchema),
    origin: ExperimentOriginSchema,
    createdAt: isoDateTime,
    startedAt: isoDateTime.optional(),
    stoppedAt: isoDateTime.optional(),
    stopReason: z.string().optional(),
    decision: ExperimentDecisionSchema.optional(),
    /** The newest analysis. */
    lastAnalysisId: z.string().optional(),
    lastAnalysisAt: isoDateTime.optional(),
    /** Optimistic concurrency: every change writes revision + 1 conditionally. */
    revision: z.number().int().min(0),
  })
  .openapi('Experiment');
export type ExperimentRecord = z.infer<typeof ExperimentRecordSchema>;

/** One entry of an experiment's history: every change recorded (who, what, when, the analysis it rests on). */
export const ExperimentChangeSchema = z.strictObject({
  experimentId: ExperimentId,
  at: isoDateTime,
  seq: z.number().int().min(0),
  change: z.enum(['created', 'started', 'ramped', 'arm-stopped', 'stopped', 'decided', 'extended', 'analysed', 'rolled-back']),
  by: z.string(),
  detail: z.record(z.string(), z.unknown()),
});
export type ExperimentChange = z.infer<typeof ExperimentChangeSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Assignment
// ---------------------------------------------------------------------------------------------------------------

export const AssignmentRequest = z
  .strictObject({
    unitType: UnitTypeSchema.default('user'),
    unitIds: z.array(idString(256, 'A unit id.')).min(1).max(EXPERIMENT_LIMITS.assignmentUnitsMax),
    /** Only these experiments (default: every running one of the unit type). */
    experiments: z.array(ExperimentId).max(50).optional(),
  })
  .openapi('AssignmentRequest');

/**
 * Why a unit got what it got: `assigned` (in the experiment, this arm), `holdout` (kept out: control), `not-ramped`
 * (outside the current ramp share: control, not exposed), `arm-stopped` (its arm was stopped: control, not analysed).
 */
export const AssignmentReasonSchema = z.enum(['assigned', 'holdout', 'not-ramped', 'arm-stopped']);
export const AssignmentSchema = z
  .strictObject({
    experiment: ExperimentId,
    unitId: z.string(),
    arm: ExperimentId,
    checkpoint: z.string(),
    config: z.record(z.string(), z.unknown()),
    reason: AssignmentReasonSchema,
    /** Whether the serving layer should log an exposure when it serves this (only `assigned` units are analysed). */
    logExposure: z.boolean(),
  })
  .openapi('Assignment');
export type Assignment = z.infer<typeof AssignmentSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Analysis
// ---------------------------------------------------------------------------------------------------------------

export const IntervalSchema = z.strictObject({ low: z.number(), high: z.number() });

/** Per arm, what the aggregation found for one metric (per-unit values; ratio metrics keep both sides). */
export const ArmSummarySchema = z.strictObject({
  arm: z.string(),
  units: z.number().int().min(0),
  /** Metric value (binomial: share; mean: per-unit mean; ratio: Σnum / Σden). */
  value: z.number().nullable(),
  /** Standard error of `value` (delta method for ratios). */
  se: z.number().nullable(),
  numeratorSum: z.number().optional(),
  denominatorSum: z.number().optional(),
});

/** One treatment arm against the control on one metric. */
export const ComparisonSchema = z.strictObject({
  arm: z.string(),
  control: z.string(),
  /** treatment − control, absolute. */
  difference: z.number().nullable(),
  /** (treatment − control) / control. */
  relativeLift: z.number().nullable(),
  /** Fixed-horizon 95% (1 − alpha) interval of the relative lift. */
  ci: IntervalSchema.nullable(),
  /** Always-valid interval of the relative lift (asymptotic confidence sequence). */
  sequentialCi: IntervalSchema.nullable(),
  pValue: z.number().nullable(),
  /** Holm (primary + secondary + guardrails) or Benjamini–Hochberg (failure modes) adjusted. */
  adjustedPValue: z.number().nullable(),
  /** Bayesian chance that the treatment is better (in the metric's good direction), normal approximation. */
  chanceToWin: z.number().nullable(),
  cuped: z.strictObject({ applied: z.boolean(), varianceReduction: z.number().nullable(), theta: z.number().nullable() }),
  /** better / worse in the metric's good direction; `too-few-units` below the minimum sample (with the rule in `rule`). */
  verdict: z.enum(['better', 'worse', 'inconclusive', 'too-few-units']),
  /** The rule the verdict followed, in words a user reads. */
  rule: z.string(),
});

export const MetricAnalysisSchema = z.strictObject({
  metric: z.string(),
  role: z.enum(['primary', 'secondary', 'guardrail', 'failure-mode']),
  kind: z.enum(['binomial', 'mean', 'ratio']),
  direction: z.enum(['increase', 'decrease']),
  displayScale: z.number(),
  arms: z.array(ArmSummarySchema),
  comparisons: z.array(ComparisonSchema),
  /** Guardrails only: breached (the always-valid interval wholly past −maxRegression on the bad side). */
  guardrailBreached: z.boolean().optional(),
});
export type MetricAnalysis = z.infer<typeof MetricAnalysisSchema>;

export const SrmSchema = z.strictObject({
  expectedShares: z.record(z.string(), z.number()),
  observedUnits: z.record(z.string(), z.number()),
  chiSquared: z.number().nullable(),
  pValue: z.number().nullable(),
  /** p < 0.001. */
  mismatch: z.boolean(),
});

export const ExperimentAnalysisSchema = z
  .strictObject({
    analysisId: z.string(),
    experimentId: ExperimentId,
    at: isoDateTime,
    /** The exposure window read. */
    from: isoDateTime,
    to: isoDateTime,
    unitsPerArm: z.record(z.string(), z.number()),
    /** Units exposed in more than one arm: left out of every metric and of the sample-ratio check. */
    excludedUnits: z.number().int().min(0).optional(),
    plannedUnitsPerArm: z.number(),
    /** Share of the planned sample reached (min over arms). */
    progress: z.number(),
    srm: SrmSchema,
    metrics: z.array(MetricAnalysisSchema),
    /** What the analysis recommends, with the rule behind it (a person or the schedule acts). */
    recommendation: z.strictObject({
      action: z.enum(['continue', 'ship', 'rollback', 'stop-arm', 'widen-ramp', 'extend']),
      arm: z.string().optional(),
      because: z.string(),
    }),
    engine: z.enum(['athena', 'duckdb']),
    queryMs: z.number(),
  })
  .openapi('ExperimentAnalysis');
export type ExperimentAnalysis = z.infer<typeof ExperimentAnalysisSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

export const DecideInput = z
  .strictObject({
    kind: DecisionKindSchema,
    arm: ExperimentId.optional(),
    reason: z.string().min(1).max(4000),
    extendDays: z.number().positive().max(365).optional(),
  })
  .superRefine((d, ctx) => {
    if (d.kind === 'ship' && !d.arm) ctx.addIssue({ code: 'custom', path: ['arm'], message: 'ship names the arm to ship' });
    if (d.kind === 'extend' && d.extendDays === undefined) ctx.addIssue({ code: 'custom', path: ['extendDays'], message: 'extend says by how many days' });
  })
  .openapi('DecideInput');

export const StopInput = z.strictObject({ reason: z.string().min(1).max(4000), arm: ExperimentId.optional() }).openapi('StopExperimentInput');
