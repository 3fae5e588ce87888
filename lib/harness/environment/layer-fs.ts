/**
 * Reading and removing files of a freshly built layer, as the (root) harness, without ever following a symlink: the
 * build ran attacker-controlled code (a source package's setup.py, a lockfile's `link` entries) with write access to
 * the layer, so any folder in it may be a link to `/` (`site-packages/zz -> /` with a RECORD listing
 * `zz/etc/passwd`). Every path is walked from the layer's root one component at a time with `lstat`: a symlink (or a
 * path whose real location leaves the layer) where a folder is expected refuses the layer (`EnvironmentBuildError`);
 * a symlink as the last component is only ever unlinked, never read or entered. Folders are removed by a walk of our
 * own that lstats every entry before entering it. No process of the build is left when this runs (the build sandbox
 * is closed first), so nothing changes the tree between a look and the use.
 *
 * `sealLayer` then makes the layer root's, read-only for everyone, before it is published: a later sandbox (whose
 * user is the one that built it) can change nothing of a shared cached layer.
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, open, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { EnvironmentBuildError } from './environment-errors.ts';
import { MAX_MANIFEST_BYTES } from './read-tree.ts';

const execFileAsync = promisify(execFile);


/** A layer opened for safe reads and removals. */
export class LayerFs {
  /** The layer's real path (symlinks in the host path above it resolved once). */
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  static async open(layer: string): Promise<LayerFs> {
    const root = await realpath(layer);
    const st = await lstat(root);
    if (!st.isDirectory()) throw new EnvironmentBuildError(`the layer ${layer} is not a folder`);
    return new LayerFs(root);
  }

  /**
   * `rel` (relative to the layer root) as components, or undefined when it names the root itself or a place outside
   * (`../x`, an absolute path): such paths are not the layer's and are left alone.
   */
  parts(rel: string): string[] | undefined {
    if (rel === '' || isAbsolute(rel) || rel.includes('\0')) return undefined;
    const norm = normalize(rel);
    if (norm === '.' || norm === '..' || norm.startsWith(`..${sep}`)) return undefined;
    const parts = norm.split(sep).filter((p) => p !== '' && p !== '.');
    return parts.length > 0 ? parts : undefined;
  }

  /** The layer-relative form of an absolute path under the root (undefined when it is not under it). */
  relative(path: string): string | undefined {
    const rel = relative(this.root, path);
    return this.parts(rel) ? rel : undefined;
  }

  /**
   * Checks the folders leading to `parts` (all but the last): each must be a real folder of the layer. `false` when
   * one is absent or not a folder (then nothing is there to read or remove); throws when one is a symlink or the
   * walk's real path leaves the layer.
   */
  private async parentsReal(parts: string[]): Promise<boolean> {
    let dir = this.root;
    for (const part of parts.slice(0, -1)) {
      dir = join(dir, part);
      const st = await lstat(dir).catch(() => undefined);
      if (!st) return false;
      if (st.isSymbolicLink()) throw new EnvironmentBuildError(`the built layer holds a symlink where a folder is expected: ${relative(this.root, dir)} (refused: a build must not point the layer's paths elsewhere)`);
      if (!st.isDirectory()) return false;
    }
    if (dir !== this.root) {
      const real = await realpath(dir).catch(() => undefined);
      if (real !== dir) throw new EnvironmentBuildError(`the built layer's folder ${relative(this.root, dir)} resolves outside it (${real ?? 'unresolvable'})`);
    }
    return true;
  }

  /** lstat of `rel` after its parents were checked; undefined when absent (or outside the layer). */
  async lstat(rel: string): Promise<import('node:fs').Stats | undefined> {
    const parts = this.parts(rel);
    if (!parts || !(await this.parentsReal(parts))) return undefined;
    return lstat(join(this.root, ...parts)).catch(() => undefined);
  }

  /**
   * Whether `rel` is a real folder of the layer. With `refuseLink`, a symlink there refuses the layer (a folder the
   * harness must read); without, a symlink is simply not a folder.
   */
  async isDir(rel: string, options: { refuseLink?: boolean } = {}): Promise<boolean> {
    const st = await this.lstat(rel);
    if (st?.isSymbolicLink() && options.refuseLink) throw new EnvironmentBuildError(`the built layer holds a symlink where a folder is expected: ${rel} (refused: a build must not point the layer's paths elsewhere)`);
    return st?.isDirectory() ?? false;
  }

  /** Names in the real folder `rel` ('' for the root); empty when it is absent; throws when it is a symlink. */
  async readdir(rel: string): Promise<string[]> {
    if (rel !== '' && !(await this.isDir(rel, { refuseLink: true }))) return [];
    return (await readdir(rel === '' ? this.root : join(this.root, ...this.parts(rel)!)).catch(() => [] as string[])).sort();
  }

  /** The text of the regular file `rel`; '' when absent, not a regular file (a symlink is never read) or too big. */
  async readText(rel: string): Promise<string> {
    const parts = this.parts(rel);
    if (!parts || !(await this.parentsReal(parts))) return '';
    const path = join(this.root, ...parts);
    const st = await lstat(path).catch(() => undefined);
    // Metadata bigger than a manifest may be is read as empty (a RECORD of a large distribution is a few MB).
    if (!st?.isFile() || st.size > MAX_MANIFEST_BYTES) return '';
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
    if (!handle) return '';
    try {
      const fst = await handle.stat();
      if (!fst.isFile() || fst.ino !== st.ino || fst.dev !== st.dev) return '';
      return await handle.readFile('utf8');
    } catch {
      return '';
    } finally {
      await handle.close();
    }
  }

  /**
   * Removes `rel`: a file or a symlink is unlinked (the link itself, its target untouched), a real folder removed with
   * everything in it, each entry lstat'd before it is entered. Absent or outside the layer: nothing. A symlink among
   * its parents refuses the layer.
   */
  async remove(rel: string): Promise<void> {
    const parts = this.parts(rel);
    if (!parts || !(await this.parentsReal(parts))) return;
    await removeEntry(join(this.root, ...parts));
  }
}

async function removeEntry(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return;
  if (!st.isDirectory()) {
    await unlink(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return;
  }
  // A real folder (lstat): its entries are joined to a path whose every component was lstat'd as a folder.
  for (const name of await readdir(path)) await removeEntry(join(path, name));
  await rmdir(path);
}

/**
 * Makes a built layer root's and read-only (no write bit anywhere, no set-id bits) so that the sandbox user, which
 * owned it during the build, can change nothing of it once it is cached and shared. `chown -h` and `chmod` with `-R`
 * never follow a symlink met in the walk (`chmod` skips links; the layer folder itself is the harness's own).
 * Only as root (a non-root harness builds nothing in the namespace sandbox, and owns what it made).
 */
export async function sealLayer(layer: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const root = await realpath(layer);
  if (!(await lstat(root)).isDirectory()) throw new EnvironmentBuildError(`the layer ${layer} is not a folder`);
  try {
    await execFileAsync('chown', ['-R', '-h', '--', '0:0', root]);
    await execFileAsync('chmod', ['-R', '--', 'ug-s,a+rX,a-w', root]);
  } catch (error) {
    throw new EnvironmentBuildError(`could not make the layer ${layer} read-only: ${(error as Error).message}`, {}, { cause: error });
  }
}
