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
import { RUNTIME_START_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

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

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!gone) child.kill(signal);
    return exited;
  };
  try {
    // Ready when runtime.json names this child and the child printed that URL: a condition, bounded for a hang.
    const info = await waitFor(
      () => {
        if (gone) throw new RuntimeExitedError(`runtime exited before it was ready:\n${output}`);
        const written = readRuntimeInfo(options.dataDir);
        return written && written.pid === child.pid && output.includes(written.url) ? written : undefined;
      },
      { what: () => `the runtime to write runtime.json and print its URL:\n${output}`, timeoutMs: RUNTIME_START_TIMEOUT_MS, stopOn: (error) => error instanceof RuntimeExitedError },
    );
    return { url: info.url, apiKey: info.apiKey, child, output: () => output, stop };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

class RuntimeExitedError extends Error {}

function readRuntimeInfo(dataDir: string): { url: string; apiKey: string; pid: number } | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { url: string; apiKey: string; pid: number };
  } catch {
    return undefined; // not written yet, or half written
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
