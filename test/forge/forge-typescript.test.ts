import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { forgeRepository, type ForgeRunResult } from '../../lib/forge/forge-repository.ts';
import { exportSuite, listCandidateRecords, listSuiteTasks } from '../../lib/forge/forge-records.ts';
import { taskPk } from '../../lib/forge/record-keys.ts';
import { forgeTestRunner } from '../../lib/forge/forge-test-runner.ts';
import { parseForgeSpec } from '../../lib/forge/schemas.ts';
import { gradeAttempt } from '../../lib/harness/grading/grade-attempt.ts';
import { loadSuite } from '../../lib/harness/eval/load-suite.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { CALC_TS, CountingProvider, NODE_TEST_COMMAND, SHARED_TS, candidate, stubBody, tsRepoFiles, writeRepo } from './support/forge-fixtures.ts';

describe('forge on a TypeScript repository (node test runner, JUnit reports, namespace sandbox)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let provider: CountingProvider;
  let result: ForgeRunResult;

  const addStubbed = stubBody(CALC_TS, 'export function add(a: number, b: number): number {\n', '  const sum = a + b;\n  return sum;\n');

  beforeAll(async () => {
    repo = await writeRepo(tsRepoFiles({ flaky: true, staleBuildInfo: true }));
    data = await mkdtemp(join(tmpdir(), 'fw-forge-data-'));
    ports = openLocalPorts(join(data, '.flywheel'));
    provider = new CountingProvider(new NamespaceSandboxProvider({ root: join(data, 'sandbox') }));
    const spec = parseForgeSpec({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test' }, suite: 'calc-ts', split: 'held-out', maxTasks: 5, canaries: true });
    result = await forgeRepository({
      spec,
      provider,
      ports,
      runId: 'ts-run',
      candidates: async () => [
        candidate({ id: 'add-body-unstripped', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: addStubbed }], testFiles: ['test/calc.test.ts'] }),
        candidate({ id: 'add-body', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: addStubbed }], testFiles: ['test/calc.test.ts'], leftovers: ['tsconfig.tsbuildinfo'] }),
        candidate({
          id: 'multiply-leaky-statement',
          symbols: ['multiply'],
          testFiles: ['test/calc.test.ts'],
          leftovers: ['tsconfig.tsbuildinfo'],
          edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function multiply(a: number, b: number): number {\n', '  let product = 0;\n  for (let i = 0; i < b; i++) product = add(product, a);\n  return product;\n') }],
          statement: async () => 'Bring back multiply; it went like: for (let i = 0; i < b; i++) product = add(product, a);',
        }),
        candidate({ id: 'reverse-body', symbols: ['reverseText'], leftovers: ['tsconfig.tsbuildinfo'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function reverseText(text: string): string {\n', "  return text.split('').reverse().join('');\n") }] }),
        candidate({ id: 'registry-class', strategy: 'remove-class', leftovers: ['tsconfig.tsbuildinfo'], symbols: ['Registry'], edits: [{ path: 'src/shared.ts', content: SHARED_TS.slice(0, SHARED_TS.indexOf('export class')) }] }),
        candidate({ id: 'add-zero', symbols: ['add'], leftovers: ['tsconfig.tsbuildinfo'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function add(a: number, b: number): number {\n', '  const sum = a + b;\n  return sum;\n', '  return 0;\n') }] }),
        candidate({ id: 'multiply-body', symbols: ['multiply'], leftovers: ['tsconfig.tsbuildinfo'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function multiply(a: number, b: number): number {\n', '  let product = 0;\n  for (let i = 0; i < b; i++) product = add(product, a);\n  return product;\n') }], testFiles: ['test/calc.test.ts'] }),
      ],
    });
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('excludes the flaky test: it changed outcome across the k baseline runs and is in no task', () => {
    expect(result.baseline.runs).toBe(3);
    expect(result.baseline.flaky).toEqual(['test::sometimes passes']);
    expect(result.baseline.stable).toHaveLength(5);
    for (const t of result.tasks) {
      expect([...t.task!.failToPass, ...t.task!.passToPass]).not.toContain('test::sometimes passes');
    }
  });

  it('keeps a verdict for every candidate: certified, skipped (no test covers it), rejected (compile/collection crash), duplicate', async () => {
    const verdicts = Object.fromEntries(result.candidates.map((c) => [c.candidateId, c.verdict]));
    expect(verdicts).toEqual({
      'add-body-unstripped': 'rejected:leak-found',
      'add-body': 'certified',
      'multiply-leaky-statement': 'rejected:statement-leaks',
      'reverse-body': 'skipped:no-test-fails',
      'registry-class': 'rejected:collection-crash',
      'add-zero': expect.stringMatching(/^duplicate:calc\.remove-function-body\.add-/),
      'multiply-body': 'certified',
    });
    const stored = await listCandidateRecords(ports.records, 'ts-run');
    expect(stored).toHaveLength(7);
    expect(stored.find((c) => c.candidateId === 'add-body-unstripped')!.detail).toContain('const sum = a + b;');
    const crash = stored.find((c) => c.candidateId === 'registry-class')!;
    expect(crash.detail).toMatch(/Registry|not collected/);
  });

  it('registers certified tasks as TASK#<suite>#<id> records with their artifacts as blobs', async () => {
    const records = await listSuiteTasks(ports.records, 'calc-ts');
    const tasks = records.filter((r) => !r.canary);
    expect(tasks.map((r) => r.strategy)).toEqual(['remove-function-body', 'remove-function-body']);
    const add = tasks.find((r) => r.taskId.includes('.add-'))!;
    expect(await ports.records.get(taskPk('calc-ts', add.taskId), 'TASK')).toBeDefined();
    expect(add.task?.failToPass.sort()).toEqual(['test::add adds', 'test::multiply multiplies']);
    expect(add.task?.passToPass).toContain('test::shout shouts');
    expect(add.task?.split).toBe('held-out');
    const removal = Buffer.from((await ports.blobs.get(add.removalPatchKey))!).toString();
    expect(removal).toMatch(/^diff --git a\/src\/calc.ts b\/src\/calc.ts/);
    expect(removal).toContain('-  const sum = a + b;');
    const reference = Buffer.from((await ports.blobs.get(add.referencePatchKey))!).toString();
    expect(reference).toContain('+  const sum = a + b;');
    expect(add.task?.instruction).not.toContain('const sum = a + b;');
  });

  it('ships a starting tree from which the deleted code cannot be recovered (one synthetic commit, no object holds it)', async () => {
    const out = join(data, 'export');
    await exportSuite(ports, { suite: 'calc-ts', dir: join(out, 'suite'), reposDir: join(out, 'repos') });
    const add = (await listSuiteTasks(ports.records, 'calc-ts')).find((r) => r.taskId.includes('.add-') && !r.canary)!;
    const taskRepo = join(out, 'repos', add.taskId);
    expect(execFileSync('git', ['rev-list', '--all', '--count'], { cwd: taskRepo }).toString().trim()).toBe('1');
    const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: taskRepo }).toString();
    expect(objects).not.toContain('const sum = a + b;');
    expect(await readFile(join(taskRepo, 'src/calc.ts'), 'utf8')).toContain("throw new Error('not implemented')");
    // The stale build info was stripped from the task tree, and the strip is recorded.
    expect(existsSync(join(taskRepo, 'tsconfig.tsbuildinfo'))).toBe(false);
    expect(execFileSync('git', ['ls-files'], { cwd: taskRepo }).toString()).not.toContain('tsbuildinfo');
    expect((add.task?.metadata.forge as { leftovers: string[] }).leftovers).toEqual(['tsconfig.tsbuildinfo']);
  });

  it('loads the exported suite with the harness and grades it: the reference patch passes, no patch fails', async () => {
    const out = join(data, 'export');
    const tasks = await loadSuite(join(out, 'suite'));
    expect(tasks.length).toBeGreaterThanOrEqual(2);
    const runTests = forgeTestRunner(provider);
    for (const { task, sourceDir } of tasks.filter((t) => !t.task.id.endsWith('.canary'))) {
      const gold = await gradeAttempt({ task, sourceDir, diff: task.goldPatch!, attemptId: `gold-${task.id}` , runTests });
      expect(gold.reasons).toEqual([]);
      expect(gold.passed).toBe(true);
      const nothing = await gradeAttempt({ task, sourceDir, diff: '', attemptId: `none-${task.id}`, runTests });
      expect(nothing.passed).toBe(false);
      expect(nothing.reasons.some((r) => r.startsWith('fail-to-pass-not-passed'))).toBe(true);
    }
  }, 60_000);

  it('emits canaries whose tests contradict the statement: the reference patch fails them', async () => {
    expect(result.canaries.length).toBeGreaterThanOrEqual(1);
    const out = join(data, 'export');
    const files = await readdir(join(out, 'suite'));
    expect(files.some((f) => f.endsWith('.canary.json'))).toBe(true);
    const tasks = await loadSuite(join(out, 'suite'));
    const canary = tasks.find((t) => t.task.id.endsWith('.canary'))!;
    expect(canary.task.testPatch).toMatch(/assert\.notEqual/);
    const gold = await gradeAttempt({ task: canary.task, sourceDir: canary.sourceDir, diff: canary.task.goldPatch!, attemptId: 'canary-gold', runTests: forgeTestRunner(provider) });
    expect(gold.passed).toBe(false);
  }, 60_000);
});
