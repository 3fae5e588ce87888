/**
 * Fixtures of the decision-record tests: a real agent attempt over the scripted model server (its trajectory as JSON
 * Lines), hand-built trajectories through the trajectory schema, and the stored records an extraction reads (the
 * attempt record, its trajectory blob, its task in the registry, a feedback event).
 */
import { runAgent } from '../../lib/harness/agent/run-agent.ts';
import type { AttemptRecord } from '../../lib/harness/attempt/attempt-record.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { LimitsSchema } from '../../lib/harness/task/task-schema.ts';
import { HeaderLineSchema, parseJsonl, StepLineSchema, toJsonl, type StepLine, type Trajectory } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { feedbackEventRecord, type StoredFeedbackEvent } from '../../lib/feedback/record-codecs.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import type { Ports } from '../../lib/ports/ports.ts';
import { taskRecord } from '../../lib/registry/record-codecs.ts';
import { openPlainDirSandbox } from '../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer } from '../support/scripted-model-server.ts';

/**
 * A real attempt: the model calls a tool that does not exist, then `read_file` with a wrong argument, then with
 * arguments that are not JSON, then reads the file, and submits. Its trajectory, through JSON Lines.
 */
export async function realAgentTrajectory(attemptId = 'run-1.calc__add.strict.0'): Promise<Trajectory> {
  const server = await startScriptedModelServer([
    reply.tool('run_tests', { all: true }),
    reply.tool('read_file', { file: 'src/add.js' }),
    reply.tool('read_file', '{"path": "src/add.js"'),
    reply.tool('read_file', { path: 'src/add.js' }),
    reply.tool('submit', { answer: 'done' }),
  ]);
  const sandbox = await openPlainDirSandbox({ files: { 'src/add.js': 'export const add = (a, b) => a - b;\n' } });
  try {
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxAttempts: 2 } });
    const result = await runAgent({ attemptId, instruction: 'add() subtracts; make it add.', model, sandbox, limits: LimitsSchema.parse({ turns: 10 }), taskId: 'calc/add', suite: 'calc', policy: { checkpoint: 'ckpt-1' } });
    return parseJsonl(toJsonl(result.trajectory));
  } finally {
    await server.close();
    await sandbox.close();
  }
}

const AT = '2026-12-03T10:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(AT) + ms).toISOString();

/** Steps of a hand-built trajectory: an assistant message (content, calls), a tool result, an event, a user message. */
export type StepSpec =
  | { assistant: string; calls?: Array<{ id: string; name: string; arguments: string }> }
  | { result: string; toolCallId: string; name: string; isError?: boolean; startMs?: number; durationMs?: number }
  | { event: string; detail?: Record<string, unknown>; toolCallId?: string }
  | { user: string };

/** A trajectory built through the schema: each assistant message `<attemptId>:m<turn>`, results answer the previous one. */
export function handTrajectory(attemptId: string, specs: StepSpec[], tools = DEFAULT_TOOLS): Trajectory {
  const header = HeaderLineSchema.parse({ type: 'header', format: 'flywheel.trajectory', schemaVersion: 1, attemptId, taskId: 'calc/add', suite: 'calc', agent: { name: 'flywheel', version: '1' }, model: { id: 'scripted' }, policy: { checkpoint: 'ckpt-1' }, tools, startedAt: AT });
  const steps: StepLine[] = [];
  let seq = 0;
  let turn = 0;
  let messageId = '';
  for (const s of specs) {
    seq++;
    if ('assistant' in s) {
      turn++;
      messageId = `${attemptId}:m${turn}`;
      steps.push(StepLineSchema.parse({ type: 'assistant', seq, at: at(seq * 1000), messageId, turn, content: s.assistant, toolCalls: s.calls ?? [], finishReason: 'tool_calls', model: 'scripted', usage: { promptTokens: 10, completionTokens: 5 }, timing: { startedAt: at(seq * 1000), durationMs: 5, httpAttempts: 1 } }));
    } else if ('result' in s) {
      const end = s.startMs !== undefined ? s.startMs + (s.durationMs ?? 100) : seq * 1000;
      steps.push(StepLineSchema.parse({ type: 'tool_result', seq, at: at(end), messageId, toolCallId: s.toolCallId, name: s.name, isError: s.isError ?? false, content: s.result, durationMs: s.durationMs ?? 100 }));
    } else if ('event' in s) {
      const span = s.toolCallId ? { toolCallId: s.toolCallId, field: 'arguments', start: 0, end: 10 } : undefined;
      steps.push(StepLineSchema.parse({ type: 'event', seq, at: at(seq * 1000), kind: s.event, messageId, ...(span ? { span } : {}), message: s.event, detail: s.detail ?? {} }));
    } else {
      steps.push(StepLineSchema.parse({ type: 'message', seq, at: at(seq * 1000), messageId: `${attemptId}:u${seq}`, role: 'user', content: s.user }));
    }
  }
  steps.push(StepLineSchema.parse({ type: 'outcome', seq: seq + 1, at: at((seq + 1) * 1000), stopReason: { kind: 'submitted' }, turns: turn, usage: { promptTokens: 1, completionTokens: 1 }, outputBytes: 0, durationMs: 1 }));
  // Through JSON Lines, as a stored trajectory is read.
  return parseJsonl(toJsonl({ header, steps }));
}

export const DEFAULT_TOOLS = [
  { name: 'bash', description: 'Run a shell command in the workspace.\nMore text.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  { name: 'read_file', description: 'Read a file of the workspace.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'chat_post', description: 'Post to the team chat.', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'submit', description: 'Submit the work.', parameters: { type: 'object', properties: { answer: { type: 'string' } } } },
];

/** The task of the fixtures: a hidden test (its id, literals) and a reference patch. */
export const TASK = {
  schemaVersion: 1,
  id: 'calc/add',
  suite: 'calc',
  split: 'train',
  visibility: 'private',
  repo: { kind: 'local', path: '/tmp/calc' },
  instruction: 'add() subtracts; make it add.',
  testCommand: 'npm test',
  failToPass: ['test/add.test.js > adds_negative_numbers'],
  testPatch: [
    '--- a/test/add.test.js',
    '+++ b/test/add.test.js',
    '@@ -0,0 +1,4 @@',
    "+test('adds_negative_numbers', () => {",
    '+  expect(add(-40000000, 2)).toBe(-39999998);',
    "+  expect(format(add(1, 2))).toBe('three-point-zero');",
    '+});',
  ].join('\n'),
  goldPatch: ['--- a/src/add.js', '+++ b/src/add.js', '@@ -1 +1 @@', '-export const add = (a, b) => a - b;', '+export const add = (a, b) => Number(a) + Number(b);'].join('\n'),
  rubric: [{ id: 'c1', criterion: 'The agent reads the code before it edits it.' }],
};

/** Stores a trajectory, its attempt record and (unless `task: false`) its task in the registry. */
export async function seedAttempt(
  ports: Pick<Ports, 'records' | 'blobs'>,
  trajectory: Trajectory,
  options: { runId?: string; status?: AttemptRecord['status']; grade?: AttemptRecord['grade']; observations?: AttemptRecord['observations']; task?: boolean; n?: number } = {},
): Promise<AttemptRecord> {
  const runId = options.runId ?? 'run-1';
  const key = `trajectories/attempts/${trajectory.header.attemptId}.jsonl`;
  await ports.blobs.put(key, toJsonl(trajectory));
  const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
  const record = {
    kind: 'eval-attempt' as const,
    runId,
    attemptId: trajectory.header.attemptId,
    taskId: 'calc/add',
    suite: 'calc',
    mode: 'strict' as const,
    n: options.n ?? 0,
    status: options.status ?? 'failed',
    usage,
    usageAllTries: usage,
    turns: 3,
    durationMs: 10,
    trajectoryKey: key,
    ...(options.grade ? { grade: options.grade } : {}),
    ...(options.observations ? { observations: options.observations } : {}),
    model: 'scripted',
    tries: 1,
    history: [],
    startedAt: AT,
    finishedAt: AT,
  };
  await ports.records.put(attemptRecord.encode(record));
  if (options.task !== false) await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'calc/add', task: TASK }));
  return { ...record, pk: '', sk: '' };
}

/**
 * Stores a feedback event and its trajectory as the ingest stores an inline upload: `JSON.stringify(inline)` under
 * `trajectories/feedback/` (the inline value being the JSON Lines as one string).
 */
export async function seedFeedback(ports: Pick<Ports, 'records' | 'blobs'>, trajectory: Trajectory, event: Partial<StoredFeedbackEvent> & { eventId: string }): Promise<void> {
  const blobKey = event.trajectory?.blobKey ?? `trajectories/feedback/${event.eventId}.json`;
  await ports.blobs.put(blobKey, JSON.stringify(toJsonl(trajectory)));
  await ports.records.put(
    feedbackEventRecord.encode({
      feedbackKey: `t:${event.eventId}`,
      kind: 'rating',
      traceId: 't',
      sessionId: 's',
      turnId: 'u',
      model: 'ckpt-1',
      rating: 'down',
      source: 'user',
      reporter: 'ana@example.com',
      trainingConsent: true,
      trajectory: { blobKey },
      occurredAt: AT,
      receivedAt: AT,
      ingestId: 'ing-1',
      ...event,
    }),
  );
}
