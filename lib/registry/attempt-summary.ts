/** The list view of one attempt record (`AttemptSummary`). */
import type { AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { judgementOf } from '../harness/eval/criterion-scores.ts';
import { encodeAttemptId, sweepIdOfRun } from './attempt-id.ts';
import type { AttemptSummary } from './attempt-schemas.ts';

/**
 * @example
 * const row = summarizeAttempt(record, 'coder-7b:step-100');
 */
export function summarizeAttempt(a: Omit<AttemptRecord, 'pk' | 'sk'>, checkpoint: string | undefined): AttemptSummary {
  const sweepId = sweepIdOfRun(a.runId);
  const judgement = judgementOf(a);
  return {
    id: encodeAttemptId({ runId: a.runId, taskId: a.taskId, mode: a.mode, n: a.n }),
    attemptId: a.attemptId,
    runId: a.runId,
    ...(sweepId !== undefined ? { sweepId } : {}),
    ...(checkpoint !== undefined ? { checkpoint } : {}),
    suite: a.suite,
    taskId: a.taskId,
    mode: a.mode,
    n: a.n,
    outcome: a.status,
    ...(a.stopReason ? { stopReason: a.stopReason.kind } : {}),
    integrityFailed: a.integrityFailure !== undefined || a.grade?.integrityFailed === true,
    integrityFlags: a.grade?.integrity?.length ?? 0,
    judgeScore: judgement ? judgement.score : null,
    turns: a.turns,
    durationMs: a.durationMs,
    promptTokens: a.usage.promptTokens,
    completionTokens: a.usage.completionTokens,
    tries: a.tries,
    model: a.model,
    startedAt: a.startedAt,
    finishedAt: a.finishedAt,
  };
}
