/**
 * The host interpreters a sandbox shows as part of its environment, without the packages the host installed for
 * them. A sandbox sees only its base system (/usr) and what its environment binds, but a task's `python3` or `node`
 * often lives elsewhere (pyenv in /root/.pyenv, nvm in /root/.nvm, a checkout's node_modules/node): this finds the
 * installation prefix of each, as the host resolves it, so the sandbox can bind exactly that prefix read-only at the
 * same path and put its `bin` first on PATH, with the interpreter's own package folders (`site-packages`, Debian's
 * `dist-packages`, the user site) covered by an empty folder: only the task environment's packages are importable.
 *
 * A pyenv shim is a shell script that needs pyenv itself, so the interpreter is asked where it lives
 * (`sys.prefix`, `sys.base_prefix`, `sys.executable`, its package folders) instead of following the shim.
 */
import { execFile } from 'node:child_process';
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import { probePython, which } from './probe-interpreter.ts';

const run = promisify(execFile);

export interface Exposure {
  /** Host directories bound read-only inside the sandbox at the same path. */
  paths: string[];
  /** Package folders (inside those prefixes or the base system) covered by an empty read-only folder. */
  masks: string[];
  /** Directories to put first on the sandbox's PATH. */
  binDirs: string[];
}

/** What the sandbox exposes by default: the interpreters test commands most often need. */
export const DEFAULT_INTERPRETERS = ['python3', 'python', 'node'] as const;

/** Where the sandbox's base system already shows the host's files (an interpreter there needs no bind). */
export const BASE_SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib64'] as const;

function under(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(r.endsWith('/') ? r : `${r}/`));
}

async function pythonLocation(interpreter: string): Promise<{ prefixes: string[]; bin: string; packageDirs: string[] } | undefined> {
  const probe = await probePython(interpreter);
  if (!probe) return undefined;
  return { prefixes: [probe.prefix, probe.basePrefix], bin: dirname(probe.executable), packageDirs: probe.packageDirs };
}

/**
 * The prefixes to bind for `names` (commands looked up on `pathEnv`), the package folders to cover and the bin
 * folders to put first on PATH. An interpreter inside the base system needs no bind, only its package folders covered.
 *
 * @example
 * await detectInterpreterExposure(['python3', 'node']);
 * // { paths: ['/root/.pyenv/versions/3.11.7'], masks: ['/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages', …],
 * //   binDirs: ['/root/.pyenv/versions/3.11.7/bin'] }
 */
export async function detectInterpreterExposure(
  names: readonly string[],
  options: { baseRoots?: readonly string[]; pathEnv?: string } = {},
): Promise<Exposure> {
  const baseRoots = options.baseRoots ?? BASE_SYSTEM_ROOTS;
  const pathEnv = options.pathEnv ?? process.env.PATH ?? '';
  const paths: string[] = [];
  const masks: string[] = [];
  const binDirs: string[] = [];
  const add = (prefixes: string[], bin: string, packageDirs: string[] = []) => {
    for (const p of prefixes) if (!under(p, baseRoots) && !paths.includes(p)) paths.push(p);
    if (!under(bin, baseRoots) && !binDirs.includes(bin)) binDirs.push(bin);
    for (const d of packageDirs) if (!masks.includes(d)) masks.push(d);
  };
  for (const name of names) {
    const found = await which(name, pathEnv);
    if (!found) continue;
    const real = await realpath(found).catch(() => found);
    if (/^python[0-9.]*$/.test(name)) {
      const loc = await pythonLocation(found);
      if (loc) add(loc.prefixes, loc.bin, loc.packageDirs);
      continue;
    }
    if (name === 'node') {
      try {
        const { stdout } = await run(found, ['-p', 'process.execPath'], { timeout: 15_000 });
        const exec = await realpath(stdout.trim());
        add([dirname(dirname(exec))], dirname(exec));
      } catch {
        // an unusable node is left out
      }
      continue;
    }
    // A console script (pytest, …): its shebang names the interpreter whose prefix holds it. A pyenv shim's shebang
    // is bash; then the python of the same PATH covers it.
    const head = (await readFile(real, { encoding: 'utf8' }).catch(() => '')).split('\n', 1)[0] ?? '';
    const interpreter = head.startsWith('#!') ? head.slice(2).trim().split(/\s+/)[0] : undefined;
    if (interpreter && /^python[0-9.]*$/.test(basename(interpreter))) {
      const loc = await pythonLocation(interpreter);
      if (loc) add(loc.prefixes, loc.bin, loc.packageDirs);
    } else if (!under(dirname(real), baseRoots) && !/\/shims$/.test(dirname(real))) {
      add([dirname(dirname(real))], dirname(real));
    }
  }
  // A prefix inside another exposed prefix is exposed with it.
  const outer = paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(`${q}/`)));
  // Only folders that exist and that the sandbox shows can be covered.
  const shown = [...outer, ...baseRoots];
  const existing: string[] = [];
  for (const m of masks) if (under(m, shown) && (await stat(m).then((s) => s.isDirectory(), () => false))) existing.push(m);
  return { paths: outer, masks: existing, binDirs };
}
