/**
 * The size-capped disk of one attempt: a tmpfs mounted under the attempt's folder that holds everything a sandboxed
 * command can write — the overlay's upper and work folders (the workspace's changes) and the folder shown as /tmp —
 * so the bytes and files an attempt writes are capped together at `limits.diskBytes`. Writing past it fails with
 * ENOSPC inside the sandbox; the host's disk never fills.
 *
 * tmpfs pages live in memory and are charged to the memory cgroup of the process that wrote them, so an attempt's
 * disk also counts against its memory limit. A copy workspace (no overlayfs) lives on the same tmpfs: the base
 * files are copied in, then the cap is raised by exactly what the copy used.
 */
import { execFile } from 'node:child_process';
import { chown, mkdir, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Below this many free bytes (or with no free inodes) a failed command is taken to have hit the disk cap. */
const FULL_BELOW_BYTES = 256 * 1024;

export interface AttemptDisk {
  /** The mount point. */
  dir: string;
  upper: string;
  work: string;
  tmp: string;
}

function inodesFor(bytes: number): number {
  return Math.max(16_384, Math.floor(bytes / 4096));
}

/**
 * Mounts the capped tmpfs at `dir` (owned by `owner`) with its upper/, work/ and tmp/ folders.
 *
 * @example
 * const disk = await mountAttemptDisk(join(attemptDir, 'disk'), 2 << 30, { uid: 61000, gid: 61000 });
 */
export async function mountAttemptDisk(dir: string, bytes: number, owner: { uid: number; gid: number }): Promise<AttemptDisk> {
  await mkdir(dir, { recursive: true });
  const options = `size=${bytes},nr_inodes=${inodesFor(bytes)},mode=0755,uid=${owner.uid},gid=${owner.gid}`;
  await run('mount', ['-t', 'tmpfs', '-o', options, 'flywheel-disk', dir]);
  const disk = { dir, upper: join(dir, 'upper'), work: join(dir, 'work'), tmp: join(dir, 'tmp') };
  for (const d of [disk.upper, disk.work, disk.tmp]) {
    await mkdir(d);
    await chown(d, owner.uid, owner.gid);
  }
  return disk;
}

/** Raises the cap by what is on the disk now (a copied workspace), so `bytes` remain for the attempt to write. */
export async function reserveUsed(disk: AttemptDisk, bytes: number): Promise<void> {
  const s = await statfs(disk.dir);
  const used = (s.blocks - s.bfree) * s.bsize;
  const usedInodes = s.files - s.ffree;
  await run('mount', ['-o', `remount,size=${used + bytes},nr_inodes=${usedInodes + inodesFor(bytes)}`, disk.dir]);
}

/** Whether the disk is (all but) full: no room for another block of writes, or no inode left. */
export async function diskFull(disk: AttemptDisk): Promise<boolean> {
  const s = await statfs(disk.dir).catch(() => undefined);
  if (!s) return false;
  return s.bavail * s.bsize < FULL_BELOW_BYTES || s.ffree === 0;
}
