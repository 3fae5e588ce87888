/**
 * One attempt's folder on the host (`<root>/attempts/<id>`) and its removal. Made by `open`, removed by `close`, and
 * by `sweep` when the harness that owned it crashed: all three read the one layout below, so a crashed attempt is
 * cleaned exactly as a closed one.
 *
 *   owner       pid of the harness process that opened it (sweep leaves an attempt whose owner lives)
 *   cgroups     its cgroup directories, one a line (what to kill and remove when the session object is gone)
 *   ws          the workspace mount point (overlay, or a bind of the copy on the disk)
 *   disk        the size-capped tmpfs (`attempt-disk.ts`)
 *   egress.sock the egress proxy's socket (strict mode)
 *   git-layer/, files/  scratch layers of a source without `.git` (`workspace-layers.ts`)
 *
 * @example
 * const dir = await createAttemptDir(provider.attemptsDir);
 * …
 * await removeAttempt(dir, cgroup?.dirs);
 */
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isProcessAlive } from '../../shared/process-liveness.ts';
import { removeCgroupDirs } from './attempt-cgroup.ts';
import { unmount } from './workspace-layers.ts';

const execFileAsync = promisify(execFile);

/** Where each part of the attempt in `dir` lives. */
export function attemptPaths(dir: string): { owner: string; cgroups: string; workdir: string; disk: string; egressSocket: string } {
  return {
    owner: join(dir, 'owner'),
    cgroups: join(dir, 'cgroups'),
    workdir: join(dir, 'ws'),
    disk: join(dir, 'disk'),
    egressSocket: join(dir, 'egress.sock'),
  };
}

/** A fresh attempt folder under `attemptsDir`, owned by this process. */
export async function createAttemptDir(attemptsDir: string): Promise<string> {
  const id = randomUUID();
  const attemptDir = join(attemptsDir, id);
  await mkdir(attemptDir, { recursive: true });
  await writeFile(attemptPaths(attemptDir).owner, `${process.pid}\n`);
  return attemptDir;
}

/** Notes the attempt's cgroups, so a sweep can still find them after a crash. */
export async function recordCgroups(attemptDir: string, dirs: string[]): Promise<void> {
  await writeFile(attemptPaths(attemptDir).cgroups, `${dirs.join('\n')}\n`);
}

/**
 * Kills what still runs in the attempt's cgroups and removes them (before the disk it may be writing to goes),
 * unmounts its workspace and disk, deletes its folder. `cgroups`: the ones known in memory; absent, the file's.
 */
export async function removeAttempt(attemptDir: string, cgroups?: string[]): Promise<void> {
  const paths = attemptPaths(attemptDir);
  const dirs = cgroups ?? (await readFile(paths.cgroups, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  await removeCgroupDirs(dirs);
  await unmountAll([paths.workdir, paths.disk]);
  await rm(attemptDir, { recursive: true, force: true });
}

/**
 * Removes attempts whose owning process died without closing them (a crashed harness); returns their ids. The
 * forwarder dies when its stdin closes.
 */
export async function sweepAttempts(attemptsDir: string): Promise<string[]> {
  const removed: string[] = [];
  const entries = await readdir(attemptsDir).catch(() => [] as string[]);
  for (const id of entries) {
    const dir = join(attemptsDir, id);
    const owner = Number((await readFile(attemptPaths(dir).owner, 'utf8').catch(() => '')).trim());
    if (isProcessAlive(owner)) continue;
    await removeAttempt(dir);
    removed.push(id);
  }
  return removed;
}

/** Unmounts those of `paths` that are mount points (the workspace before the disk under it), in one `umount`. */
async function unmountAll(paths: string[]): Promise<void> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  const mounted = paths.filter((m) => mounts.includes(` ${m} `));
  if (mounted.length === 0) return;
  await execFileAsync('umount', mounted).catch(async () => {
    for (const m of mounted) await unmount(m);
  });
}
