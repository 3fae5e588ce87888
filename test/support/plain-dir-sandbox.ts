import { spawn, execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ExecResult, SandboxSession } from '../../lib/harness/sandbox/sandbox.ts';

const run = promisify(execFile);

/**
 * Test-only SandboxSession over a plain temp directory (no isolation): a git repo so `diff()` works. The agent
 * tests use it so they do not depend on the real sandbox; the real one passes test/harness/conformance/.
 */
export async function openPlainDirSandbox(options: { files?: Record<string, string>; fromDir?: string; outputBytes?: number } = {}): Promise<SandboxSession> {
  const workdir = await mkdtemp(join(tmpdir(), 'fw-agent-'));
  if (options.fromDir) await cp(options.fromDir, workdir, { recursive: true });
  for (const [path, text] of Object.entries(options.files ?? {})) {
    await mkdir(dirname(join(workdir, path)), { recursive: true });
    await writeFile(join(workdir, path), text);
  }
  const git = (...args: string[]) => run('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: workdir });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '--allow-empty', '-m', 'base');
  const outputBytes = options.outputBytes ?? 1_000_000;
  let closed = false;
  return {
    workdir,
    mode: 'lenient',
    exec(command, opts = {}) {
      const t0 = Date.now();
      return new Promise<ExecResult>((resolve) => {
        const child = spawn('bash', ['-c', command], { cwd: opts.cwd ? join(workdir, opts.cwd) : workdir, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        let truncated = false;
        let limit: ExecResult['limit'];
        const add = (which: 'out' | 'err', chunk: Buffer) => {
          const room = outputBytes - Buffer.byteLength(out) - Buffer.byteLength(err);
          if (room <= 0) {
            truncated = true;
            return;
          }
          const s = chunk.subarray(0, room).toString('utf8');
          if (chunk.length > room) truncated = true;
          if (which === 'out') out += s;
          else err += s;
        };
        child.stdout.on('data', (c: Buffer) => add('out', c));
        child.stderr.on('data', (c: Buffer) => add('err', c));
        const timer = setTimeout(() => {
          limit = 'time';
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            /* already gone */
          }
        }, opts.timeoutMs ?? 60_000);
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ exitCode: code, signal, stdout: out, stderr: err, truncated, ...(limit ? { limit } : {}), durationMs: Date.now() - t0 });
        });
        child.stdin.on('error', () => undefined);
        child.stdin.end(opts.stdin ?? '');
      });
    },
    async diff() {
      await git('add', '-A');
      const { stdout } = await git('diff', '--cached', '--binary', 'HEAD');
      await git('reset', '-q');
      return stdout;
    },
    observations: () => [],
    async close() {
      if (closed) return;
      closed = true;
      await rm(workdir, { recursive: true, force: true });
    },
  };
}
