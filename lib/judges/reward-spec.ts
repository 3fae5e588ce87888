/**
 * The reward specification of a suite: how an attempt's tests, a judge's rubric criteria and its integrity flags
 * make one number that training (issue 13) can optimise. One spec per suite, stored as a record
 * (`REWARDSPEC#<suite>` / `SPEC`), set and shown with `flywheel reward-spec set|show`.
 *
 * `rewardOf(spec, attempt)` is in **[-1, 1]**:
 * - `base` in [0, 1]: the weighted mean of the components present: `tests` (1 when the attempt's grade passed, else 0)
 *   and each criterion of `criteria` (the judge's score on it: 1 pass, 0 fail, 0 when the verdict was voided; a
 *   criterion judged `not-applicable` or not judged at all is left out and its weight with it);
 * - `penalty` in [0, 1]: the sum of `integrityPenalties` over the distinct flag kinds the attempt carries (the
 *   key `integrity-failure` applies when the attempt failed for integrity), capped at 1;
 * - `reward = base - penalty`.
 * An attempt with no component present (no grade and no usable judgement) has base 0 and `complete: false`.
 *
 * @example
 * const spec = parseRewardSpec({ suite: 'behaviour-py', tests: 1, criteria: { 'asks-before-guessing': 2 },
 *   integrityPenalties: { 'test-file-edit': 0.5, 'integrity-failure': 1 }, judge: 'rubric-judge' });
 * await putRewardSpec(ports, spec);
 * const r = rewardOf(spec, attempt); // { reward: 0.67, base: 0.67, penalty: 0, components: [...], complete: true }
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import type { AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { INTEGRITY_FLAG_KINDS, type IntegrityFlag } from '../harness/integrity/integrity-flag.ts';
import type { Ports } from '../ports/ports.ts';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { toFieldIssues } from '../shared/field-issues.ts';
import { parseJudgeRef } from './judge-identity.ts';
import { JudgementSchema, type Judgement } from './schemas.ts';

/** The penalty key that applies when an attempt failed for integrity (`integrityFailure` on its record). */
export const INTEGRITY_FAILURE_PENALTY = 'integrity-failure';
const PENALTY_KEYS = [...INTEGRITY_FLAG_KINDS, INTEGRITY_FAILURE_PENALTY] as const;

/** The lowest and highest reward `rewardOf` returns. */
export const REWARD_RANGE = { min: -1, max: 1 } as const;

const Weight = z.number().min(0).max(100);

export const RewardSpecSchema = z.strictObject({
  suite: z.string().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9._:@+=/-]*$/, 'a suite id (no # or spaces)'),
  /** Weight of the tests' verdict (0: tests do not count). */
  tests: Weight.default(1),
  /** Weight of each rubric criterion, by criterion id. */
  criteria: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'a criterion id'), Weight).default({}),
  /** Penalty in [0, 1] per integrity flag kind (and `integrity-failure`), subtracted once per kind present. */
  integrityPenalties: z.partialRecord(z.enum(PENALTY_KEYS), z.number().min(0).max(1)).default({}),
  /** The judge whose verdicts count (`name` or `name@version`); a judgement by another judge is not used. */
  judge: z.string().min(1).max(200).optional(),
  updatedAt: z.string().optional(),
  updatedBy: z.string().max(200).optional(),
});
export type RewardSpec = z.output<typeof RewardSpecSchema>;
export type RewardSpecInput = z.input<typeof RewardSpecSchema>;

/** Validates a spec; throws `Flywheel.ValidationError` naming each bad field (weights that sum to 0 included). */
export function parseRewardSpec(input: unknown): RewardSpec {
  const r = RewardSpecSchema.safeParse(input);
  if (!r.success) {
    const issues = toFieldIssues(r.error.issues);
    throw new ValidationError(`Invalid reward spec: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const total = r.data.tests + Object.values(r.data.criteria).reduce((a, b) => a + b, 0);
  if (total <= 0) throw new ValidationError('Invalid reward spec: every weight is 0', [{ path: 'tests', message: 'tests or a criterion needs a weight above 0' }]);
  return r.data;
}

export const rewardSpecRecord = defineRecordCodec({
  kind: 'reward spec',
  schema: RewardSpecSchema.extend({ kind: z.literal('reward-spec') }),
  keys: (s) => rewardSpecKeys(s.suite),
});

export function rewardSpecKeys(suite: string): { pk: string; sk: string } {
  return { pk: `REWARDSPEC#${suite}`, sk: 'SPEC' };
}

/**
 * Stores a suite's spec (replacing the one before).
 *
 * @example
 * await putRewardSpec(ports, parseRewardSpec({ suite: 's', tests: 1 }), 'alice');
 */
export async function putRewardSpec(ports: Pick<Ports, 'records' | 'now'>, spec: RewardSpec, by?: string): Promise<RewardSpec> {
  const stored: RewardSpec = { ...spec, updatedAt: ports.now().toISOString(), ...(by ? { updatedBy: by } : {}) };
  await ports.records.put(rewardSpecRecord.encode({ kind: 'reward-spec', ...stored }));
  return stored;
}

/**
 * A suite's spec, or undefined when none was set.
 *
 * @example
 * const spec = await getRewardSpec(ports, 'behaviour-py');
 */
export async function getRewardSpec(ports: Pick<Ports, 'records'>, suite: string): Promise<RewardSpec | undefined> {
  const key = rewardSpecKeys(suite);
  const found = rewardSpecRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!found) return undefined;
  const { kind: _kind, ...spec } = found;
  return spec;
}

/** What `rewardOf` reads of an attempt: its record's grade (and the judgement the harness stores on it) and integrity fields. */
export type RewardAttempt = Pick<AttemptRecord, 'grade' | 'integrityFailure'> & { judgement?: Judgement };

export interface RewardComponent {
  /** `tests` or `criterion:<id>`. */
  id: string;
  weight: number;
  /** The component's score in [0, 1]; absent when it is missing (not graded, not judged, not applicable). */
  score?: number;
  /** Why a component is missing or voided. */
  note?: string;
}

export interface Reward {
  /** `base - penalty`, in [-1, 1] (`REWARD_RANGE`). */
  reward: number;
  /** Weighted mean of the present components, in [0, 1]. */
  base: number;
  /** Sum of the penalties of the distinct flag kinds present, capped at 1. */
  penalty: number;
  components: RewardComponent[];
  penalties: Array<{ kind: string; penalty: number }>;
  /** False when a weighted component is missing (its weight was left out of the mean). */
  complete: boolean;
}

/**
 * The reward of one attempt under a suite's spec (see the file's comment for the formula and range).
 *
 * @example
 * rewardOf(spec, { grade: { passed: true }, judgement }); // { reward: 1, base: 1, penalty: 0, … }
 */
export function rewardOf(spec: RewardSpec, attempt: RewardAttempt, judgementOverride?: Judgement): Reward {
  const components: RewardComponent[] = [];
  if (spec.tests > 0) {
    components.push(
      attempt.grade
        ? { id: 'tests', weight: spec.tests, score: attempt.grade.passed ? 1 : 0 }
        : { id: 'tests', weight: spec.tests, note: 'not graded by tests' },
    );
  }
  // The harness stores a judge-graded attempt's judgement on its grade (`grade.judgement`).
  const onGrade = JudgementSchema.safeParse(attempt.grade?.['judgement']);
  const judgement = judgementOverride ?? attempt.judgement ?? (onGrade.success ? onGrade.data : undefined);
  const wanted = spec.judge ? parseJudgeRef(spec.judge) : undefined;
  const judgeMismatch =
    judgement && wanted && (judgement.judge.name !== wanted.name || (wanted.version !== undefined && judgement.judge.version !== wanted.version))
      ? `judged by ${judgement.judge.name}@${judgement.judge.version}, the spec wants ${spec.judge}`
      : undefined;
  for (const [id, weight] of Object.entries(spec.criteria)) {
    if (weight === 0) continue;
    const result = judgement?.criteria.find((c) => c.id === id);
    if (!judgement) components.push({ id: `criterion:${id}`, weight, note: 'not judged' });
    else if (judgeMismatch) components.push({ id: `criterion:${id}`, weight, note: judgeMismatch });
    else if (!result) components.push({ id: `criterion:${id}`, weight, note: 'the judgement has no such criterion' });
    else if (result.voided) components.push({ id: `criterion:${id}`, weight, score: 0, note: `voided: ${result.voided}` });
    else if (result.verdict === 'not-applicable') components.push({ id: `criterion:${id}`, weight, note: 'not applicable' });
    else components.push({ id: `criterion:${id}`, weight, score: result.score ?? (result.verdict === 'pass' ? 1 : 0) });
  }
  const present = components.filter((c) => c.score !== undefined);
  const totalWeight = present.reduce((a, c) => a + c.weight, 0);
  const base = totalWeight > 0 ? present.reduce((a, c) => a + c.weight * (c.score ?? 0), 0) / totalWeight : 0;

  const kinds = new Set<string>((attempt.grade?.integrity ?? []).map((f: IntegrityFlag) => f.kind));
  if (attempt.integrityFailure) kinds.add(INTEGRITY_FAILURE_PENALTY);
  const penalties = [...kinds]
    .sort()
    .map((kind) => ({ kind, penalty: (spec.integrityPenalties as Record<string, number | undefined>)[kind] ?? 0 }))
    .filter((p) => p.penalty > 0);
  const penalty = Math.min(1, penalties.reduce((a, p) => a + p.penalty, 0));
  const complete = components.every((c) => c.score !== undefined || c.note === 'not applicable');
  return { reward: base - penalty, base, penalty, components, penalties, complete };
}
