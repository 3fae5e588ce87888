/**
 * The rollout image's checkpoint fetch over real files: a folder checkpoint (key with or without the trailing `/`,
 * nested files), a tarball unpacked, a tarball that would write outside refused before any
 * file is written, a plain file, and a missing artifact named in the error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchCheckpoint } from '../../batch-images/rollout/fetch-checkpoint.ts';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fresh(): { blobs: FsBlobs; work: string } {
  const work = mkdtempSync(join(tmpdir(), 'flywheel-fetch-'));
  dirs.push(work);
  return { blobs: new FsBlobs(join(work, 'blobs')), work };
}
const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();

describe('fetchCheckpoint', () => {
  it.each(['checkpoints/ckpt-7/', 'checkpoints/ckpt-7'])('fetches a folder checkpoint named %s, every object at its relative path', async (artifactKey) => {
    const { blobs, work } = fresh();
    await blobs.put('checkpoints/ckpt-7/config.json', '{"model_type":"qwen2"}');
    await blobs.put('checkpoints/ckpt-7/model-00001-of-00002.safetensors', 'weights-1');
    await blobs.put('checkpoints/ckpt-7/model-00002-of-00002.safetensors', 'weights-2');
    await blobs.put('checkpoints/ckpt-7/tokenizer/tokenizer.json', '{}');
    await blobs.put('checkpoints/ckpt-70/config.json', 'another checkpoint');
    const dir = await fetchCheckpoint(blobs, artifactKey, join(work, 'checkpoint'));
    expect(files(dir)).toEqual(['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'tokenizer/tokenizer.json']);
    expect(readFileSync(join(dir, 'model-00002-of-00002.safetensors'), 'utf8')).toBe('weights-2');
  });

  it('unpacks a gzip tarball, and refuses one with a member outside the folder before writing anything', async () => {
    const { blobs, work } = fresh();
    const src = join(work, 'src');
    mkdirSync(join(src, 'ckpt'), { recursive: true });
    writeFileSync(join(src, 'ckpt', 'config.json'), '{}');
    execFileSync('tar', ['-czf', join(work, 'good.tar.gz'), '-C', src, 'ckpt']);
    await blobs.put('checkpoints/good.tar.gz', readFileSync(join(work, 'good.tar.gz')));
    expect(files(await fetchCheckpoint(blobs, 'checkpoints/good.tar.gz', join(work, 'out')))).toEqual(['ckpt/config.json']);

    symlinkSync('../../../etc', join(src, 'up'));
    execFileSync('tar', ['-cf', join(work, 'bad.tar'), '-C', src, 'ckpt', 'up']);
    await blobs.put('checkpoints/bad.tar', readFileSync(join(work, 'bad.tar')));
    await expect(fetchCheckpoint(blobs, 'checkpoints/bad.tar', join(work, 'bad'))).rejects.toMatchObject({
      name: 'Flywheel.ValidationError',
      message: expect.stringMatching(/checkpoints\/bad\.tar: tarball member "up" links outside the extraction folder/),
    });
    expect(files(join(work, 'bad'))).toEqual([]);
  });

  it('writes any other blob as one file, and names a missing artifact', async () => {
    const { blobs, work } = fresh();
    await blobs.put('checkpoints/adapter.safetensors', 'lora');
    const dir = await fetchCheckpoint(blobs, 'checkpoints/adapter.safetensors', join(work, 'one'));
    expect(files(dir)).toEqual(['adapter.safetensors']);
    await expect(fetchCheckpoint(blobs, 'checkpoints/nope/', join(work, 'none'))).rejects.toMatchObject({
      name: 'Flywheel.ValidationError',
      message: 'checkpoint artifact checkpoints/nope/: no object at this key or under it in the blob store',
    });
    expect(existsSync(join(work, 'none'))).toBe(true);
  });
});
