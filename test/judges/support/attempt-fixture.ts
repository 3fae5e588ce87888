/**
 * Stored attempts for the rubric and pairwise judge tests: the calc task (`add` of suite `calc`) with a rubric in the
 * registry, attempts of it (an attempt record with its diff and trajectory blobs), and the user message a scripted
 * judge was sent.
 */
import type { LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { attemptRecord } from '../../../lib/harness/attempt/record-codecs.ts';
import { taskRecord } from '../../../lib/registry/record-codecs.ts';
import type { RecordedRequest } from '../../support/scripted-model-server.ts';

/** Stores the task `add` of suite `calc` ("Write add(a, b) in calc.py returning the sum.") with `rubric`. */
export async function seedCalcTask(ports: LocalPorts, rubric: Array<{ id: string; criterion: string }>): Promise<void> {
  await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'add', task: { instruction: 'Write add(a, b) in calc.py returning the sum.', rubric } }));
}

/**
 * Stores attempt `n` of run `runId` of the calc task (strict mode, passed): its diff and trajectory blobs under
 * `evals/<runId>/<n>/` and the attempt record naming them. Returns the attempt as a subject names it.
 */
export async function seedAttempt(ports: LocalPorts, runId: string, n: number, blobs: { diff: string; trajectory: string }): Promise<{ runId: string; attemptId: string }> {
  await ports.blobs.put(`evals/${runId}/${n}/diff.patch`, blobs.diff);
  await ports.blobs.put(`evals/${runId}/${n}/trajectory.jsonl`, blobs.trajectory);
  const now = new Date().toISOString();
  const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
  await ports.records.put(
    attemptRecord.encode({
      kind: 'eval-attempt', runId, attemptId: `${runId}.add.strict.${n}`, taskId: 'add', suite: 'calc', mode: 'strict', n, status: 'passed', usage, usageAllTries: usage,
      turns: 1, durationMs: 1, diffKey: `evals/${runId}/${n}/diff.patch`, trajectoryKey: `evals/${runId}/${n}/trajectory.jsonl`, grade: { passed: true },
      model: 'agent', tries: 1, history: [], startedAt: now, finishedAt: now,
    }),
  );
  return { runId, attemptId: `ATTEMPT#add#strict#${n}` };
}

/** The user message of a chat request a scripted judge received. */
export function userMessage(request: RecordedRequest): string {
  const messages = request.body['messages'] as Array<{ role: string; content: string }>;
  return messages.find((m) => m.role === 'user')!.content;
}
