import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePythonSrcRepo, PYTHON_PACKAGE, PYTHON_SRC_TEST_COMMAND, pythonSrcFiles } from '../../../bench/forge/generate-python-src.ts';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { forgeCandidateSource } from '../../../lib/forge/find-forge-candidates.ts';
import { exportSuite } from '../../../lib/forge/forge-records.ts';
import { forgeRepository, type ForgeRunResult } from '../../../lib/forge/forge-repository.ts';
import { forgeTestRunner } from '../../../lib/forge/forge-test-runner.ts';
import { parseForgeSpec, type ForgeSpec } from '../../../lib/forge/schemas.ts';
import { loadSuite, type SuiteTask } from '../../../lib/harness/eval/load-suite.ts';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import type { SandboxEnvironment } from '../../../lib/harness/sandbox/sandbox.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptStep } from '../../support/scripted-model-server.ts';
import { leakCheatCommand, parseCheatReport, type CheatReport } from './leak-cheat.ts';

/**
 * Measured quality of forged tasks (issue 17, item 6), with real processes throughout: the generated Python `src/`
 * library (with stale leftovers committed: a `build/lib/` copy and bytecode beside the sources) forged with the
 * README-style command and a scripted statement model; then, for every certified task, through the harness's own
 * grading: the null patch fails, the reference patch passes, and a cheating agent that digs the deleted code out of
 * git objects, leftovers and installed copies anywhere on the sandbox's file system finds nothing and fails. The same
 * cheat is shown to work (it finds the code and passes) where the answer IS reachable — in git history, in a leftover,
 * in an installed copy bound into the sandbox — so its failing on the tasks is the forge's doing.
 */

const STATEMENT_MARKER = 'A user reports';
const STATEMENT =
  `${STATEMENT_MARKER} that, since the last release, some everyday helpers of the library stopped working: calls that ` +
  'used to return a result now raise an error or give nothing back. The failing tests describe the behaviour users ' +
  'rely on; bring it back so that they pass again, without changing any test, and keep everything else working.';

/** The scripted model: a user-facing statement when asked for one, rubric scores when given the rubric's tool or asked for JSON. */
function statementModel(request: RecordedRequest): ScriptStep {
  const tools = (request.body['tools'] as Array<{ function?: { name?: string } }> | undefined) ?? [];
  const tool = tools.find((t) => t.function?.name)?.function?.name;
  if (tool === 'submit_scores') return reply.tool(tool, { solvableFromVisible: 4, coherentFeature: 4, reason: 'scripted review' });
  const messages = (request.body['messages'] as Array<{ role: string; content: string }> | undefined) ?? [];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  if (/\bJSON\b/.test(system) && !/statement for a coding exercise|write the task statement/i.test(system)) {
    return reply.text(JSON.stringify({ solvableFromVisible: 4, coherentFeature: 4, clarity: 4, leakage: 1, score: 4, reason: 'scripted review' }));
  }
  return reply.text(STATEMENT);
}

describe('forged tasks from a Python src/ layout: null fails, reference passes, the leak classes cannot be cheated', () => {
  let root: string;
  let ports: LocalPorts;
  let server: ScriptedModelServer;
  let provider: NamespaceSandboxProvider;
  let spec: ForgeSpec;
  let result: ForgeRunResult;
  let tasks: SuiteTask[];
  const originals = pythonSrcFiles({ workRounds: 0 });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-forge-quality-'));
    const repo = join(root, PYTHON_PACKAGE);
    mkdirSync(repo);
    generatePythonSrcRepo(repo, { workRounds: 0, leftovers: true });
    server = await startScriptedModelServer(statementModel);
    ports = openLocalPorts(join(root, '.flywheel'));
    provider = new NamespaceSandboxProvider({ root: join(root, 'sandbox') });
    spec = parseForgeSpec({ name: PYTHON_PACKAGE, repo: { kind: 'local', path: repo }, testCommand: PYTHON_SRC_TEST_COMMAND, suite: 'tally-quality', k: 2, maxTasks: 4, maxCandidates: 5 });
    const model = openAiCompatibleModel({ model: 'scripted-statements', baseUrl: server.baseUrl });
    result = await forgeRepository({ spec, provider, ports, runId: 'quality-run', candidates: forgeCandidateSource({ model }), workDir: join(root, 'work') });
    const suiteDir = join(root, 'suite');
    await exportSuite(ports, { suite: spec.suite, dir: suiteDir, reposDir: join(root, 'repos') });
    tasks = await loadSuite(suiteDir);
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const runTests = () => forgeTestRunner(provider, { env: result.spec.env });
  const sourceFiles = (t: SuiteTask) => ((t.task.metadata['forge'] as { files: string[] }).files ?? []).filter((f) => f.endsWith('.py'));
  const baseCommitOf = (t: SuiteTask) => (t.task.repo.kind === 'git' ? t.task.repo.commit : undefined);

  /** Runs the cheat in a lenient sandbox (history kept: the forge, not strict mode, must be what stops it). */
  async function cheat(sourceDir: string, baseCommit: string | undefined, files: string[], environment?: SandboxEnvironment): Promise<{ report: CheatReport; diff: string }> {
    const session = await provider.open({ sourceDir, ...(baseCommit ? { baseCommit } : {}), mode: 'lenient', networkAllowList: [], limits: { commandTimeoutMs: 120_000, outputBytes: 4 << 20 }, env: result.spec.env, ...(environment ? { environment } : {}) });
    try {
      const r = await session.exec(leakCheatCommand(files), { timeoutMs: 120_000 });
      expect(r.exitCode, r.stderr).toBe(0);
      return { report: parseCheatReport(r.stdout), diff: await session.diff() };
    } finally {
      await session.close();
    }
  }

  it('certifies tasks across files with the model statement, every candidate recorded with its reason', () => {
    expect(result.baseline.stable.length).toBeGreaterThanOrEqual(80);
    expect(result.tasks.length).toBeGreaterThanOrEqual(2);
    expect(tasks).toHaveLength(result.tasks.length);
    for (const { task } of tasks) {
      expect(task.instruction).toContain(STATEMENT_MARKER);
      expect(task.instruction).not.toMatch(/\bdef \w+\(.*\):/);
      const forge = task.metadata['forge'] as { files: string[]; leftovers: string[] };
      for (const f of forge.files) {
        expect(f.startsWith(`src/${PYTHON_PACKAGE}/`)).toBe(true);
        // The committed build copy of the module was in the tree, and the forge stripped it from the task.
        expect(forge.leftovers).toContain(`build/lib/${PYTHON_PACKAGE}/${f.slice(f.lastIndexOf('/') + 1)}`);
      }
    }
    expect(server.chatRequests().length).toBeGreaterThanOrEqual(tasks.length);
    for (const c of result.candidates) expect(c.verdict === 'certified' || c.reason !== undefined).toBe(true);
    if (process.env.FLYWHEEL_QUALITY_VERBOSE) console.log(JSON.stringify({ counts: result.counts, tasks: tasks.map((t) => [t.task.id, t.task.failToPass.length, t.task.instruction.slice(0, 60)]), requests: server.chatRequests().length }, null, 1));
  });

  it('the null patch fails every task and the reference patch passes it, graded by the harness', async () => {
    for (const { task, sourceDir } of tasks) {
      const none = await gradeAttempt({ task, sourceDir, diff: '', attemptId: `null-${task.id}`, runTests: runTests() });
      expect(none.passed, `${task.id}: the null patch passed`).toBe(false);
      const gold = await gradeAttempt({ task, sourceDir, diff: task.goldPatch!, attemptId: `gold-${task.id}`, runTests: runTests() });
      expect(gold.reasons, task.id).toEqual([]);
      expect(gold.passed).toBe(true);
    }
  }, 180_000);

  it('the cheat finds nothing in any task (git objects, leftovers, installed copies) and its patch fails', async () => {
    for (const t of tasks) {
      const files = sourceFiles(t);
      expect(files.length).toBeGreaterThan(0);
      const { report, diff } = await cheat(t.sourceDir, baseCommitOf(t), files);
      expect(report.found, `${t.task.id}: the deleted code is reachable`).toEqual([]);
      const grade = await gradeAttempt({ task: t.task, sourceDir: t.sourceDir, diff, attemptId: `cheat-${t.task.id}`, runTests: runTests() });
      expect(grade.passed, `${t.task.id}: the cheat passed`).toBe(false);
    }
  }, 180_000);

  it('the same cheat recovers the answer and passes where it is reachable: git history, a leftover, an installed copy', async () => {
    const t = tasks[0]!;
    const file = sourceFiles(t)[0]!;
    const original = originals[file]!;
    const module = file.slice(file.lastIndexOf('/') + 1);
    const leaky = (label: string, change: (dir: string) => void): string => {
      const dir = join(root, `leaky-${label}`);
      execFileSync('git', ['clone', '-q', t.sourceDir, dir]);
      change(dir);
      return dir;
    };
    const commit = (dir: string, message: string) => {
      execFileSync('git', ['add', '-A'], { cwd: dir });
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message], { cwd: dir });
    };
    const write = (dir: string, path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    // History: the original, then the stub again on top (HEAD's tree is the task's).
    const history = leaky('git', (dir) => {
      const stub = readFileSync(join(dir, file), 'utf8');
      write(dir, file, original);
      commit(dir, 'original');
      write(dir, file, stub);
      commit(dir, 'stub');
    });
    const leftover = leaky('leftover', (dir) => {
      write(dir, `build/lib/${PYTHON_PACKAGE}/${module}`, original);
      commit(dir, 'a build folder');
    });
    const siteDir = join(root, 'site-packages');
    write(siteDir, `${PYTHON_PACKAGE}/${module}`, original);
    const installed: SandboxEnvironment = { id: 'leaky-site-packages', binds: [{ source: siteDir, target: '/opt/leaky/python/site-packages' }], pathDirs: [] };
    const controls: Array<[string, string, SandboxEnvironment | undefined]> = [
      ['git', history, undefined],
      ['leftover', leftover, undefined],
      ['installed', t.sourceDir, installed],
    ];
    for (const [kind, dir, environment] of controls) {
      const { report, diff } = await cheat(dir, undefined, [file], environment);
      expect(report.written.map((w) => w.class), kind).toEqual([kind]);
      const grade = await gradeAttempt({ task: t.task, sourceDir: t.sourceDir, diff, attemptId: `control-${kind}`, runTests: runTests() });
      expect(grade.passed, `${kind}: ${grade.reasons.join('; ')}`).toBe(true);
    }
  }, 180_000);
});
