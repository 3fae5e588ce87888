/**
 * The API's answers as the insights pages read them: the fields they render, typed once for the browser project
 * (which cannot import the server's zod schemas and their Node dependencies). Each mirrors the schema named beside it;
 * fields a page does not read are left out, so an additive API change never breaks a page.
 *
 * @example
 * const { items } = await api.get<{ items: ResultRow[] }>('/v1/results', { suite: 'forge-py' });
 */

export type HarnessMode = 'strict' | 'lenient';
export interface Interval {
  low: number;
  high: number;
}

/** `lib/registry/schemas.ts` ResultView. */
export interface ResultRow {
  sweepId: string;
  checkpoint: string;
  suite: string;
  suiteVersion: number;
  mode: HarnessMode;
  score: number | null;
  n: number;
  tasks: number;
  attempts: number;
  passes: number;
  ungraded: number;
  infrastructureErrors: number;
  ci: Interval | null;
  shards: number;
  shardsAggregated: number;
  shardsFailed: number;
  at: string;
  updatedAt: string;
}

/** `lib/registry/schemas.ts` CheckpointView. */
export interface CheckpointRow {
  id: string;
  model: string;
  parent?: string;
  trainingRun?: string;
  status: 'active' | 'retired';
  registeredAt: string;
}

/** `lib/registry/incumbent.ts` Incumbent. */
export interface IncumbentView {
  checkpoint: string;
  since: string;
  experimentId?: string;
}

/** `lib/registry/schemas.ts` SuiteView. */
export interface SuiteRow {
  id: string;
  version: number;
  visibility: 'public' | 'private';
  status: 'active' | 'saturated' | 'retired';
  owner: string;
  description?: string;
  taskCount: number;
  saturationThreshold?: number;
  createdAt: string;
  saturatedAt?: string;
  retiredAt?: string;
  retiredReason?: string;
  retiredBy?: string;
  usefulLifeDays?: number;
  best?: { score: number; checkpoint: string; sweepId: string; at: string };
}

/** `lib/registry/schemas.ts` SuiteDetailView. */
export interface SuiteDetailView extends SuiteRow {
  usefulLife: { startedAt: string; endedAt?: string; endedBy?: 'saturation' | 'retirement'; days: number };
  bestScores: Array<{ at: string; sweepId: string; checkpoint: string; score: number; suiteVersion: number }>;
}

/** `lib/experiments/schemas.ts` ExperimentRecordSchema (and its definition). */
export interface ExperimentView {
  definition: {
    id: string;
    name: string;
    hypothesis?: string;
    unitType: string;
    arms: Array<{ id: string; checkpoint: string; weight: number; control: boolean }>;
    metrics: { primary: string; secondary: string[]; guardrails: Array<{ metric: string; maxRegression: number }> };
    stoppingRule: { kind: string };
    holdout: number;
    ramp: Array<{ percent: number; minHours: number }>;
    maxDurationDays: number;
  };
  status: 'draft' | 'running' | 'stopped' | 'decided';
  plannedUnitsPerArm: number;
  rampStep: number;
  rampStepSince?: string;
  stoppedArms: Array<{ arm: string; reason: string; at: string; detail: string }>;
  origin: { kind: 'person'; by: string } | { kind: 'training-proposal'; runId: string; checkpoint: string; sweepId: string };
  createdAt: string;
  startedAt?: string;
  stoppedAt?: string;
  stopReason?: string;
  decision?: { kind: string; arm?: string; reason: string; by: string; at: string; promoted?: string; extendDays?: number };
  lastAnalysisAt?: string;
}

export interface ExperimentChangeView {
  at: string;
  seq: number;
  change: string;
  by: string;
}

/** `lib/experiments/schemas.ts` ComparisonSchema. */
export interface ComparisonView {
  arm: string;
  control: string;
  relativeLift: number | null;
  ci: Interval | null;
  sequentialCi: Interval | null;
  adjustedPValue: number | null;
  chanceToWin: number | null;
  verdict: 'better' | 'worse' | 'inconclusive' | 'too-few-units';
  rule: string;
}

/** `lib/experiments/schemas.ts` ExperimentAnalysisSchema. */
export interface AnalysisView {
  analysisId: string;
  at: string;
  unitsPerArm: Record<string, number>;
  progress: number;
  srm: { expectedShares: Record<string, number>; observedUnits: Record<string, number>; pValue: number | null; mismatch: boolean };
  metrics: Array<{
    metric: string;
    role: 'primary' | 'secondary' | 'guardrail' | 'failure-mode';
    direction: 'increase' | 'decrease';
    displayScale: number;
    arms: Array<{ arm: string; units: number; value: number | null }>;
    comparisons: ComparisonView[];
    guardrailBreached?: boolean;
  }>;
  recommendation: { action: string; arm?: string; because: string };
}

/** `lib/training/schemas.ts` TrainingRunSchema. */
export interface TrainingRunView {
  runId: string;
  request: {
    base: string;
    dataset: { runs: string[]; sweeps: string[]; feedback?: { since?: string; until?: string; limit: number }; decisions: string };
    trainer: Record<string, unknown> & { steps: number; learningRate: number; batchSize: number; gpus: number; nodes: number; lora?: { rank: number; alpha: number } };
    sweep: boolean;
    proposeExperiment: boolean;
    stallMinutes: number;
  };
  status: string;
  createdAt: string;
  updatedAt: string;
  createdBy?: string;
  datasetId?: string;
  step?: number;
  lastHeartbeatAt?: string;
  checkpointId?: string;
  sweepId?: string;
  error?: { error: string; cause: string };
  endedAt?: string;
  resumes?: number;
  stoppedBy?: string;
}

/** One line of a run's `metrics.jsonl` (`TrainingMetricsLineSchema`: step, at, loss, and any other numbers). */
export type TrainingMetricsLineView = Record<string, unknown> & { step: number; at: string; loss: number };

/** `lib/harness/integrity/integrity-flag.ts` IntegrityFlagSchema. */
export interface IntegrityFlagView {
  kind: string;
  file: string;
  line: number | null;
  evidence: string;
  source: string;
}



/** `lib/registry/attempt-schemas.ts` BoundedTextSchema: a text cut to a size. */
export interface BoundedText {
  text: string;
  bytes: number;
  truncated: boolean;
}

export type AttemptOutcome = 'passed' | 'failed' | 'infrastructure-error' | 'ungraded';

/** `lib/registry/attempt-schemas.ts` AttemptSummarySchema. */
export interface AttemptSummaryView {
  id: string;
  attemptId: string;
  runId: string;
  sweepId?: string;
  checkpoint?: string;
  suite: string;
  taskId: string;
  mode: HarnessMode;
  n: number;
  outcome: AttemptOutcome;
  stopReason?: string;
  integrityFailed: boolean;
  integrityFlags: number;
  judgeScore: number | null;
  turns: number;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  tries: number;
  model: string;
  startedAt: string;
  finishedAt: string;
}

/** `lib/registry/attempt-schemas.ts` TrajectoryStepViewSchema. */
export type TrajectoryStepView =
  | { type: 'message'; seq: number; at: string; role: 'system' | 'user'; content: BoundedText }
  | {
      type: 'assistant';
      seq: number;
      at: string;
      messageId: string;
      turn: number;
      content: BoundedText;
      reasoning?: BoundedText;
      toolCalls: Array<{ id: string; name: string; arguments: BoundedText }>;
      finishReason: string;
      usage: { promptTokens: number; completionTokens: number };
      durationMs: number;
    }
  | { type: 'tool_result'; seq: number; at: string; toolCallId: string; name: string; isError: boolean; exitCode?: number | null; content: BoundedText; durationMs: number }
  | { type: 'event'; seq: number; at: string; kind: string; message: BoundedText; toolCallId?: string }
  | { type: 'outcome'; seq: number; at: string; stopReason: string; limitsHit: string[]; turns: number; durationMs: number; costUsd?: number };

/** `lib/registry/attempt-schemas.ts` TrajectoryPageSchema. */
export interface TrajectoryPageView {
  available: boolean;
  problem?: string;
  agent?: string;
  policy?: string;
  totalSteps: number;
  stepOffset: number;
  steps: TrajectoryStepView[];
  nextStepOffset?: number;
}

/** `lib/registry/attempt-schemas.ts` AttemptDetailSchema. */
export interface AttemptDetailView {
  attempt: AttemptSummaryView;
  grade: {
    passed: boolean;
    reasons: string[];
    tests: Array<{ id: string; outcome: 'passed' | 'failed' | 'skipped' | 'error' | 'missing' }>;
    testsTruncated: boolean;
    counts?: { passed: number; failed: number; skipped: number; error: number };
  } | null;
  integrity: { failed: boolean; reasons: string[]; flags: Array<IntegrityFlagView & { messageId?: string; toolCallId?: string }>; observations: number };
  judge: { judge: string; score: number; complete: boolean; criteria: Array<{ id: string; verdict: string; score?: number; reason: string; voided?: string }> } | null;
  decisions: Array<{ decisionId: string; messageId: string; turn: number; hintClass: string; hint: string; status: string; toolCallId?: string }>;
  history: Array<{ try: number; outcome: string; startedAt: string; durationMs: number; error?: string }>;
  diff: BoundedText | null;
  trajectory: TrajectoryPageView;
}
