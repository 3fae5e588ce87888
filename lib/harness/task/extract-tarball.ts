/**
 * Unpacking a tarball that came from somewhere else (a task's repository blob, a checkpoint's artifact) without
 * letting it write outside the folder it is unpacked into: every member name and link target is read first with the
 * system `tar` (`-tf` and `-tvf`), and a member that is absolute, climbs out with `..`, links out, or is a device or
 * fifo refuses the whole tarball before anything is written. Then `tar -x` without owners or permissions from the
 * archive. The system `tar` reads plain, gzip, xz, bzip2 and zstd tarballs alike.
 *
 * @example
 * const problem = await tarballProblem('/tmp/upload.tar'); // UnsafeTarballError('unsafe', 'tarball member "../x" …') or undefined
 * await extractTarball('/tmp/upload.tar', '/tmp/out');      // throws Flywheel.UnsafeTarball for the same tarball
 */
import { execFile } from 'node:child_process';
import { isAbsolute, posix } from 'node:path';
import { promisify } from 'node:util';
import { FlywheelError } from '../../errors.ts';

const run = promisify(execFile);

/** The names of the task loader's errors, as a log query (or a state machine) spells them. */
export const TaskErrorNames = {
  unsafeTarball: 'Flywheel.UnsafeTarball',
} as const;

/** A tarball that is not one, or would write outside its folder: no retry fixes it. */
export class UnsafeTarballError extends FlywheelError {
  /** `unreadable`: not a tarball tar can read; `unsafe`: a member would land outside; `extract`: tar -x failed. */
  readonly reason: 'unreadable' | 'unsafe' | 'extract';
  constructor(reason: UnsafeTarballError['reason'], message: string) {
    super(TaskErrorNames.unsafeTarball, message);
    this.reason = reason;
  }
}

/** What makes the tarball unsafe to unpack (the first member found), or undefined when every member stays inside. */
export async function tarballProblem(file: string): Promise<UnsafeTarballError | undefined> {
  let names: string[];
  let verbose: string[];
  try {
    names = (await run('tar', ['-tf', file], { maxBuffer: 256 << 20 })).stdout.split('\n').filter(Boolean);
    verbose = (await run('tar', ['-tvf', file], { maxBuffer: 256 << 20 })).stdout.split('\n').filter(Boolean);
  } catch (error) {
    return new UnsafeTarballError('unreadable', `not a tarball tar can read: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`);
  }
  const escapes = (p: string) => isAbsolute(p) || p.split('/').includes('..');
  for (const [i, name] of names.entries()) {
    if (escapes(name)) return new UnsafeTarballError('unsafe', `tarball member "${name}" would be written outside the extraction folder`);
    const line = verbose[i] ?? '';
    const type = line[0];
    if (type === 'l' || type === 'h') {
      const marker = type === 'l' ? `${name} -> ` : `${name} link to `;
      const at = line.indexOf(marker);
      const target = at < 0 ? '' : line.slice(at + marker.length);
      // A symlink target is relative to the link's folder; a hard link's names another member.
      const landed = type === 'l' ? posix.normalize(posix.join(posix.dirname(name), target)) : posix.normalize(target);
      if (!target || isAbsolute(target) || landed === '..' || landed.startsWith('../')) {
        return new UnsafeTarballError('unsafe', `tarball member "${name}" links outside the extraction folder (${target || 'unreadable target'})`);
      }
    } else if (type !== '-' && type !== 'd') {
      return new UnsafeTarballError('unsafe', `tarball member "${name}" is a device, fifo or other special file`);
    }
  }
  return undefined;
}

/** Checks the tarball (`tarballProblem`), then unpacks it into `dir` (which must exist). Throws `Flywheel.UnsafeTarball`. */
export async function extractTarball(file: string, dir: string): Promise<void> {
  const problem = await tarballProblem(file);
  if (problem) throw problem;
  await run('tar', ['-xf', file, '-C', dir, '--no-same-owner', '--no-same-permissions', '--no-overwrite-dir'], { maxBuffer: 64 << 20 }).catch(
    (error: { stderr?: string; message: string }) => {
      throw new UnsafeTarballError('extract', `extracting failed: ${error.stderr?.trim() || error.message}`);
    },
  );
}
