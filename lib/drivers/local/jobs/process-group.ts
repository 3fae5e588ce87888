/**
 * Process supervision: one command run in its own process group, so a timeout, a stop or its end takes the whole
 * tree with it (SIGTERM, then SIGKILL after a grace time; stragglers holding the pipes get SIGKILL when the leader
 * exits). Its output goes to a log file a line at a time, and its end comes back as an exit code the way a
 * container reports one (128 + the signal's number when a signal ended it).
 *
 * @example
 * const group = ProcessGroup.start({ file: process.execPath, args: ['job.ts'], cwd, env, logFile, killGraceMs: 5000 });
 * group.onSpawn(() => group.limitTime(60_000));
 * const end = await group.ended; // { exitCode: 0, timedOut: false }
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { timestampedLines } from './job-logs.ts';

export interface ProcessGroupOptions {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Appended to, one timestamped line per output line of stdout and stderr. */
  logFile: string;
  /** Between SIGTERM and SIGKILL when the group is terminated. */
  killGraceMs: number;
  now?: () => number;
}

/** How the process ended: an exit code, or the error that kept it from starting. */
export type ProcessEnd = ({ exitCode: number } | { spawnError: Error }) & { timedOut: boolean };

/** Sends `signal` to the process group led by `pid`; a group already gone is not an error. */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * True when `pid` leads its own process group and its environment holds `variable` (`NAME=value`): it is the process
 * that was started with it, not another that reused the pid.
 */
export function isGroupLeaderWith(pid: number, variable: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pid) return false;
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(variable);
  } catch {
    return false;
  }
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  return code ?? 128 + (signal ? osConstants.signals[signal] : 0);
}

export class ProcessGroup {
  /** Settles once the process ended and its last output line is in the log. */
  readonly ended: Promise<ProcessEnd>;
  readonly #child: ChildProcess;
  readonly #killGraceMs: number;
  #timeLimit: NodeJS.Timeout | undefined;
  #killTimer: NodeJS.Timeout | undefined;
  #stopping = false;
  #timedOut = false;

  private constructor(options: ProcessGroupOptions) {
    const now = options.now ?? Date.now;
    this.#killGraceMs = options.killGraceMs;
    const log = createWriteStream(options.logFile, { flags: 'a' });
    const child = spawn(options.file, options.args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    const out = timestampedLines(log, now);
    const err = timestampedLines(log, now);
    child.stdout?.on('data', out.write);
    child.stderr?.on('data', err.write);
    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // Stragglers of the tree (a backgrounded grandchild holding the pipes) go with the leader.
      if (child.pid) killProcessGroup(child.pid, 'SIGKILL');
    });
    this.ended = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        out.flush();
        err.flush();
        this.#clearTimers();
        const timedOut = this.#timedOut;
        log.end(() => {
          const e = exit ?? { code, signal };
          resolve(spawnError ? { spawnError, timedOut } : { exitCode: exitCodeOf(e.code, e.signal), timedOut });
        });
      });
    });
  }

  /** Starts `options.file` as the leader of a new process group. */
  static start(options: ProcessGroupOptions): ProcessGroup {
    return new ProcessGroup(options);
  }

  /** The leader's pid (undefined when it could not be started). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** True once `terminate` or `kill` was called. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Calls `listener` once the process has started (never, when it could not start). */
  onSpawn(listener: (pid: number) => void): void {
    this.#child.once('spawn', () => {
      if (this.#child.pid) listener(this.#child.pid);
    });
  }

  /** Terminates the group when it runs longer than `ms` from now; its end then reports `timedOut`. */
  limitTime(ms: number): void {
    if (this.#stopping) return;
    this.#timeLimit = setTimeout(() => {
      this.#timedOut = true;
      this.terminate();
    }, ms);
  }

  /** SIGTERM to the whole group, SIGKILL after the grace time; a second call does nothing. */
  terminate(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    const pid = this.#child.pid;
    if (!pid) return;
    killProcessGroup(pid, 'SIGTERM');
    this.#killTimer = setTimeout(() => killProcessGroup(pid, 'SIGKILL'), this.#killGraceMs);
    this.#killTimer.unref();
  }

  /** SIGKILL to the whole group now, with no time limit left to fire. */
  kill(): void {
    this.#stopping = true;
    if (this.#timeLimit) clearTimeout(this.#timeLimit);
    if (this.#child.pid) killProcessGroup(this.#child.pid, 'SIGKILL');
  }

  #clearTimers(): void {
    if (this.#timeLimit) clearTimeout(this.#timeLimit);
    if (this.#killTimer) clearTimeout(this.#killTimer);
  }
}
