/**
 * Scripted rollouts for the dataset builder's tests: trajectories with token ids (or without, as a hosted API gives
 * them), stored the way the harness stores them (the trajectory blob, the attempt record through its codec), decision
 * records, and stored feedback events.
 */
import type { AttemptRecord, AttemptStatus } from '../../lib/harness/attempt/attempt-record.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import type { IntegrityFlag } from '../../lib/harness/integrity/integrity-flag.ts';
import { trajectoryKey } from '../../lib/harness/trajectory/store-trajectory.ts';
import { toJsonl, type AssistantLine, type StepLine, type Trajectory } from '../../lib/harness/trajectory/trajectory-schema.ts';
import type { Ports } from '../../lib/ports/ports.ts';
import { findSuite } from '../../lib/registry/get-suite.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import type { DatasetDecision } from '../../lib/training/datasets/trajectory-rows.ts';

const AT = '2026-12-03T10:00:00.000Z';

export interface TurnTokens {
  prompt: number[];
  completion: number[];
  logprobs?: number[];
}

/** An assistant line of turn `turn`; `tokens` absent: a hosted API's (text only). */
export function assistantTurn(attemptId: string, turn: number, tokens?: TurnTokens, toolCall = 'bash'): AssistantLine {
  return {
    type: 'assistant',
    seq: 0,
    at: AT,
    messageId: `${attemptId}:m${turn}`,
    turn,
    content: '',
    toolCalls: [{ id: `c${turn}`, name: toolCall, arguments: '{}' }],
    finishReason: 'tool_calls',
    model: 'tiny',
    sampling: {},
    usage: { promptTokens: tokens?.prompt.length ?? 10, completionTokens: tokens?.completion.length ?? 3 },
    ...(tokens ? { tokens: { promptTokenIds: tokens.prompt, completionTokenIds: tokens.completion, logprobs: tokens.logprobs ?? tokens.completion.map((_, i) => -0.1 * (i + 1)) } } : {}),
    timing: { startedAt: AT, durationMs: 5, httpAttempts: 1 },
  };
}

/** A trajectory: the instruction, the turns each followed by its tool result, the outcome. */
export function scriptedTrajectory(attemptId: string, turns: Array<TurnTokens | undefined>, options: { taskId?: string; checkpoint?: string; infrastructureError?: boolean } = {}): Trajectory {
  const steps: StepLine[] = [{ type: 'message', seq: 0, at: AT, messageId: `${attemptId}:s0`, role: 'user', content: 'fix it' }];
  turns.forEach((t, i) => {
    const a = assistantTurn(attemptId, i + 1, t);
    steps.push(a, { type: 'tool_result', seq: 0, at: AT, messageId: a.messageId, toolCallId: a.toolCalls[0]!.id, name: 'bash', isError: false, content: 'ok', truncated: false, durationMs: 1 });
  });
  steps.push({
    type: 'outcome',
    seq: 0,
    at: AT,
    stopReason: options.infrastructureError ? { kind: 'infrastructure-error', error: 'Flywheel.SandboxError', message: 'sandbox broke' } : { kind: 'submitted' },
    limitsHit: [],
    turns: turns.length,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
    outputBytes: 0,
    durationMs: 10,
  });
  steps.forEach((s, i) => (s.seq = i + 1));
  return {
    header: {
      type: 'header',
      format: 'flywheel.trajectory',
      schemaVersion: 1,
      attemptId,
      ...(options.taskId ? { taskId: options.taskId } : {}),
      agent: { name: 'flywheel', version: '1' },
      model: { id: 'tiny' },
      ...(options.checkpoint ? { policy: { checkpoint: options.checkpoint, weightVersion: 3 } } : {}),
      sampling: {},
      limits: {},
      tools: [],
      startedAt: AT,
    },
    steps,
  };
}

export interface RegistryTask {
  visibility: 'public' | 'private';
  /** Omitted: the task JSON has no split. */
  split?: 'train' | 'held-out';
}

/**
 * Registers `suite` (its tasks as JSON under the blob prefix `suites/<suite>/`) with `visibility`, and stores the task
 * `taskId` there with `split`: what the builder's held-out check reads.
 */
export async function registerTask(ports: Pick<Ports, 'records' | 'blobs'>, suite: string, taskId: string, t: RegistryTask): Promise<void> {
  const prefix = `suites/${suite}/`;
  const before = await findSuite(ports.records, suite);
  const taskIds = [...new Set([...(before?.taskIds ?? []), taskId])];
  await registerSuite({ records: ports.records, now: () => new Date(AT) }, { id: suite, visibility: t.visibility, owner: 'test', tasks: { kind: 'blobs', prefix }, taskIds });
  const task = { id: taskId, suite, visibility: 'public', instruction: 'fix it', ...(t.split ? { split: t.split } : {}) };
  await ports.blobs.put(`${prefix}${taskId}.json`, JSON.stringify(task));
}

/**
 * Stores an attempt as the harness does: its trajectory blob and its record. Returns the record. Unless `registry` is
 * `false`, its suite is registered too (default: a public suite, the task in the train split), as a dataset takes
 * only known training tasks.
 */
export async function putAttempt(
  ports: Pick<Ports, 'records' | 'blobs'>,
  a: {
    runId: string;
    taskId: string;
    suite: string;
    n: number;
    status: AttemptStatus;
    trajectory?: Trajectory;
    integrity?: IntegrityFlag['kind'][];
    infrastructureTry?: boolean;
    trajectoryKey?: string;
    registry?: RegistryTask | false;
  },
): Promise<AttemptRecord> {
  if (a.registry !== false) await registerTask(ports, a.suite, a.taskId, a.registry ?? { visibility: 'public', split: 'train' });
  const attemptId = a.trajectory?.header.attemptId ?? `${a.runId}.${a.taskId}.${a.n}`;
  const key = a.trajectory ? (a.trajectoryKey ?? trajectoryKey(attemptId)) : undefined;
  if (a.trajectory && key) await ports.blobs.put(key, toJsonl(a.trajectory));
  const graded = a.status === 'passed' || a.status === 'failed';
  const record = {
    kind: 'eval-attempt' as const,
    runId: a.runId,
    attemptId,
    taskId: a.taskId,
    suite: a.suite,
    mode: 'strict' as const,
    n: a.n,
    status: a.status,
    usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 },
    usageAllTries: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 },
    turns: 1,
    durationMs: 1,
    ...(key ? { trajectoryKey: key } : {}),
    ...(graded
      ? { grade: { passed: a.status === 'passed', integrity: (a.integrity ?? []).map((kind) => ({ kind, file: 'tests/test_x.py', line: null, evidence: 'edited', source: 'diff' as const })) } }
      : {}),
    model: 'tiny',
    tries: 1,
    history: [
      {
        try: 0,
        startedAt: AT,
        durationMs: 1,
        outcome: a.infrastructureTry ? ('infrastructure-error' as const) : ('completed' as const),
        usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 },
        ...(key ? { trajectoryKey: key } : {}),
        ...(a.infrastructureTry ? { infrastructureError: { phase: 'sandbox' as const, error: 'Flywheel.SandboxError', message: 'broke' } } : {}),
      },
    ],
    startedAt: AT,
    finishedAt: AT,
  };
  const item = attemptRecord.encode(record);
  await ports.records.put(item);
  return { ...record, pk: item.pk, sk: item.sk } as AttemptRecord;
}

/** A usable decision record on `messageId` of `attemptId` (optionally a token span inside its completion). */
export function decision(
  attemptId: string,
  turn: number,
  n: number,
  options: { tokenSpan?: { start: number; end: number }; hint?: string; status?: 'usable' | 'rejected'; verified?: boolean; blobKey?: string; feedbackEventId?: string } = {},
): DatasetDecision {
  return {
    decisionId: `dec-${String(n).padStart(20, '0')}`,
    trajectory: { blobKey: options.blobKey ?? trajectoryKey(attemptId), attemptId, ...(options.feedbackEventId ? { feedbackEventId: options.feedbackEventId } : {}) },
    messageId: `${attemptId}:m${turn}`,
    turn,
    ...(options.tokenSpan ? { tokenSpan: options.tokenSpan } : {}),
    hintClass: 'available-tools',
    hint: { text: options.hint ?? 'The tools that exist: bash, write_file, submit.', by: 'rule' },
    insertion: { at: 'before-decision', role: 'user' },
    source: options.feedbackEventId ? { kind: 'person', feedbackEventId: options.feedbackEventId } : { kind: 'harness-event', eventKind: 'tool.unknown', eventSeq: 3 },
    leakage: { passed: options.status !== 'rejected', findings: [], checkedAt: AT },
    status: options.status ?? 'usable',
    lineage: { createdBy: 'test', createdAt: AT, datasets: [] },
    ...(options.verified !== undefined ? { verified: options.verified } : {}),
  };
}
