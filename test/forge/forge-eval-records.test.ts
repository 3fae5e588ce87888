import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { forgeRepository, type ForgeRunResult } from '../../lib/forge/forge-repository.ts';
import { listSuiteTasks } from '../../lib/forge/forge-records.ts';
import { taskPk, TASK_SK } from '../../lib/forge/record-keys.ts';
import { parseForgeSpec } from '../../lib/forge/schemas.ts';
import { harnessGrader } from '../../lib/harness/attempt/harness-grader.ts';
import { loadSuite, loadSuiteFromRecords } from '../../lib/harness/eval/load-suite.ts';
import { runEval } from '../../lib/harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { CALC_TS, NODE_TEST_COMMAND, candidate, stubBody, tsRepoFiles, writeRepo } from './support/forge-fixtures.ts';

/**
 * A forged suite run the way `flywheel eval run --suite <name>` runs it: the tasks come from the forge's records (not a
 * folder), their repositories from blobs, and the repository's tests need its setup step (a generated module git
 * ignores), which the agent's sandbox and grading must both run.
 */
const GENERATED_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GREETING } from '../src/generated.ts';

test('setup generated the greeting', () => {
  assert.equal(GREETING, 'hi');
});
`;
const SETUP = `printf 'export const GREETING = "hi";\\n' > src/generated.ts`;
const STUB = "  throw new Error('not implemented');\n";

const turnOf = (request: RecordedRequest) => (request.body['messages'] as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;

/** Reads the stubbed file, puts the body back, submits. */
function fixAdd(request: RecordedRequest) {
  const turn = turnOf(request);
  if (turn === 0) return reply.tool('read_file', { path: 'src/calc.ts' }, { usage: { prompt_tokens: 100, completion_tokens: 10 } });
  if (turn === 1) return reply.tool('edit', { path: 'src/calc.ts', oldString: STUB, newString: '  return a + b;\n' }, { usage: { prompt_tokens: 120, completion_tokens: 20 } });
  return reply.tool('submit', { answer: 'done' }, { usage: { prompt_tokens: 140, completion_tokens: 5 } });
}

describe('a forged suite loaded from records runs in the harness (setup, scripted model, strict sandbox)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let provider: NamespaceSandboxProvider;
  let forged: ForgeRunResult;
  let server: ScriptedModelServer;

  beforeAll(async () => {
    repo = await writeRepo({ ...tsRepoFiles(), '.gitignore': 'src/generated.ts\n', 'test/generated.test.ts': GENERATED_TEST });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-eval-'));
    ports = openLocalPorts(join(data, '.flywheel'));
    provider = new NamespaceSandboxProvider({ root: join(data, 'sandbox') });
    const spec = parseForgeSpec({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, setupCommand: SETUP, runner: { kind: 'node-test' }, suite: 'calc-rec', k: 2, maxTasks: 2 });
    forged = await forgeRepository({
      spec,
      provider,
      ports,
      runId: 'rec-run',
      candidates: async () => [
        candidate({ id: 'add-body', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function add(a: number, b: number): number {\n', '  const sum = a + b;\n  return sum;\n', STUB) }], testFiles: ['test/calc.test.ts'] }),
        candidate({ id: 'shout-body', symbols: ['shout'], edits: [{ path: 'src/strings.ts', content: "export function shout(text: string): string {\n  throw new Error('not implemented');\n}\n" }], testFiles: ['test/strings.test.ts'] }),
      ],
    });
    server = await startScriptedModelServer(fixAdd);
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('forges two tasks that carry the setup command', () => {
    expect(forged.tasks.map((t) => t.task?.setupCommand)).toEqual([SETUP, SETUP]);
    expect(forged.tasks).toHaveLength(2);
  });

  it('loadSuite reads a name that is no folder from the records, skipping retired tasks; without records it is an error', async () => {
    const [add, shout] = forged.tasks.map((t) => t.taskId);
    const before = await loadSuite('calc-rec', { cacheDir: join(data, 'sources'), blobs: ports.blobs, records: ports.records });
    expect(before.map((t) => t.task.id).sort()).toEqual([add, shout].sort());
    expect(before.every((t) => t.task.repo.kind === 'blob')).toBe(true);

    const record = await ports.records.get(taskPk('calc-rec', shout!), TASK_SK);
    await ports.records.put({ ...record!, status: 'retired', retiredReason: 'test' });
    const after = await loadSuite('calc-rec', { cacheDir: join(data, 'sources'), blobs: ports.blobs, records: ports.records });
    expect(after.map((t) => t.task.id)).toEqual([add]);
    expect((await listSuiteTasks(ports.records, 'calc-rec')).map((r) => r.status).sort()).toEqual(['active', 'retired']);

    await expect(loadSuite('calc-rec')).rejects.toThrow();
    await expect(loadSuiteFromRecords(ports, 'no-such-suite', { cacheDir: join(data, 'sources') })).rejects.toThrow(/no-such-suite/);
  }, 60_000);

  it('a registry suite record (tasks: records) names the same TASK#<suite>#<id> items', async () => {
    const [add] = forged.tasks.map((t) => t.taskId);
    await registerSuite(ports, { id: 'calc-rec', visibility: 'private', owner: 'evals', tasks: { kind: 'records' }, taskIds: [add] });
    const tasks = await loadSuiteFromRecords(ports, 'calc-rec', { cacheDir: join(data, 'sources') });
    expect(tasks.map((t) => t.task.id)).toEqual([add]);
  }, 60_000);

  it('runs the active task with a scripted model: setup in the agent sandbox and in grading, the fix passes', async () => {
    const tasks = await loadSuite('calc-rec', { cacheDir: join(data, 'sources'), blobs: ports.blobs, records: ports.records });
    const results = await runEval({
      runId: 'rec-eval',
      tasks,
      mode: 'strict',
      attempts: 1,
      concurrency: 1,
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } }),
      provider,
      ports,
      grade: harnessGrader({ provider, blobs: ports.blobs }),
      retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(results.counts).toEqual({ passed: 1, failed: 0, ungraded: 0, 'infrastructure-error': 0 });
    expect(results.passAt1).toBe(1);

    // The same diff graded without the setup step fails: the generated module is what the tests import.
    const [{ task, sourceDir }] = tasks as [(typeof tasks)[number]];
    const attempt = (await ports.records.query({ partition: 'EVAL#rec-eval', sort: { beginsWith: 'ATTEMPT#' } })).items[0]!;
    const diff = Buffer.from((await ports.blobs.get(attempt['diffKey'] as string))!).toString('utf8');
    expect(diff).toContain('return a + b;');
    expect(diff).not.toContain('b/src/generated.ts');
    expect(task.passToPass.some((id) => id.includes('setup generated the greeting'))).toBe(true);
    const { setupCommand: _setup, ...bare } = task;
    const withoutSetup = await harnessGrader({ provider })({ task: bare, sourceDir, diff, attemptId: 'no-setup' });
    expect(withoutSetup.passed).toBe(false);
  }, 120_000);

  it('`flywheel eval run --suite <name>` (a child process) runs the registered suite from the same records', async () => {
    const dataDir = join(data, '.flywheel');
    const args = ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', 'calc-rec', '--model', `openai:scripted-coder@${server.baseUrl}`, '--mode', 'strict', '--attempts', '1', '--max-tries', '1', '--run-id', 'rec-cli', '--data-dir', dataDir];
    const { stdout } = await promisify(execFile)('npx', args, { cwd: process.cwd() });
    expect(stdout).toMatch(/all \(1 tasks\)\s+1\s+1\s+0\s+0\s+100\.0%/);
    const results = JSON.parse(await readFile(join(dataDir, 'evals', 'rec-cli', 'results-strict.json'), 'utf8'));
    expect(results).toMatchObject({ runId: 'rec-cli', passAt1: 1, counts: { passed: 1 } });
  }, 120_000);
});
