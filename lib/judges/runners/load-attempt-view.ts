/**
 * The judge's view of a stored attempt, read from the stores: the attempt record (by its eval run and record key),
 * its task's instruction and rubric from the registry's task record (inline, in its blob, or on the record itself,
 * as the annotation queue reads them), its trajectory and diff blobs, and the test outcomes of its grade. A previous
 * judge's verdict on the attempt is never shown (a judge calibrated on it would read the answer).
 */
import { ValidationError } from '../../errors.ts';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import type { Ports } from '../../ports/ports.ts';
import { taskRecord } from '../../registry/record-codecs.ts';
import { registryKeys } from '../../registry/record-keys.ts';
import { getAttemptRecordByKey } from '../annotation/attempt-lookup.ts';
import { buildAttemptView, type AttemptView, type BuildAttemptViewInput, type TestOutcomes } from '../rubric/attempt-view.ts';

/** Bytes of a trajectory or diff blob read at most (the view keeps far less). */
export const MAX_ATTEMPT_BLOB_BYTES = 8 * 1024 * 1024;

type AttemptRef = { runId: string; attemptId: string };
type TaskForView = BuildAttemptViewInput['task'];

/**
 * @example
 * const view = await loadAttemptView(ports, { runId: 'nightly-1', attemptId: 'ATTEMPT#calc/add#strict#0' });
 * view.rubric.map((c) => c.id); // ['c1', 'c2']
 * @throws ValidationError naming `subject.attemptId` when the attempt is not stored, `subject` when its task (with an
 *   instruction) is not in the registry.
 */
export async function loadAttemptView(ports: Pick<Ports, 'records' | 'blobs'>, subject: AttemptRef, path = 'subject'): Promise<AttemptView> {
  const attempt = await getAttemptRecordByKey(ports.records, subject.runId, subject.attemptId);
  if (!attempt) throw new ValidationError(`No attempt ${subject.runId}/${subject.attemptId}`, [{ path: `${path}.attemptId`, message: 'not stored' }]);
  const task = await loadTask(ports, attempt);
  if (!task) throw new ValidationError(`No task ${attempt.suite}/${attempt.taskId} with an instruction in the registry`, [{ path, message: 'task not in the registry' }]);
  const [trajectoryText, diff] = await Promise.all([blobText(ports, attempt.trajectoryKey), blobText(ports, attempt.diffKey)]);
  const tests = testOutcomes(attempt);
  const integrity = tests ? undefined : integrityFlags(attempt);
  return buildAttemptView({
    task,
    ...(trajectoryText !== undefined ? { trajectory: { steps: trajectorySteps(trajectoryText) } } : {}),
    ...(diff !== undefined ? { diff } : {}),
    ...(tests ? { tests } : {}),
    ...(integrity && integrity.length > 0 ? { integrity } : {}),
  });
}

async function blobText(ports: Pick<Ports, 'blobs'>, key: string | undefined): Promise<string | undefined> {
  if (!key) return undefined;
  const bytes = await ports.blobs.get(key);
  if (!bytes) return undefined;
  return Buffer.from(bytes.subarray(0, MAX_ATTEMPT_BLOB_BYTES)).toString('utf8');
}

async function loadTask(ports: Pick<Ports, 'records' | 'blobs'>, attempt: AttemptRecord): Promise<TaskForView | undefined> {
  const key = registryKeys.task(attempt.suite, attempt.taskId);
  const stored = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!stored) return undefined;
  let task: Record<string, unknown> | undefined = stored.task;
  if (!task && stored.taskKey) {
    const body = await blobText(ports, stored.taskKey);
    try {
      const parsed = body !== undefined ? (JSON.parse(body) as unknown) : undefined;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) task = parsed as Record<string, unknown>;
    } catch {
      task = undefined;
    }
  }
  const source = task ?? (stored as Record<string, unknown>);
  const instruction = source['instruction'];
  if (typeof instruction !== 'string') return undefined;
  return { id: attempt.taskId, instruction, ...(Array.isArray(source['rubric']) ? { rubric: rubricOf(source['rubric']) } : {}) };
}

function rubricOf(raw: unknown[]): NonNullable<TaskForView['rubric']> {
  return raw.flatMap((c, i) => {
    if (typeof c === 'string') return [{ id: `c${i + 1}`, criterion: c }];
    if (c === null || typeof c !== 'object') return [];
    const r = c as { id?: unknown; criterion?: unknown; weight?: unknown };
    if (typeof r.criterion !== 'string') return [];
    return [{ id: typeof r.id === 'string' && r.id !== '' ? r.id : `c${i + 1}`, criterion: r.criterion, ...(typeof r.weight === 'number' ? { weight: r.weight } : {}) }];
  });
}

/** The trajectory's JSON lines that are steps (objects with a `type`); a line that does not parse is skipped. */
function trajectorySteps(text: string): unknown[] {
  const steps: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v !== null && typeof v === 'object' && (v as { type?: unknown }).type !== 'header') steps.push(v);
    } catch {
      // A torn last line (an attempt cut off) leaves the rest readable.
    }
  }
  return steps;
}

/**
 * The tests' outcomes from the grade: for a judge-graded attempt only when tests ran (`testsPassed`), and without
 * the judge's own reasons; undefined when no tests graded it.
 */
function testOutcomes(attempt: AttemptRecord): TestOutcomes | undefined {
  const grade = attempt.grade as (Record<string, unknown> & { passed: boolean; reasons?: string[] }) | undefined;
  if (!grade) return undefined;
  const judged = grade['judgement'] !== undefined;
  const testsPassed = grade['testsPassed'];
  if (judged && typeof testsPassed !== 'boolean') return undefined;
  const perTestRaw = grade['perTest'];
  const perTest =
    perTestRaw !== null && typeof perTestRaw === 'object' ? Object.fromEntries(Object.entries(perTestRaw as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string')) : undefined;
  const reasons = (grade.reasons ?? []).filter((r) => !judged || !r.startsWith('judge-'));
  return {
    passed: judged ? (testsPassed as boolean) : grade.passed,
    ...(reasons.length > 0 ? { reasons } : {}),
    ...(perTest && Object.keys(perTest).length > 0 ? { perTest } : {}),
  };
}

function integrityFlags(attempt: AttemptRecord): BuildAttemptViewInput['integrity'] {
  return (attempt.grade?.integrity ?? []).map((f) => ({ kind: f.kind, file: f.file, line: f.line, evidence: f.evidence }));
}
