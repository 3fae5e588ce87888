/**
 * Puts the checkpoint under test where vLLM reads it (`dir`, which becomes FLYWHEEL_CHECKPOINT_DIR for the vLLM
 * command), from the checkpoint's `artifactKey` in the blobs port:
 * - a folder: a key ending in `/`, or a key with no object of its own but objects under `<key>/` (how a training run
 *   writes a Hugging Face checkpoint: `config.json`, `tokenizer.json`, `model-00001-of-00004.safetensors`, …). Every
 *   object under it is written at its path relative to the folder;
 * - a tarball (plain, gzip, xz, bzip2, zstd): unpacked after every member was checked to stay inside `dir`
 *   (`lib/harness/task/extract-tarball.ts`);
 * - anything else: written as one file named after the key.
 *
 * Objects are read whole into memory (the blobs port has no streaming read), four at a time: that suits the small
 * checkpoints of tests and the local runtime, and a sharded safetensors folder (≤ 5 GB per shard) on a GPU instance;
 * for larger weights, mount or sync them before the job starts and set FLYWHEEL_CHECKPOINT_DIR, which skips this.
 *
 * @example
 * const dir = await fetchCheckpoint(ports.blobs, 'checkpoints/ckpt-7/', '/tmp/fw-rollout/checkpoint');
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { ValidationError } from '../../lib/errors.ts';
import { forEachLimited } from '../../lib/shared/for-each-limited.ts';
import { extractTarball, UnsafeTarballError } from '../../lib/harness/task/extract-tarball.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';

/** Objects of a folder checkpoint fetched at once: four 5 GB shards in memory is the most a g6e.2xlarge (64 GiB) spares. */
const FOLDER_FETCH_CONCURRENCY = 4;

function isTarball(bytes: Uint8Array): boolean {
  const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const xz = bytes[0] === 0xfd && bytes[1] === 0x37 && bytes[2] === 0x7a && bytes[3] === 0x58;
  const bzip2 = bytes[0] === 0x42 && bytes[1] === 0x5a && bytes[2] === 0x68;
  const zstd = bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd;
  const ustar = new TextDecoder().decode(bytes.subarray(257, 262)) === 'ustar';
  return gzip || xz || bzip2 || zstd || ustar;
}

function artifactError(artifactKey: string, message: string): ValidationError {
  return new ValidationError(`checkpoint artifact ${artifactKey}: ${message}`, [{ path: 'artifactKey', message }]);
}

export async function fetchCheckpoint(blobs: BlobsPort, artifactKey: string, dir: string): Promise<string> {
  const bytes = artifactKey.endsWith('/') ? undefined : await blobs.get(artifactKey);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  if (!bytes) {
    const prefix = artifactKey.endsWith('/') ? artifactKey : `${artifactKey}/`;
    const count = await fetchFolder(blobs, prefix, dir);
    if (count === 0) throw artifactError(artifactKey, 'no object at this key or under it in the blob store');
    return dir;
  }
  if (!isTarball(bytes)) {
    await writeFile(join(dir, basename(artifactKey)), bytes);
    return dir;
  }
  const file = `${dir}.tar`;
  await writeFile(file, bytes);
  try {
    await extractTarball(file, dir);
  } catch (error) {
    if (error instanceof UnsafeTarballError) throw artifactError(artifactKey, error.message);
    throw error;
  } finally {
    await rm(file, { force: true });
  }
  return dir;
}

/** Every object under `prefix`, at its relative path under `dir`; answers how many. */
async function fetchFolder(blobs: BlobsPort, prefix: string, dir: string): Promise<number> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await blobs.list(prefix, cursor ? { cursor } : {});
    keys.push(...page.keys);
    cursor = page.cursor;
  } while (cursor);
  const files = keys
    .map((key) => ({ key, relative: key.slice(prefix.length) }))
    // `folder/` markers that S3 consoles create hold no file.
    .filter(({ relative }) => relative !== '' && !relative.endsWith('/'));
  for (const { key, relative } of files) {
    const normal = posix.normalize(relative);
    if (normal.startsWith('../') || normal === '..' || posix.isAbsolute(normal)) throw artifactError(prefix, `object ${key} would be written outside the checkpoint folder`);
  }
  await forEachLimited(files, FOLDER_FETCH_CONCURRENCY, async ({ key, relative }) => {
    const body = await blobs.get(key);
    if (!body) return; // deleted since it was listed: the folder is being rewritten, and vLLM will say what is missing
    const target = join(dir, posix.normalize(relative));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, body);
  });
  return files.length;
}
