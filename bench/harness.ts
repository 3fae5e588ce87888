/**
 * `npm run bench:harness`: the strict harness's overhead per attempt (workspace set-up, history strip and audit,
 * egress proxy start, teardown and history restore; agent time excluded) on a generated repository of 10,000 files
 * and 1,000 commits. Prints median and p95 per step over N attempts, per mode and workspace strategy, plus the cold
 * first attempt (layer cache build).
 *
 * Hook for attempts/hour with a scripted model: `measureAttempts({ ..., attempt: async (session) => runAgent(session) })`
 * times whole attempts, agent included, at a given concurrency.
 *
 * Options (env): FLYWHEEL_BENCH_ATTEMPTS (20), FLYWHEEL_BENCH_FILES (10000), FLYWHEEL_BENCH_COMMITS (1000).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceSandboxProvider, type NamespaceSandboxSession } from '../lib/harness/sandbox/namespace-sandbox.ts';
import type { HarnessMode, SandboxSpec } from '../lib/harness/sandbox/sandbox.ts';

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
      await session.close();
      const t3 = performance.now();
      timings.push({ openMs: t1 - t0, closeMs: t3 - t2, totalMs: t1 - t0 + (t3 - t2), steps: { ...session.timings } });
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

async function main(): Promise<void> {
  const attempts = Number(process.env.FLYWHEEL_BENCH_ATTEMPTS ?? 20);
  const files = Number(process.env.FLYWHEEL_BENCH_FILES ?? 10_000);
  const commits = Number(process.env.FLYWHEEL_BENCH_COMMITS ?? 1_000);
  const work = mkdtempSync(join(tmpdir(), 'fw-bench-'));
  try {
    const g0 = Date.now();
    const repo = join(work, 'repo');
    const base = generateRepo(repo, files, commits);
    console.log(`repository: ${files} files, ${commits} commits, generated in ${Date.now() - g0} ms; base = main~900`);
    console.log(`attempts per row: ${attempts} (after one cold attempt that builds the layer cache)\n`);
    console.log('mode     workspace  cold ms | median  p95 total | median open  close | median layers workspace audit network');
    for (const mode of ['strict', 'lenient'] as HarnessMode[]) {
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
            `${fmt(quantile(col((t) => t.openMs), 0.5))}     ${fmt(quantile(col((t) => t.closeMs), 0.5))} |` +
            `${fmt(quantile(col((t) => t.steps.layersMs), 0.5))}${fmt(quantile(col((t) => t.steps.workspaceMs), 0.5))}  ` +
            `${fmt(quantile(col((t) => t.steps.auditMs), 0.5))}${fmt(quantile(col((t) => t.steps.networkMs), 0.5))}`,
        );
      }
    }
    console.log('\naim: median total under 300 ms per attempt (strict, overlay is the default where the kernel allows it)');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
