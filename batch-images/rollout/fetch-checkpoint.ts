/**
 * Puts the checkpoint under test where vLLM reads it: the blob `artifactKey` — a tarball (plain or gzip) is
 * unpacked, anything else is written as one file named after the key — into `dir`, which becomes
 * FLYWHEEL_CHECKPOINT_DIR for the vLLM command. The blob is read whole into memory (the blobs port has no
 * streaming read), which suits the small checkpoints of tests and the local runtime; for real weights, mount or
 * sync them before the job starts and set FLYWHEEL_CHECKPOINT_DIR, which skips this.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { ValidationError } from '../../lib/errors.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';

const run = promisify(execFile);

function isTarball(bytes: Uint8Array): boolean {
  const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const ustar = new TextDecoder().decode(bytes.subarray(257, 262)) === 'ustar';
  return gzip || ustar;
}

export async function fetchCheckpoint(blobs: BlobsPort, artifactKey: string, dir: string): Promise<string> {
  const bytes = await blobs.get(artifactKey);
  if (!bytes) throw new ValidationError(`checkpoint artifact ${artifactKey} is not in the blob store`, [{ path: 'artifactKey', message: 'missing blob' }]);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  if (!isTarball(bytes)) {
    await writeFile(join(dir, basename(artifactKey)), bytes);
    return dir;
  }
  const file = `${dir}.tar`;
  await writeFile(file, bytes);
  try {
    await run('tar', ['-xf', file, '-C', dir]);
  } finally {
    await rm(file, { force: true });
  }
  return dir;
}
