/**
 * Runs one command of an attempt: spawns its exec chain (`sandbox-command.ts`), keeps at most the output cap of
 * stdout+stderr (and kills a command that floods far past it), stops it at its time limit or when the attempt hits its
 * process limit, and then says which limit ended it. The attempt's limits are shared by all its commands, so the
 * cgroup's counters and the disk's fullness are read before and after: only a change during this command is its own.
 *
 * @example
 * const cwd = commandCwd(workdir, 'src');
 * const r = await runCommand({ plan, cgroup, disk, limits: spec.limits, running }, { command: 'make', cwd, internal: false });
 * r.limit; // 'memory' when the OOM killer acted during the command
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { ValidationError } from '../../errors.ts';
import type { AttemptCgroup, CgroupCounters } from './attempt-cgroup.ts';
import { diskFull, type AttemptDisk } from './attempt-disk.ts';
import type { ExecResult, SandboxLimits } from './sandbox.ts';
import { LAUNCH_FAILURE_PREFIX, sandboxCommand, type CommandPlan } from './sandbox-command.ts';
import { SandboxExecError } from './sandbox-errors.ts';

const NO_SPACE = /No space left on device|ENOSPC|Disk quota exceeded/;
/** How often a running command's process counter is read (a fork bomb is killed at the next read). */
const PIDS_POLL_MS = 200;
/** What the harness's own commands (diff, re-audit) may print: a whole patch or object listing. */
const INTERNAL_OUTPUT_BYTES = 512 * 1024 * 1024;

function signalName(n: number): string | null {
  for (const [name, value] of Object.entries(osConstants.signals)) if (value === n) return name;
  return null;
}

/** The absolute cwd for `cwd` (relative to the workspace); anything outside the workspace is refused. */
export function commandCwd(workdir: string, cwd: string | undefined): string {
  const abs = resolve(workdir, cwd ?? '.');
  const rel = relative(workdir, abs);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new ValidationError(`cwd ${abs} is outside the workspace`);
  return abs;
}

export interface CommandContext {
  plan: CommandPlan;
  cgroup: AttemptCgroup;
  disk: AttemptDisk;
  limits: SandboxLimits;
  /** The attempt's running commands: added while this one runs, so teardown can kill it. */
  running: Set<ChildProcess>;
}

/**
 * Runs `command` in `cwd` (already checked by `commandCwd`). `internal` commands are the harness's own: a larger
 * output cap, and the environment's workspace binds left out.
 */
export async function runCommand(
  ctx: CommandContext,
  run: { command: string; cwd: string; internal: boolean; timeoutMs?: number; stdin?: string },
): Promise<ExecResult> {
  const { plan, cgroup, disk, limits } = ctx;
  const { command, cwd, internal } = run;
  const outputCap = internal ? INTERNAL_OUTPUT_BYTES : limits.outputBytes;
  const timeoutMs = run.timeoutMs ?? limits.commandTimeoutMs;
  const [before, fullBefore] = await Promise.all([cgroup.counters(), diskFull(disk)]);

  const { file, args } = sandboxCommand(plan, { command, cwd, internal });
  const started = Date.now();
  const child = spawn(file, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
  ctx.running.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let kept = 0;
  let seen = 0;
  let truncated = false;
  let limit: ExecResult['limit'];
  const stop = (why: NonNullable<ExecResult['limit']>) => {
    if (!limit) limit = why;
    child.kill('SIGKILL');
  };
  const killAt = outputCap * 4 + 1024 * 1024;
  const take = (sink: Buffer[]) => (d: Buffer) => {
    seen += d.length;
    if (kept < outputCap) {
      const room = outputCap - kept;
      sink.push(room >= d.length ? d : d.subarray(0, room));
      kept += Math.min(room, d.length);
    }
    if (seen > outputCap) truncated = true;
    if (seen > killAt && !limit) stop('output');
  };
  child.stdout.on('data', take(out));
  child.stderr.on('data', take(err));
  child.stdin.on('error', () => undefined);
  child.stdin.end(run.stdin ?? '');
  const timer = setTimeout(() => stop('time'), timeoutMs);
  // A command at the attempt's process limit (a fork bomb) is stopped rather than left spinning until the clock.
  const pidsWatch = setInterval(() => {
    void cgroup.counters().then((now) => {
      if (now.pidsMax > before.pidsMax && !limit) stop('processes');
    });
  }, PIDS_POLL_MS);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on('close', (c, s) => done({ code: c, signal: s }));
    child.on('error', () => done({ code: null, signal: null }));
  });
  clearTimeout(timer);
  clearInterval(pidsWatch);
  ctx.running.delete(child);
  const durationMs = Date.now() - started;
  const stdout = Buffer.concat(out).toString('utf8');
  const stderr = Buffer.concat(err).toString('utf8');
  if (code === 125 && stderr.includes(LAUNCH_FAILURE_PREFIX)) {
    throw new SandboxExecError(`the sandbox could not start the command: ${stderr.trim().slice(0, 300)}`);
  }

  // bubblewrap reports a command killed by a signal as 128 + n.
  let exitCode = code;
  let sig: string | null = signal;
  if (code !== null && code > 128 && code <= 128 + 64) {
    sig = signalName(code - 128);
    if (sig) exitCode = null;
  }
  if (!limit || limit === 'time') {
    const after: CgroupCounters = await cgroup.counters();
    if (after.pidsMax > before.pidsMax) limit = 'processes';
    else if (after.oomKills > before.oomKills) limit = 'memory';
  }
  if (!limit && limits.cpuSeconds && (sig === 'SIGXCPU' || (sig === 'SIGKILL' && durationMs >= limits.cpuSeconds * 900))) limit = 'cpu';
  // The disk cap: the attempt's disk is full now and this command filled it or was refused a write (ENOSPC).
  if (!limit && (await diskFull(disk)) && (!fullBefore || NO_SPACE.test(stderr) || NO_SPACE.test(stdout))) limit = 'disk';
  return { exitCode, signal: sig, stdout, stderr, truncated, limit, durationMs };
}
