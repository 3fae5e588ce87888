/**
 * What a derivation needs to run judges: a `JudgeRunner` per judge definition (whatever its kind), the text a
 * student reads of a subject, the cost of a verdict, and the mapping between a label's values and a student's
 * targets. The runners are ports-level: the local runtime and the Lambda build them the same way
 * (`defaultJudgeRunners`), tests may hand in their own.
 *
 * Cost per verdict: what the runner reports (`JudgeLabels.costUsd`), else an estimate from the price the settings
 * give the judge's model (`pricing`: per verdict, or per second of latency for a served endpoint), and for a reward
 * model the CPU seconds it took at `rewardModelUsdPerSecond`. A model with no price has no cost, and then a
 * `requireCheaper` rule refuses it (an unknown cost is never taken as cheap).
 *
 * @example
 * const runners = defaultJudgeRunners(ports, settings);
 * const run = runners.runnerFor(definition); // JudgeRunner | undefined (no runner for this kind)
 * const text = await runners.textOf({ kind: 'signal', signalKey: 'feedback:e1' });
 */
import { z } from 'zod';
import { STAGES, type JudgeModelPrice, type StageName } from '../../config/stages.ts';
import { ValidationError } from '../../errors.ts';
import { getAttemptRecordByKey } from '../annotation/attempt-lookup.ts';
import { failureModeJudgeRunner } from '../calibrate-judge.ts';
import { createModel } from '../../models/create-model.ts';
import { flattenText, loadSignalByKey } from '../../modes/signal.ts';
import type { Ports } from '../../ports/ports.ts';
import type { JudgeDefinition } from '../judge-identity.ts';
import type { JudgeLabels, JudgeRunner, Subject } from '../schemas.ts';
import { pairwiseJudgeRunner } from '../runners/pairwise-runner.ts';
import { rubricJudgeRunner } from '../runners/rubric-runner.ts';
import { parseRewardModel, REWARD_MODEL_METADATA, REWARD_MODEL_WEIGHTS, type RewardModel } from './reward-model.ts';

/** A reward model's `model` field: `reward-model:<blob prefix of its two files>`. */
export const REWARD_MODEL_PREFIX = 'reward-model:';

/** Characters of a subject a student reads. */
export const SUBJECT_TEXT_CHARS = 8_000;

/** A model's price: `prefix` matches a judge's `model` that starts with it (the longest wins); per verdict or per second busy. */
export type ModelPrice = JudgeModelPrice;

/** The variable the derive step and judges/api read prices from (the stacks set it from the stage's `judges.pricing`). */
export const JUDGE_PRICING_ENV = 'FLYWHEEL_JUDGE_PRICING';

/**
 * The environment that carries a stage's judge prices to a function (`{}` when the stage lists none).
 *
 * @example
 * for (const [name, value] of Object.entries(judgePricingEnvironment(settings.judges.pricing))) fn.addEnvironment(name, value);
 */
export function judgePricingEnvironment(pricing: readonly JudgeModelPrice[]): Record<string, string> {
  return pricing.length > 0 ? { [JUDGE_PRICING_ENV]: JSON.stringify(pricing) } : {};
}

/** Whether `model` has a price in `settings` (a reward model always has: the CPU it runs on). */
export function hasPrice(settings: DeriveSettings, model: string): boolean {
  return verdictCost(settings, model, 1000) !== undefined;
}

export interface DeriveSettings {
  pricing: ModelPrice[];
  /** The CPU a reward model's verdict runs on (default: 1 GB of Lambda, $0.0000166667 per second). */
  rewardModelUsdPerSecond: number;
  /** Unlabelled production items the teacher also labels for the training set (at most). */
  maxProductionItems: number;
  /** Share of teacher items held out of training to measure the student against its teacher. */
  holdoutFraction: number;
  /** The trainer's seed and epochs. */
  seed: number;
  epochs: number;
  /** Verdicts in flight at once while calibrating and collecting. */
  concurrency: number;
  /** Bootstrap resamples of each calibration report. */
  resamples?: number;
}

export const DEFAULT_DERIVE_SETTINGS: DeriveSettings = {
  pricing: [],
  rewardModelUsdPerSecond: 0.0000166667,
  maxProductionItems: 500,
  holdoutFraction: 0.2,
  seed: 0,
  epochs: 300,
  concurrency: 8,
};

/**
 * The settings from the environment: `FLYWHEEL_JUDGE_PRICING` (JSON array of `{ prefix, usdPerVerdict?,
 * usdPerSecond? }`; unset: the `judges.pricing` of the stage `FLYWHEEL_STAGE` names, if any),
 * `FLYWHEEL_DERIVE_EPOCHS`, `FLYWHEEL_DERIVE_MAX_PRODUCTION_ITEMS`.
 *
 * @example
 * deriveSettingsFromEnv({ FLYWHEEL_JUDGE_PRICING: '[{"prefix":"bedrock:","usdPerVerdict":0.002}]' });
 */
export function deriveSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): DeriveSettings {
  const stage = env.FLYWHEEL_STAGE;
  let pricing: ModelPrice[] = stage && Object.hasOwn(STAGES, stage) ? [...STAGES[stage as StageName].judges.pricing] : [];
  const raw = env[JUDGE_PRICING_ENV];
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    const prices = z.array(z.strictObject({ prefix: z.string(), usdPerVerdict: z.number().nonnegative().optional(), usdPerSecond: z.number().nonnegative().optional() })).safeParse(parsed);
    if (!prices.success) throw new ValidationError('FLYWHEEL_JUDGE_PRICING is not a JSON array of prices', [{ path: 'FLYWHEEL_JUDGE_PRICING', message: 'JSON array of { prefix, usdPerVerdict?, usdPerSecond? }' }]);
    pricing = prices.data;
  }
  const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
  return {
    ...DEFAULT_DERIVE_SETTINGS,
    pricing,
    epochs: num(env.FLYWHEEL_DERIVE_EPOCHS, DEFAULT_DERIVE_SETTINGS.epochs),
    maxProductionItems: num(env.FLYWHEEL_DERIVE_MAX_PRODUCTION_ITEMS, DEFAULT_DERIVE_SETTINGS.maxProductionItems),
  };
}

/** The cost of one verdict of `model` that took `latencyMs`, or undefined when the model has no price. */
export function verdictCost(settings: DeriveSettings, model: string, latencyMs: number): number | undefined {
  if (model.startsWith(REWARD_MODEL_PREFIX)) return (latencyMs / 1000) * settings.rewardModelUsdPerSecond;
  const price = settings.pricing.filter((p) => model.startsWith(p.prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
  if (!price) return undefined;
  if (price.usdPerVerdict !== undefined) return price.usdPerVerdict;
  if (price.usdPerSecond !== undefined) return (latencyMs / 1000) * price.usdPerSecond;
  return undefined;
}

/** A label value as a student's target: pass/yes 1, fail/no 0, a 0.5, undefined for what it does not learn. */
export function targetOf(label: string, value: string): number | undefined {
  if (label === 'preference') return value === 'a' ? 1 : value === 'b' ? 0 : value === 'tie' ? 0.5 : undefined;
  if (value === 'pass' || value === 'yes') return 1;
  if (value === 'fail' || value === 'no') return 0;
  return undefined;
}

/** A student's probability as a label value (the inverse of `targetOf` at 0.5). */
export function valueOf(label: string, probability: number): string {
  if (label === 'preference') return probability > 0.5 ? 'a' : probability < 0.5 ? 'b' : 'tie';
  const positive = probability >= 0.5;
  return label.startsWith('mode:') ? (positive ? 'yes' : 'no') : positive ? 'pass' : 'fail';
}

export interface JudgeRunners {
  /** The runner of a judge definition, or undefined when this deployment cannot run its kind. */
  runnerFor(def: JudgeDefinition): JudgeRunner | undefined;
  /** The text a student reads of a subject (a pair: each side's). */
  textOf(subject: Subject): Promise<string | { a: string; b: string }>;
}

/** Adds the estimated cost to a runner's answers when it reports none. */
export function withCost(run: JudgeRunner, settings: DeriveSettings, model: string): JudgeRunner {
  return async (subject) => {
    const labels = await run(subject);
    if (labels.costUsd !== undefined) return labels;
    const cost = verdictCost(settings, model, labels.latencyMs);
    return cost === undefined ? labels : { ...labels, costUsd: cost };
  };
}

/** A reward model (the trainer's files under a blob prefix) as a judge runner. */
export function rewardModelRunner(ports: Pick<Ports, 'blobs'>, prefix: string, textOf: JudgeRunners['textOf']): JudgeRunner {
  let model: Promise<RewardModel> | undefined;
  const load = async () => {
    const [weights, metadata] = await Promise.all([ports.blobs.get(`${prefix}/${REWARD_MODEL_WEIGHTS}`), ports.blobs.get(`${prefix}/${REWARD_MODEL_METADATA}`)]);
    if (!weights || !metadata) throw new ValidationError(`No reward model under ${prefix}`, [{ path: 'model', message: 'the trainer wrote no model there' }]);
    return parseRewardModel(weights, metadata);
  };
  return async (subject): Promise<JudgeLabels> => {
    model ??= load();
    const m = await model;
    const text = await textOf(subject);
    const started = performance.now();
    let labels: Record<string, string>;
    if (typeof text === 'string') {
      const scores = m.scores(text);
      labels = Object.fromEntries(Object.entries(scores).map(([label, p]) => [label, valueOf(label, p)]));
    } else {
      labels = { preference: valueOf('preference', m.preferA(text.a, text.b)) };
    }
    return { labels, latencyMs: performance.now() - started };
  };
}

/**
 * The runners this deployment has: the failure-mode, rubric and pairwise judges (any OpenAI-compatible or Bedrock
 * model), reward models (scored in process), and whatever `extra` adds or replaces by kind.
 */
export function defaultJudgeRunners(
  ports: Pick<Ports, 'records' | 'blobs'>,
  settings: DeriveSettings,
  extra: Partial<Record<JudgeDefinition['kind'], (def: JudgeDefinition) => JudgeRunner>> = {},
): JudgeRunners {
  const textOf = (subject: Subject) => subjectText(ports, subject);
  return {
    textOf,
    runnerFor(def) {
      const own = extra[def.kind];
      if (own) return withCost(own(def), settings, def.model);
      if (def.kind === 'reward-model') {
        if (!def.model.startsWith(REWARD_MODEL_PREFIX)) return undefined;
        return withCost(rewardModelRunner(ports, def.model.slice(REWARD_MODEL_PREFIX.length), textOf), settings, def.model);
      }
      if (def.kind === 'rubric') return withCost(rubricJudgeRunner(ports, { model: createModel(def.model), definition: def }), settings, def.model);
      if (def.kind === 'pairwise') return withCost(pairwiseJudgeRunner(ports, { model: createModel(def.model), definition: def }), settings, def.model);
      if (def.kind === 'failure-mode') {
        const run = failureModeJudgeRunner(ports, { model: createModel(def.model), ...(def.taxonomyVersion !== undefined ? { taxonomyVersion: def.taxonomyVersion } : {}) });
        return withCost(run, settings, def.model);
      }
      return undefined;
    },
  };
}

/**
 * What a student reads of a subject: a signal's text (its comment or report) and its trajectory's text; an attempt's
 * diff and trajectory; a pair, each side's.
 *
 * @example
 * await subjectText(ports, { kind: 'signal', signalKey: 'feedback:e1' }); // 'it rewrote the whole module …'
 */
export async function subjectText(ports: Pick<Ports, 'records' | 'blobs'>, subject: Subject): Promise<string | { a: string; b: string }> {
  const blobText = async (key: string | undefined): Promise<string> => {
    if (!key) return '';
    const bytes = await ports.blobs.get(key);
    if (!bytes) return '';
    const text = Buffer.from(bytes.subarray(0, 4 * SUBJECT_TEXT_CHARS)).toString('utf8');
    try {
      return flattenText(JSON.parse(text), SUBJECT_TEXT_CHARS);
    } catch {
      return text.slice(0, SUBJECT_TEXT_CHARS);
    }
  };
  if (subject.kind === 'signal') {
    const signal = await loadSignalByKey(ports, subject.signalKey);
    if (!signal) throw new ValidationError(`No stored signal ${subject.signalKey}`, [{ path: 'subject.signalKey', message: 'not stored' }]);
    return [signal.text ?? '', await blobText(signal.trajectoryKey)].join('\n').trim().slice(0, SUBJECT_TEXT_CHARS);
  }
  const attemptText = async (runId: string, attemptId: string) => {
    const attempt = await getAttemptRecordByKey(ports.records, runId, attemptId);
    if (!attempt) throw new ValidationError(`No attempt ${runId}/${attemptId}`, [{ path: 'subject.attemptId', message: 'not stored' }]);
    return [await blobText(attempt.diffKey), await blobText(attempt.trajectoryKey)].join('\n').trim().slice(0, SUBJECT_TEXT_CHARS);
  };
  if (subject.kind === 'attempt') return attemptText(subject.runId, subject.attemptId);
  return { a: await attemptText(subject.a.runId, subject.a.attemptId), b: await attemptText(subject.b.runId, subject.b.attemptId) };
}
