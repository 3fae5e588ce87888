/**
 * `GET /v1/attempts/{id}`: one attempt as the viewer shows it: its summary, grade with per-test outcomes, integrity
 * flags, judge verdicts, decision records, tries, the diff and a page of its trajectory. One record read, at most two
 * blob reads (trajectory, diff) and one more record read (the sweep, for the checkpoint) and one query (the decision records).
 * Bounded: texts are cut at `MAX_TEXT_BYTES` (the diff at `MAX_DIFF_BYTES`) with a marker; steps come a page at a time.
 */
import { NotFoundError } from '../errors.ts';
import type { AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { getAttemptRecord } from '../harness/attempt/read-attempt-records.ts';
import { judgementOf } from '../harness/eval/criterion-scores.ts';
import { readTrajectoryBlob } from '../harness/trajectory/read-trajectory-blob.ts';
import type { StepLine } from '../harness/trajectory/trajectory-schema.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { sweepKeys } from '../sweeps/record-keys.ts';
import { findSweep } from '../sweeps/sweep-record.ts';
import { listDecisions } from '../training/decisions/list-decisions.ts';
import { decodeAttemptId, sweepIdOfRun } from './attempt-id.ts';
import {
  AttemptIdParams,
  GetAttemptQuery,
  MAX_DIFF_BYTES,
  MAX_TEXT_BYTES,
  type AttemptDetail,
  type BoundedText,
  type TrajectoryPage,
  type TrajectoryStepView,
} from './attempt-schemas.ts';
import { summarizeAttempt } from './attempt-summary.ts';

/** Tests listed at most (a task has its failToPass and passToPass ids; some have thousands). */
const MAX_TESTS = 2000;
/** Decision records listed at most. */
const MAX_DECISIONS = 100;

/**
 * @example
 * const detail = await getAttempt(ports, { id }, { stepOffset: '200' }); // NotFoundError naming the id when absent
 */
export async function getAttempt(ports: Pick<Ports, 'records' | 'blobs'>, rawParams: unknown, rawQuery: unknown): Promise<AttemptDetail> {
  const { id } = parseInput(AttemptIdParams, rawParams, 'path');
  const q = parseInput(GetAttemptQuery, rawQuery, 'query');
  const ref = decodeAttemptId(id);
  const record = ref && (await getAttemptRecord(ports.records, ref.runId, ref.taskId, ref.mode, ref.n));
  if (!record) throw new NotFoundError(`No attempt ${id}`);
  const [checkpoint, trajectory, diff, decisions] = await Promise.all([
    checkpointOf(ports, record),
    trajectoryPage(ports, record, q.stepOffset, q.stepLimit),
    diffOf(ports, record),
    listDecisions(ports, { attempt: record.attemptId, limit: MAX_DECISIONS }),
  ]);
  const grade = record.grade;
  const perTest = grade && typeof grade['perTest'] === 'object' && grade['perTest'] !== null ? Object.entries(grade['perTest'] as Record<string, unknown>) : [];
  const counts = grade?.['counts'] as { passed: number; failed: number; skipped: number; error: number } | undefined;
  const judgement = judgementOf(record);
  return {
    attempt: summarizeAttempt(record, checkpoint),
    grade: grade
      ? {
          passed: grade.passed,
          reasons: grade.reasons ?? [],
          tests: perTest
            .slice(0, MAX_TESTS)
            .filter((e): e is [string, 'passed' | 'failed' | 'skipped' | 'error' | 'missing'] => typeof e[1] === 'string' && ['passed', 'failed', 'skipped', 'error', 'missing'].includes(e[1]))
            .map(([testId, outcome]) => ({ id: testId, outcome })),
          testsTruncated: perTest.length > MAX_TESTS,
          ...(counts && typeof counts.passed === 'number' ? { counts: { passed: counts.passed, failed: counts.failed, skipped: counts.skipped, error: counts.error } } : {}),
        }
      : null,
    integrity: {
      failed: record.integrityFailure !== undefined || grade?.integrityFailed === true,
      reasons: record.integrityFailure?.reasons ?? [],
      flags: (grade?.integrity ?? []).slice(0, 500).map((f) => ({ ...f, evidence: cut(f.evidence, 2000).text })),
      observations: record.observations?.length ?? 0,
    },
    judge: judgement
      ? {
          judge: `${judgement.judge.name}@${judgement.judge.version}`,
          score: judgement.score,
          complete: judgement.complete,
          criteria: judgement.criteria.map((c) => ({ id: c.id, verdict: c.verdict, ...(c.score !== undefined ? { score: c.score } : {}), reason: c.reason, ...(c.voided ? { voided: c.voided } : {}) })),
        }
      : null,
    decisions: decisions.items.map((d) => ({
      decisionId: d.decisionId,
      messageId: d.messageId,
      turn: d.turn,
      hintClass: d.hintClass,
      hint: cut(d.hint.text, 2000).text,
      status: d.status,
      ...(d.charSpan?.toolCallId ? { toolCallId: d.charSpan.toolCallId } : {}),
    })),
    history: record.history.map((t) => ({ try: t.try, outcome: t.outcome, startedAt: t.startedAt, durationMs: t.durationMs, ...(t.infrastructureError ? { error: `${t.infrastructureError.phase}: ${t.infrastructureError.message}` } : {}) })),
    diff,
    trajectory,
  };
}

/**
 * The checkpoint of a sweep's attempt: the one of the sweep's checkpoints whose shard run id (`sweepKeys.shardRunId`
 * of checkpoint, suite, mode and shard index) is the attempt's run: the sweep record alone, no listing.
 */
async function checkpointOf(ports: Pick<Ports, 'records'>, record: AttemptRecord): Promise<string | undefined> {
  const sweepId = sweepIdOfRun(record.runId);
  const shard = /\.(\d+)\.shard-\d+$/.exec(record.runId);
  if (sweepId === undefined || !shard) return undefined;
  const sweep = await findSweep(ports.records, sweepId);
  const shardRun = record.runId.replace(/\.shard-\d+$/, '');
  return sweep?.checkpoints.find((c) => sweepKeys.shardRunId(sweepId, c, record.suite, record.mode, Number(shard[1])) === shardRun);
}

async function diffOf(ports: Pick<Ports, 'blobs'>, record: AttemptRecord): Promise<BoundedText | null> {
  if (!record.diffKey) return null;
  const bytes = await ports.blobs.get(record.diffKey);
  if (!bytes) return null;
  return cutBytes(bytes, MAX_DIFF_BYTES);
}

async function trajectoryPage(ports: Pick<Ports, 'blobs'>, record: AttemptRecord, offset: number, limit: number): Promise<TrajectoryPage> {
  const empty = (problem: string): TrajectoryPage => ({ available: false, problem, totalSteps: 0, stepOffset: offset, steps: [] });
  if (!record.trajectoryKey) return empty('the attempt has no trajectory');
  const bytes = await ports.blobs.get(record.trajectoryKey);
  if (!bytes) return empty(`the trajectory blob ${record.trajectoryKey} is missing`);
  const read = readTrajectoryBlob(bytes);
  if ('problem' in read) return empty(read.problem);
  const { header, steps } = read.trajectory;
  const page = steps.slice(offset, offset + limit).map(stepView);
  return {
    available: true,
    agent: `${header.agent.name} ${header.agent.version}`,
    ...(header.policy ? { policy: header.policy.checkpoint } : {}),
    totalSteps: steps.length,
    stepOffset: offset,
    steps: page,
    ...(offset + limit < steps.length ? { nextStepOffset: offset + limit } : {}),
  };
}

function stepView(line: StepLine): TrajectoryStepView {
  switch (line.type) {
    case 'message':
      return { type: 'message', seq: line.seq, at: line.at, role: line.role, content: cut(line.content) };
    case 'assistant':
      return {
        type: 'assistant',
        seq: line.seq,
        at: line.at,
        messageId: line.messageId,
        turn: line.turn,
        content: cut(line.content),
        ...(line.reasoning !== undefined ? { reasoning: cut(line.reasoning) } : {}),
        toolCalls: line.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: cut(c.arguments) })),
        finishReason: line.finishReason,
        usage: { promptTokens: line.usage.promptTokens, completionTokens: line.usage.completionTokens },
        durationMs: line.timing.durationMs,
      };
    case 'tool_result':
      return {
        type: 'tool_result',
        seq: line.seq,
        at: line.at,
        toolCallId: line.toolCallId,
        name: line.name,
        isError: line.isError,
        ...(line.exitCode !== undefined ? { exitCode: line.exitCode } : {}),
        content: cut(line.content),
        durationMs: line.durationMs,
      };
    case 'event':
      return { type: 'event', seq: line.seq, at: line.at, kind: line.kind, message: cut(line.message), ...(line.span?.toolCallId ? { toolCallId: line.span.toolCallId } : {}) };
    case 'outcome':
      return {
        type: 'outcome',
        seq: line.seq,
        at: line.at,
        stopReason: line.stopReason.kind,
        limitsHit: line.limitsHit,
        turns: line.turns,
        durationMs: line.durationMs,
        ...(line.costUsd !== undefined ? { costUsd: line.costUsd } : {}),
      };
  }
}

/** A text cut to `max` UTF-8 bytes (on a character boundary), with its whole size. */
function cut(text: string, max = MAX_TEXT_BYTES): BoundedText {
  // Fast path: a string of n UTF-16 units is at most 3n bytes.
  if (text.length * 3 <= max) return { text, bytes: Buffer.byteLength(text), truncated: false };
  return cutBytes(Buffer.from(text, 'utf8'), max);
}

function cutBytes(bytes: Uint8Array, max: number): BoundedText {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.byteLength <= max) return { text: buf.toString('utf8'), bytes: buf.byteLength, truncated: false };
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // not inside a character
  return { text: buf.subarray(0, end).toString('utf8'), bytes: buf.byteLength, truncated: true };
}
