/**
 * The pairwise judge as a `JudgeRunner` (what calibration and the drift watch call): on a pair subject it reads both
 * stored attempts (`loadAttemptView`), asks `judgePair` with `a` shown as A and `b` as B, and answers the label
 * `preference` (`a` / `b` / `tie`). A voided answer (a quote not in the side it names, no answer after the retries,
 * the budget spent) gives no label. Calibration runs every pair again with its sides swapped, so a judge swayed by
 * position shows a low position-swap consistency.
 */
import { ValidationError } from '../../errors.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { PREFERENCE_LABEL } from '../annotation/annotation-item.ts';
import type { JudgeDefinition } from '../judge-identity.ts';
import { judgePair } from '../pairwise/judge-pair.ts';
import type { JudgeBudget } from '../judge-conversation.ts';
import type { JudgeRunner } from '../schemas.ts';
import { loadAttemptView } from './load-attempt-view.ts';

export interface PairwiseRunnerOptions {
  /** The model that answers (the judge's own, or the configured `FLYWHEEL_JUDGE_MODEL`). */
  model: ModelsPort;
  /** The pairwise judge version (kind `pairwise`). */
  definition: JudgeDefinition;
  /** What one pair's judging may spend. */
  budget?: JudgeBudget;
  /** Answers asked for at most (default 3). */
  maxAttempts?: number;
  /** The judge model's price per million tokens, when it has one: the verdict's `costUsd`. */
  pricing?: { promptPerMillion: number; completionPerMillion: number };
}

/**
 * @example
 * const run = pairwiseJudgeRunner(ports, { model, definition: defaultPairwiseJudge(model.id) });
 * await run({ kind: 'pair', a: { runId: 'r1', attemptId: 'ATTEMPT#add#strict#0' }, b: { runId: 'r2', attemptId: 'ATTEMPT#add#strict#0' } });
 * // { labels: { preference: 'b' }, latencyMs: 640 }
 * @throws ValidationError naming `definition.kind` for a judge that is not pairwise; the runner throws one naming
 *   `subject.kind` for a subject that is not a pair, and what `loadAttemptView` throws (naming `subject.a` or `subject.b`).
 */
export function pairwiseJudgeRunner(ports: Pick<Ports, 'records' | 'blobs'>, options: PairwiseRunnerOptions): JudgeRunner {
  if (options.definition.kind !== 'pairwise') {
    throw new ValidationError(`${options.definition.name} is a ${options.definition.kind} judge, not a pairwise judge`, [{ path: 'definition.kind', message: 'must be pairwise' }]);
  }
  return async (subject) => {
    if (subject.kind !== 'pair') throw new ValidationError(`The pairwise judge compares pairs, not ${subject.kind}s`, [{ path: 'subject.kind', message: 'must be pair' }]);
    const [viewA, viewB] = await Promise.all([loadAttemptView(ports, subject.a, 'subject.a'), loadAttemptView(ports, subject.b, 'subject.b')]);
    const judgement = await judgePair(options.model, viewA, viewB, {
      judge: options.definition,
      ...(options.budget ? { budget: options.budget } : {}),
      ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      ...(options.pricing ? { pricing: options.pricing } : {}),
    });
    const labels: Record<string, string> = judgement.complete ? { [PREFERENCE_LABEL]: judgement.preference } : {};
    return {
      labels,
      latencyMs: judgement.latencyMs,
      ...(judgement.costUsd !== undefined ? { costUsd: judgement.costUsd } : {}),
    };
  };
}
