/**
 * The rubric judge as a `JudgeRunner`: on an attempt subject it reads the attempt record, its task (instruction and
 * rubric, from the registry's task record), its trajectory and diff blobs and its test outcomes, builds the judge's
 * view (`buildAttemptView`) and asks `judgeAttempt`. It answers each criterion's verdict (`pass` / `fail` /
 * `not-applicable`); a voided criterion is left out (no checked verdict), and the judgement's cost and latency are
 * the verdict's.
 *
 * @example
 * const run = rubricJudgeRunner(ports, definition);
 * await run({ kind: 'attempt', runId: 'nightly-1', attemptId: 'ATTEMPT#calc/add#strict#0' }); // { labels: { c1: 'pass' }, … }
 */
import { ValidationError } from '../../errors.ts';
import { parseJsonl } from '../../harness/trajectory/trajectory-schema.ts';
import { createModel } from '../../models/create-model.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { taskRecord } from '../../registry/record-codecs.ts';
import { registryKeys } from '../../registry/record-keys.ts';
import { getAttemptRecordByKey } from '../annotation/attempt-lookup.ts';
import type { JudgeDefinition } from '../judge-identity.ts';
import { buildAttemptView } from '../rubric/attempt-view.ts';
import { judgeAttempt } from '../rubric/judge-attempt.ts';
import type { JudgeRunner } from '../schemas.ts';

const MAX_BLOB_BYTES = 8 * 1024 * 1024;

export function rubricJudgeRunner(ports: Pick<Ports, 'records' | 'blobs'>, definition: JudgeDefinition, model: ModelsPort = createModel(definition.model)): JudgeRunner {
  const text = async (key: string | undefined): Promise<string | undefined> => {
    if (!key) return undefined;
    const bytes = await ports.blobs.get(key);
    return bytes && bytes.byteLength <= MAX_BLOB_BYTES ? Buffer.from(bytes).toString('utf8') : undefined;
  };
  return async (subject) => {
    if (subject.kind !== 'attempt') throw new ValidationError(`The rubric judge grades attempts, not ${subject.kind}s`, [{ path: 'subject.kind', message: 'must be attempt' }]);
    const attempt = await getAttemptRecordByKey(ports.records, subject.runId, subject.attemptId);
    if (!attempt) throw new ValidationError(`No attempt ${subject.runId}/${subject.attemptId}`, [{ path: 'subject.attemptId', message: 'not stored' }]);
    const key = registryKeys.task(attempt.suite, attempt.taskId);
    const stored = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    const fromBlob = stored?.taskKey ? await text(stored.taskKey) : undefined;
    const task = (stored?.task ?? (fromBlob ? (JSON.parse(fromBlob) as Record<string, unknown>) : undefined)) as { instruction?: unknown; rubric?: unknown } | undefined;
    if (!task || typeof task.instruction !== 'string') throw new ValidationError(`No task ${attempt.suite}/${attempt.taskId} to judge against`, [{ path: 'subject', message: 'task not in the registry' }]);
    const trajectoryText = await text(attempt.trajectoryKey);
    let trajectory: { steps: readonly unknown[] } | undefined;
    try {
      trajectory = trajectoryText ? parseJsonl(trajectoryText) : undefined;
    } catch {
      trajectory = undefined;
    }
    const diff = await text(attempt.diffKey);
    const grade = attempt.grade as { passed: boolean; reasons?: string[]; perTest?: Record<string, string> } | undefined;
    const view = buildAttemptView({
      task: { id: attempt.taskId, instruction: task.instruction, ...(Array.isArray(task.rubric) ? { rubric: task.rubric as { id?: string; criterion: string; weight?: number }[] } : {}) },
      ...(trajectory ? { trajectory } : {}),
      ...(diff !== undefined ? { diff } : {}),
      ...(grade ? { tests: { passed: grade.passed, ...(grade.reasons ? { reasons: grade.reasons } : {}), ...(grade.perTest ? { perTest: grade.perTest } : {}) } } : {}),
    });
    const judgement = await judgeAttempt(model, view, { judge: definition });
    const labels = Object.fromEntries(judgement.criteria.filter((c) => c.voided === undefined).map((c) => [c.id, c.verdict]));
    return { labels, latencyMs: judgement.latencyMs, ...(judgement.costUsd !== undefined ? { costUsd: judgement.costUsd } : {}) };
  };
}
