/**
 * What a sandbox of a given environment can read besides its workspace's tracked files, as host folders worth
 * searching for deleted code: the environment's layers whole (the virtualenv, the `node_modules` bound at the
 * workspace), the package folders inside the toolchain prefixes it binds (a global `node_modules`, an interpreter's
 * `site-packages`), and the machine's own package folders under /usr, which every sandbox's base system shows
 * (Debian's `dist-packages` for the system python, a global npm's `node_modules`). Folders a mask covers inside the
 * sandbox are not reachable there: they are left out and named, so the record says what was masked.
 */
import { lstat, readdir, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { SandboxEnvironment } from '../../harness/sandbox/sandbox.ts';

/** Where the harness binds environment layers inside the sandbox (`/opt/flywheel/env/python`, `…/node`). */
const LAYER_TARGET_PREFIX = '/opt/flywheel/env/';
/** Folders that hold installed packages. */
const PACKAGE_FOLDER = /^(?:site-packages|dist-packages|node_modules)$/;
/** The machine's package folders every sandbox sees through its base system (/usr). */
const HOST_LIBRARY_DIRS = ['/usr/lib', '/usr/local/lib'];
const HOST_SHARED_PACKAGE_DIRS = ['/usr/share/nodejs', '/usr/share/javascript', '/usr/lib/nodejs'];

export interface ReachableRoot {
  /** The host folder (real path) indexed. */
  source: string;
  /** How the sandbox names it (`/opt/flywheel/env/python`, `<workspace>/node_modules`, `/usr/lib/node_modules`). */
  inside: string;
  kind: 'layer' | 'toolchain' | 'machine';
}

export interface ReachableRoots {
  roots: ReachableRoot[];
  /** Package folders that exist on the machine but are covered inside the sandbox. */
  masked: string[];
}

const isDir = (path: string) => lstat(path).then((s) => s.isDirectory(), () => false);

function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'));
}

/** Package folders under `dir` (not entered once found), `depth` folder levels down, symlinks not followed. */
async function packageFolders(dir: string, depth: number, skip: (path: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory() || e.name === '.git') continue;
    const path = join(dir, e.name);
    if (skip(path)) continue;
    if (PACKAGE_FOLDER.test(e.name)) out.push(path);
    else if (depth > 1) out.push(...(await packageFolders(path, depth - 1, skip)));
  }
  return out;
}

/**
 * @example
 * const { roots, masked } = await reachableRoots(environment, { exposedPaths: ['/root/.pyenv/versions/3.11.7'], masks: [] });
 * // roots: [{ source: '/tmp/flywheel-envs/node-…/layer', inside: '/opt/flywheel/env/node', kind: 'layer' }, …]
 */
export async function reachableRoots(environment: SandboxEnvironment, extra: { exposedPaths?: readonly string[]; masks?: readonly string[] } = {}): Promise<ReachableRoots> {
  const masks = [...new Set([...(environment.masks ?? []), ...(extra.masks ?? [])])];
  const isMasked = (inside: string) => masks.some((m) => within(m, inside));
  const masked = new Set<string>();
  const candidates: ReachableRoot[] = [];
  const real = (p: string) => realpath(p).catch(() => undefined);

  for (const bind of environment.binds) {
    const source = await real(bind.source);
    if (!source || !(await isDir(source))) continue;
    if (bind.target.startsWith(LAYER_TARGET_PREFIX)) {
      candidates.push({ source, inside: bind.target, kind: 'layer' });
      continue;
    }
    // A toolchain prefix: its package folders, where not masked (the interpreter's own site-packages usually is).
    for (const folder of await packageFolders(source, 5, () => false)) {
      const inside = join(bind.target, relative(source, folder));
      if (isMasked(inside)) masked.add(inside);
      else candidates.push({ source: folder, inside, kind: 'toolchain' });
    }
  }
  for (const bind of environment.workspaceBinds ?? []) {
    const source = await real(bind.source);
    if (source && (await isDir(source))) candidates.push({ source, inside: `<workspace>/${bind.path}`, kind: 'layer' });
  }
  for (const prefix of extra.exposedPaths ?? []) {
    const source = await real(prefix);
    if (!source || environment.binds.some((b) => b.target === prefix)) continue;
    for (const folder of await packageFolders(source, 5, () => false)) {
      const inside = join(prefix, relative(source, folder));
      if (isMasked(inside)) masked.add(inside);
      else candidates.push({ source: folder, inside, kind: 'toolchain' });
    }
  }
  const hostFolders: string[] = [];
  for (const lib of HOST_LIBRARY_DIRS) {
    for (const e of await readdir(lib, { withFileTypes: true }).catch(() => [])) {
      if (!e.isDirectory()) continue;
      if (e.name === 'node_modules') hostFolders.push(join(lib, e.name));
      else if (/^python\d[\d.]*$/.test(e.name)) for (const sub of ['site-packages', 'dist-packages']) hostFolders.push(join(lib, e.name, sub));
    }
  }
  hostFolders.push(...HOST_SHARED_PACKAGE_DIRS);
  for (const folder of hostFolders) {
    if (!(await isDir(folder))) continue;
    if (isMasked(folder)) masked.add(folder);
    else candidates.push({ source: (await real(folder)) ?? folder, inside: folder, kind: 'machine' });
  }

  // One root per folder: a folder inside another root is searched with it (the node layer holds its node_modules),
  // but keeps the name the sandbox knows it by, for the most specific mapping.
  const roots: ReachableRoot[] = [];
  for (const c of candidates) {
    if (candidates.some((o) => o !== c && o.source !== c.source && within(o.source, c.source))) continue;
    if (!roots.some((r) => r.source === c.source)) roots.push(c);
  }
  return { roots, masked: [...masked].sort() };
}

/**
 * The name the sandbox knows a host file by: the most specific folder mapping that holds it.
 *
 * @example
 * insidePath('/envs/node-1/layer/node_modules/kit/dist/index.mjs', mappings) // '<workspace>/node_modules/kit/dist/index.mjs'
 */
export function insidePath(file: string, mappings: ReadonlyArray<{ source: string; inside: string }>): string {
  let best: { source: string; inside: string } | undefined;
  for (const m of mappings) if (within(m.source, file) && (!best || m.source.length > best.source.length)) best = m;
  return best ? join(best.inside, relative(best.source, file)) : file;
}

/** Every folder → name mapping the environment shows (workspace binds before layer binds), for `insidePath`. */
export async function insideMappings(environment: SandboxEnvironment, roots: readonly ReachableRoot[]): Promise<Array<{ source: string; inside: string }>> {
  const out: Array<{ source: string; inside: string }> = [];
  for (const b of environment.workspaceBinds ?? []) {
    const source = await realpath(b.source).catch(() => undefined);
    if (source) out.push({ source, inside: `<workspace>/${b.path}` });
  }
  for (const r of roots) if (!out.some((o) => o.source === r.source)) out.push({ source: r.source, inside: r.inside });
  return out;
}
