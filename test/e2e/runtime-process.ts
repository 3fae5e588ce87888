/**
 * Starts the local runtime as a real child process (`node bin/flywheel.ts start --port 0`) and finds its URL and key
 * in the `runtime.json` it writes into the data folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO_ROOT, 'bin', 'flywheel.ts');

export interface RuntimeProcess {
  url: string;
  apiKey: string;
  child: ChildProcess;
  output: () => string;
  /** Sends the signal and waits for the exit; returns the exit code (null when killed by the signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  dataDir: string;
  env?: Record<string, string>;
  args?: string[];
}

export async function startRuntime(options: StartOptions): Promise<RuntimeProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'start', '--port', '0', '--data-dir', options.dataDir, ...(options.args ?? [])],
    { cwd: REPO_ROOT, env: { ...process.env, FLYWHEEL_LOG_LEVEL: 'WARN', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (gone) throw new Error(`runtime exited before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`runtime not ready after 20 s:\n${output}`);
    }
    try {
      const info = JSON.parse(readFileSync(join(options.dataDir, 'runtime.json'), 'utf8')) as {
        url: string;
        apiKey: string;
        pid: number;
      };
      if (info.pid === child.pid && output.includes(info.url)) {
        return {
          url: info.url,
          apiKey: info.apiKey,
          child,
          output: () => output,
          async stop(signal = 'SIGTERM') {
            if (!gone) child.kill(signal);
            return exited;
          },
        };
      }
    } catch {
      // not written yet
    }
    await sleep(50);
  }
}

/** Runs the CLI to completion (`node bin/flywheel.ts …`). */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, FLYWHEEL_LOG_LEVEL: 'WARN', ...env },
  });
  return { stdout, stderr };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a value (not undefined) or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await sleep(everyMs);
  }
}

let counter = 0;
/** A valid feedback event with unique ids; `overrides` replace fields. */
export function feedbackEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  const id = `${process.pid}-${Date.now().toString(36)}-${counter}`;
  return {
    eventId: `e2e-${id}`,
    kind: 'rating',
    rating: 'up',
    traceId: `trace-${id}`,
    sessionId: 'session-1',
    turnId: '1',
    model: 'ckpt-e2e',
    source: 'user',
    reporter: 'e2e',
    trainingConsent: true,
    occurredAt: new Date().toISOString(),
    ...overrides,
  };
}
