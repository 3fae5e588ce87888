/**
 * Reading files of a task's base tree, which is attacker-controlled: a manifest may be a symlink to a host file
 * (`requirements.txt -> /etc/shadow`) or huge. Only regular files inside the tree are read, up to a size cap.
 */
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** Manifests bigger than this are not read (a lockfile of a large monorepo is a few MB). */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

/** The text of `rel` in the tree, or undefined when it is absent, not a regular file, leaves the tree or is too big. */
export async function readTreeFile(treeDir: string, rel: string): Promise<string | undefined> {
  const path = join(treeDir, rel);
  const inside = relative(treeDir, path);
  if (inside.startsWith('..') || inside.startsWith(sep)) return undefined;
  try {
    const st = await lstat(path);
    if (!st.isFile() || st.size > MAX_MANIFEST_BYTES) return undefined;
    // A parent folder may itself be a symlink out of the tree.
    const real = await realpath(path);
    const root = await realpath(treeDir);
    if (real !== root && !real.startsWith(`${root}${sep}`)) return undefined;
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether `rel` is a real directory inside the tree (not a symlink). */
export async function isTreeDir(treeDir: string, rel: string): Promise<boolean> {
  return lstat(join(treeDir, rel)).then((s) => s.isDirectory(), () => false);
}

/** Entries of a tree folder (names), empty when it is absent or a symlink. */
export async function listTreeDir(treeDir: string, rel = '.'): Promise<Array<{ name: string; dir: boolean; file: boolean }>> {
  if (rel !== '.' && !(await isTreeDir(treeDir, rel))) return [];
  const entries = await readdir(join(treeDir, rel), { withFileTypes: true }).catch(() => []);
  return entries.map((e) => ({ name: e.name, dir: e.isDirectory(), file: e.isFile() })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const SKIP_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv', '__pycache__', '.tox', '.nox', 'dist', 'build']);

/** Whether the tree holds a file matching `test` within `depth` folder levels (skipping VCS and build folders). */
export async function treeHasFile(treeDir: string, test: (name: string) => boolean, depth = 3, rel = '.'): Promise<boolean> {
  const entries = await listTreeDir(treeDir, rel);
  if (entries.some((e) => e.file && test(e.name))) return true;
  if (depth <= 0) return false;
  for (const e of entries) {
    if (e.dir && !SKIP_DIRS.has(e.name) && (await treeHasFile(treeDir, test, depth - 1, rel === '.' ? e.name : join(rel, e.name)))) return true;
  }
  return false;
}
