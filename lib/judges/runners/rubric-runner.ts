/**
 * The rubric judge as a `JudgeRunner` (what calibration and the drift watch call): on an attempt subject it reads
 * the stored attempt, its task, trajectory, diff and test outcomes (`loadAttemptView`), asks `judgeAttempt`, and
 * answers each criterion's verdict (`pass` / `fail` / `not-applicable`) keyed by criterion id. A voided criterion
 * (a quote not in the attempt, no answer after the retries, the budget spent) gives no label: calibration leaves it
 * out rather than count a verdict that was never shown.
 */
import { ValidationError } from '../../errors.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import type { JudgeDefinition } from '../judge-identity.ts';
import type { JudgeBudget } from '../judge-conversation.ts';
import { judgeAttempt } from '../rubric/judge-attempt.ts';
import type { JudgeRunner } from '../schemas.ts';
import { loadAttemptView } from './load-attempt-view.ts';

export interface RubricRunnerOptions {
  /** The model that answers (the judge's own, or the configured `FLYWHEEL_JUDGE_MODEL`). */
  model: ModelsPort;
  /** The rubric judge version (kind `rubric`); the task's rubric, when it has one, replaces the definition's. */
  definition: JudgeDefinition;
  /** What one attempt's judging may spend. */
  budget?: JudgeBudget;
  /** Answers asked for at most (default the rubric judge's, 3). */
  maxAttempts?: number;
  /** The judge model's price per million tokens, when it has one: the verdict's `costUsd`. */
  pricing?: { promptPerMillion: number; completionPerMillion: number };
}

/**
 * @example
 * const run = rubricJudgeRunner(ports, { model: createModel(process.env.FLYWHEEL_JUDGE_MODEL!), definition, budget: { maxCalls: 3 } });
 * await run({ kind: 'attempt', runId: 'nightly-1', attemptId: 'ATTEMPT#calc/add#strict#0' });
 * // { labels: { c1: 'pass', c2: 'fail' }, latencyMs: 812 }
 * const report = await calibrateJudge(ports, { judge: ref, goldSet: 'rubric-gold', run });
 * @throws ValidationError naming `definition.kind` for a judge that is not a rubric judge; the runner throws one
 *   naming `subject.kind` for a subject that is not an attempt, and what `loadAttemptView` throws.
 */
export function rubricJudgeRunner(ports: Pick<Ports, 'records' | 'blobs'>, options: RubricRunnerOptions): JudgeRunner {
  if (options.definition.kind !== 'rubric') {
    throw new ValidationError(`${options.definition.name} is a ${options.definition.kind} judge, not a rubric judge`, [{ path: 'definition.kind', message: 'must be rubric' }]);
  }
  return async (subject) => {
    if (subject.kind !== 'attempt') throw new ValidationError(`The rubric judge grades attempts, not ${subject.kind}s`, [{ path: 'subject.kind', message: 'must be attempt' }]);
    const view = await loadAttemptView(ports, subject);
    const judgement = await judgeAttempt(options.model, view, {
      judge: options.definition,
      ...(options.budget ? { budget: options.budget } : {}),
      ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      ...(options.pricing ? { pricing: options.pricing } : {}),
    });
    const labels = Object.fromEntries(judgement.criteria.filter((c) => c.voided === undefined).map((c) => [c.id, c.verdict]));
    return { labels, latencyMs: judgement.latencyMs, ...(judgement.costUsd !== undefined ? { costUsd: judgement.costUsd } : {}) };
  };
}
