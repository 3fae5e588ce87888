/**
 * `npm run bench:harness`: the strict harness's overhead per attempt (workspace set-up, history strip and audit,
 * egress proxy start, the post-attempt re-audit, teardown and history restore; agent time excluded) on a generated repository of 10,000 files
 * and 1,000 commits. Prints median and p95 per step over N attempts, per mode and workspace strategy, plus the cold
 * first attempt (layer cache build).
 *
 * Then attempts/hour: whole strict attempts (sandbox, setup, the agent loop against a scripted OpenAI-protocol model
 * over real HTTP, diff, grading in a second sandbox, records and blobs written) of a small Python task, at
 * concurrency 1 and 4; each row is the median of several rounds.
 *
 * What isolation costs, measured in the same run: one command in a strict sandbox (bubblewrap, user namespace, the
 * attempt's cgroups, seccomp, allow-list root) against a bare `spawn` and against fresh pid and mount namespaces alone
 * (`unshare --pid --fork --mount --mount-proc`: the floor of any namespace sandbox; the previous sandbox paid that plus
 * a mount script per command).
 *
 * Task environments: a Python layer (virtualenv, pytest, one requirement) and a Node layer (`npm ci` of one package)
 * built cold into a fresh cache, then resolved from the cache (same resolver, and a new resolver as a new process
 * would).
 *
 * Options (env): FLYWHEEL_BENCH_ATTEMPTS (20), FLYWHEEL_BENCH_FILES (10000), FLYWHEEL_BENCH_COMMITS (1000),
 * FLYWHEEL_BENCH_RATE_ATTEMPTS (8 per round), FLYWHEEL_BENCH_RATE_ROUNDS (3), FLYWHEEL_BENCH_COMMANDS (30),
 * FLYWHEEL_BENCH_ENV_ROUNDS (3), FLYWHEEL_BENCH_PART (all | overhead | commands | environment | rate).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { harnessGrader } from '../lib/harness/attempt/harness-grader.ts';
import { listAttemptRecords } from '../lib/harness/attempt/read-attempt-records.ts';
import { loadSuite } from '../lib/harness/eval/load-suite.ts';
import { runEval } from '../lib/harness/eval/run-eval.ts';
import { cachedEnvironmentResolver, NamespaceSandboxProvider, type NamespaceSandboxSession } from '../lib/harness/sandbox/namespace-sandbox.ts';
import { openAiCompatibleModel } from '../lib/models/openai-compatible.ts';
import { CORRECT_FIX, makeCalcSuite } from '../test/harness/eval/calc-suite.ts';
import { startScriptedModelServer } from '../test/support/scripted-model-server.ts';
import type { SandboxSpec } from '../lib/harness/sandbox/sandbox.ts';
import { HARNESS_MODES } from '../lib/harness/task/harness-mode.ts';

/** Writes a repository with `files` files and `commits` commits through `git fast-import` (seconds, not minutes). */
export function generateRepo(dir: string, files: number, commits: number): string {
  spawnSync('git', ['init', '-q', '-b', 'main', dir]);
  const chunks: string[] = [];
  let mark = 0;
  const who = (t: number) => `Dev <dev@example.com> ${1_700_000_000 + t} +0000`;
  for (let c = 0; c < commits; c++) {
    const msg = `commit ${c}`;
    chunks.push(`commit refs/heads/main\nmark :${++mark}\nauthor ${who(c)}\ncommitter ${who(c)}\ndata ${msg.length}\n${msg}\n`);
    if (c > 0) chunks.push(`from :${mark - 1}\n`);
    const touched = c === 0 ? files : 10;
    for (let i = 0; i < touched; i++) {
      const f = c === 0 ? i : (c * 7919 + i * 104729) % files;
      const body = `// file ${f}, version ${c}\nexport const value${f} = ${c * files + f};\n`;
      chunks.push(`M 100644 inline src/d${f % 100}/f${f}.ts\ndata ${Buffer.byteLength(body)}\n${body}`);
    }
    chunks.push('\n');
  }
  const r = spawnSync('git', ['fast-import', '--quiet'], { cwd: dir, input: chunks.join(''), maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`fast-import failed: ${r.stderr.toString()}`);
  spawnSync('git', ['repack', '-a', '-d', '-q'], { cwd: dir });
  // Base = an early commit, so the later 900+ commits are what strict mode must hide.
  const base = spawnSync('git', ['rev-parse', 'main~900'], { cwd: dir }).stdout.toString().trim();
  spawnSync('git', ['checkout', '-q', 'main'], { cwd: dir });
  return base;
}

export interface AttemptTiming {
  openMs: number;
  /** Strict mode's post-attempt history re-audit (0 in lenient mode). */
  reauditMs: number;
  closeMs: number;
  totalMs: number;
  steps: NamespaceSandboxSession['timings'];
}

/** Runs `attempts` attempts (`attempt` is the agent; a no-op measures pure overhead) at `concurrency`. */
export async function measureAttempts(input: {
  provider: NamespaceSandboxProvider;
  spec: SandboxSpec;
  attempts: number;
  concurrency?: number;
  attempt?: (session: NamespaceSandboxSession) => Promise<void>;
}): Promise<{ timings: AttemptTiming[]; wallMs: number; attemptsPerHour: number }> {
  const timings: AttemptTiming[] = [];
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < input.attempts) {
      next++;
      const t0 = performance.now();
      const session = await input.provider.open(input.spec);
      const t1 = performance.now();
      await input.attempt?.(session);
      const t2 = performance.now();
      await session.reaudit();
      const t2b = performance.now();
      await session.close();
      const t3 = performance.now();
      timings.push({ openMs: t1 - t0, reauditMs: t2b - t2, closeMs: t3 - t2b, totalMs: t1 - t0 + (t3 - t2), steps: { ...session.timings } });
    }
  };
  await Promise.all(Array.from({ length: input.concurrency ?? 1 }, worker));
  const wallMs = Date.now() - started;
  return { timings, wallMs, attemptsPerHour: (input.attempts / wallMs) * 3_600_000 };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

const fmt = (n: number) => n.toFixed(1).padStart(7);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Whole attempts per hour of the small calc task (read, edit, submit: 3 model turns) at `concurrency`, graded, in
 * strict mode: `rounds` rounds of `attempts` attempts, each round a fresh run id; returns per-round figures.
 */
export async function measureAttemptRate(input: { work: string; concurrency: number; attempts: number; rounds: number }): Promise<{
  attemptsPerHour: number[];
  attemptMs: number[];
  passed: number;
  total: number;
}> {
  const dir = join(input.work, `rate-c${input.concurrency}`);
  makeCalcSuite(dir);
  const server = await startScriptedModelServer(CORRECT_FIX);
  const ports = openLocalPorts(join(dir, 'data'));
  const provider = new NamespaceSandboxProvider({ root: join(dir, 'sb') });
  const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder' });
  const tasks = await loadSuite(join(dir, 'suite'));
  const perHour: number[] = [];
  const attemptMs: number[] = [];
  let passed = 0;
  let total = 0;
  try {
    // A warm-up attempt builds the layer cache (measured apart in the overhead table).
    await runEval({ runId: 'warm', tasks, mode: 'strict', attempts: 1, concurrency: 1, model, provider, ports, grade: harnessGrader({ provider, blobs: ports.blobs }) });
    for (let r = 0; r < input.rounds; r++) {
      const results = await runEval({
        runId: `round-${r}`,
        tasks,
        mode: 'strict',
        attempts: input.attempts,
        concurrency: input.concurrency,
        model,
        provider,
        ports,
        grade: harnessGrader({ provider, blobs: ports.blobs }),
      });
      perHour.push((input.attempts / results.wallTimeMs) * 3_600_000);
      for (const rec of await listAttemptRecords(ports.records, `round-${r}`)) attemptMs.push(rec.durationMs);
      passed += results.counts.passed;
      total += input.attempts;
    }
  } finally {
    ports.close();
    await server.close();
  }
  return { attemptsPerHour: perHour, attemptMs, passed, total };
}

async function main(): Promise<void> {
  const part = process.env.FLYWHEEL_BENCH_PART ?? 'all';
  const attempts = Number(process.env.FLYWHEEL_BENCH_ATTEMPTS ?? 20);
  const files = Number(process.env.FLYWHEEL_BENCH_FILES ?? 10_000);
  const commits = Number(process.env.FLYWHEEL_BENCH_COMMITS ?? 1_000);
  const work = mkdtempSync(join(tmpdir(), 'fw-bench-'));
  try {
    if (part === 'all' || part === 'overhead') await overhead(work, attempts, files, commits);
    if (part === 'all' || part === 'commands') await commandCost(work, Number(process.env.FLYWHEEL_BENCH_COMMANDS ?? 30));
    if (part === 'all' || part === 'environment') await environmentBuilds(work, Number(process.env.FLYWHEEL_BENCH_ENV_ROUNDS ?? 3));
    if (part === 'all' || part === 'rate') {
      const rateAttempts = Number(process.env.FLYWHEEL_BENCH_RATE_ATTEMPTS ?? 8);
      const rounds = Number(process.env.FLYWHEEL_BENCH_RATE_ROUNDS ?? 3);
      console.log(`\nattempts/hour: strict, graded, scripted model over HTTP, calc task (3 turns); ${rounds} round(s) of ${rateAttempts} attempts`);
      console.log('concurrency | attempts/hour median (rounds) | attempt ms median  p95 | passed');
      for (const concurrency of [1, 4]) {
        const r = await measureAttemptRate({ work, concurrency, attempts: rateAttempts, rounds });
        console.log(
          `${String(concurrency).padStart(11)} | ${median(r.attemptsPerHour).toFixed(0).padStart(20)} (${r.attemptsPerHour.map((x) => x.toFixed(0)).join(', ')}) |` +
            `${fmt(median(r.attemptMs))}${fmt(quantile(r.attemptMs, 0.95))} | ${r.passed}/${r.total}`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function overhead(work: string, attempts: number, files: number, commits: number): Promise<void> {
  {
    const g0 = Date.now();
    const repo = join(work, 'repo');
    const base = generateRepo(repo, files, commits);
    console.log(`repository: ${files} files, ${commits} commits, generated in ${Date.now() - g0} ms; base = main~900`);
    console.log(`attempts per row: ${attempts} (after one cold attempt that builds the layer cache)\n`);
    console.log('mode     workspace  cold ms | median  p95 total | median open reaudit close | median layers workspace audit network');
    for (const mode of HARNESS_MODES) {
      for (const workspace of ['overlay', 'copy'] as const) {
        const provider = new NamespaceSandboxProvider({ root: join(work, `sb-${mode}-${workspace}`), workspace });
        const spec: SandboxSpec = {
          sourceDir: repo,
          baseCommit: base,
          mode,
          networkAllowList: [],
          limits: { commandTimeoutMs: 30_000, outputBytes: 1 << 20 },
        };
        const cold = await measureAttempts({ provider, spec, attempts: 1 });
        const { timings } = await measureAttempts({ provider, spec, attempts });
        const col = (f: (t: AttemptTiming) => number) => timings.map(f);
        console.log(
          `${mode.padEnd(8)} ${workspace.padEnd(9)} ${fmt(cold.timings[0]?.totalMs ?? NaN)} |` +
            `${fmt(quantile(col((t) => t.totalMs), 0.5))}${fmt(quantile(col((t) => t.totalMs), 0.95))}       |` +
            `${fmt(quantile(col((t) => t.openMs), 0.5))}${fmt(quantile(col((t) => t.reauditMs), 0.5))}${fmt(quantile(col((t) => t.closeMs), 0.5))} |` +
            `${fmt(quantile(col((t) => t.steps.layersMs), 0.5))}${fmt(quantile(col((t) => t.steps.workspaceMs), 0.5))}  ` +
            `${fmt(quantile(col((t) => t.steps.auditMs), 0.5))}${fmt(quantile(col((t) => t.steps.networkMs), 0.5))}`,
        );
      }
    }
    console.log('\naim: median total under 300 ms per attempt (strict, overlay is the default where the kernel allows it)');
  }
}

/** Milliseconds of one child process from spawn to exit. */
function timeSpawn(file: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(performance.now() - t0) : fail(new Error(`${file} exited ${code}`))));
  });
}

/** One command's cost: bare spawn, the previous design's namespaces, and the strict sandbox, interleaved so load hits all three alike. */
async function commandCost(work: string, commands: number): Promise<void> {
  const repo = join(work, 'cmd-repo');
  mkdirSync(repo, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(join(repo, 'README.md'), 'bench\n');
  spawnSync('git', ['-C', repo, 'add', '-A']);
  spawnSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-qm', 'one']);
  const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-cmd') });
  const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits: { commandTimeoutMs: 30_000, outputBytes: 1 << 20 } });
  const bare: number[] = [];
  const namespaces: number[] = [];
  const sandboxed: number[] = [];
  try {
    await session.exec('true');
    for (let i = 0; i < commands; i++) {
      bare.push(await timeSpawn('/bin/true', []));
      namespaces.push(await timeSpawn('unshare', ['--pid', '--fork', '--kill-child', '--mount', '--mount-proc', '--propagation', 'private', '--', '/bin/true']));
      const t0 = performance.now();
      const r = await session.exec('true');
      if (r.exitCode !== 0) throw new Error(`sandboxed true exited ${r.exitCode}: ${r.stderr}`);
      sandboxed.push(performance.now() - t0);
    }
  } finally {
    await session.close();
  }
  const m = { bare: median(bare), namespaces: median(namespaces), sandboxed: median(sandboxed) };
  console.log(`\none command (\`true\`), median of ${commands}, interleaved:`);
  console.log(`  bare spawn                         ${fmt(m.bare)} ms`);
  console.log(`  pid + mount namespaces alone       ${fmt(m.namespaces)} ms`);
  console.log(`  strict sandbox (this design)       ${fmt(m.sandboxed)} ms   ${(m.sandboxed / m.namespaces).toFixed(1)}× the namespaces alone, +${(m.sandboxed - m.namespaces).toFixed(1)} ms`);
}

/** Cold builds of a Python and a Node layer (a fresh cache each round), then cached resolves. */
async function environmentBuilds(work: string, rounds: number): Promise<void> {
  const pyTree = join(work, 'env-py');
  mkdirSync(pyTree, { recursive: true });
  writeFileSync(join(pyTree, 'requirements.txt'), 'iniconfig\n');
  writeFileSync(join(pyTree, 'test_one.py'), 'def test_one():\n    assert True\n');
  const nodeTree = join(work, 'env-node');
  mkdirSync(nodeTree, { recursive: true });
  writeFileSync(join(nodeTree, 'package.json'), JSON.stringify({ name: 'bench-node', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } }));
  const lock = spawnSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: nodeTree });
  if (lock.status !== 0) throw new Error(`npm could not write the bench lockfile: ${lock.stderr.toString()}`);
  const rows: Record<string, number[]> = { 'python cold': [], 'node cold': [], 'cached, same resolver': [], 'cached, new resolver': [] };
  for (let r = 0; r < rounds; r++) {
    const cacheDir = join(work, `envs-${r}`);
    const resolver = cachedEnvironmentResolver({ cacheDir });
    let t0 = performance.now();
    await resolver.resolve({ treeDir: pyTree });
    rows['python cold']!.push(performance.now() - t0);
    t0 = performance.now();
    await resolver.resolve({ treeDir: nodeTree });
    rows['node cold']!.push(performance.now() - t0);
    t0 = performance.now();
    await resolver.resolve({ treeDir: pyTree });
    rows['cached, same resolver']!.push(performance.now() - t0);
    t0 = performance.now();
    await cachedEnvironmentResolver({ cacheDir }).resolve({ treeDir: pyTree });
    rows['cached, new resolver']!.push(performance.now() - t0);
  }
  console.log(`\ntask environment layers, ${rounds} round(s), built in the strict build sandbox (package indexes only):`);
  for (const [name, values] of Object.entries(rows)) {
    console.log(`  ${name.padEnd(24)} median ${fmt(median(values))} ms  (${values.map((v) => v.toFixed(0)).join(', ')})`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
