/**
 * The sandbox covers /root (and other private paths) with an empty tmpfs, but a host's Python or Node often lives
 * there (pyenv in /root/.pyenv, nvm in /root/.nvm): a task's `pytest` would vanish inside. This finds the installation
 * prefixes of the interpreters a task needs, as the host resolves them, so the sandbox can bind exactly those prefixes
 * back, read-only, and put their `bin` first on PATH, while the rest of /root stays hidden.
 *
 * A pyenv shim is a shell script that needs pyenv itself, so the interpreter is asked where it lives
 * (`sys.prefix`, `sys.base_prefix`, `sys.executable`) instead of following the shim.
 */
import { execFile } from 'node:child_process';
import { access, constants, readFile, realpath, stat } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Exposure {
  /** Directories to bind read-only inside the sandbox at the same path. */
  paths: string[];
  /** Directories to put first on the sandbox's PATH (after the git shim). */
  binDirs: string[];
}

/** What the sandbox exposes by default: the interpreters test commands most often need. */
export const DEFAULT_INTERPRETERS = ['python3', 'python', 'pytest', 'node'] as const;

function under(path: string, roots: string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(r.endsWith('/') ? r : `${r}/`));
}

async function which(name: string, pathEnv: string): Promise<string | undefined> {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function pythonLocation(interpreter: string): Promise<{ prefixes: string[]; bin: string } | undefined> {
  try {
    const { stdout } = await run(interpreter, ['-c', 'import sys; print(sys.prefix); print(sys.base_prefix); print(sys.executable)'], { timeout: 15_000 });
    const [prefix, base, executable] = stdout.trim().split('\n');
    if (!prefix || !base || !executable) return undefined;
    return { prefixes: [prefix, base], bin: dirname(executable) };
  } catch {
    return undefined;
  }
}

/**
 * The prefixes to expose for `names` (commands looked up on `pathEnv`) that lie under one of `hiddenRoots`.
 * Interpreters outside the hidden roots need nothing (they are visible, read-only, already).
 *
 * @example
 * await detectInterpreterExposure(['python3', 'pytest'], ['/root']);
 * // { paths: ['/root/.pyenv/versions/3.11.7'], binDirs: ['/root/.pyenv/versions/3.11.7/bin'] }
 */
export async function detectInterpreterExposure(names: readonly string[], hiddenRoots: string[], pathEnv = process.env.PATH ?? ''): Promise<Exposure> {
  const paths: string[] = [];
  const binDirs: string[] = [];
  const add = (prefixes: string[], bin: string) => {
    for (const p of prefixes) if (under(p, hiddenRoots) && !paths.includes(p)) paths.push(p);
    if (under(bin, hiddenRoots) && !binDirs.includes(bin)) binDirs.push(bin);
  };
  for (const name of names) {
    const found = await which(name, pathEnv);
    if (!found) continue;
    const real = await realpath(found).catch(() => found);
    if (!under(found, hiddenRoots) && !under(real, hiddenRoots)) continue;
    if (/^python[0-9.]*$/.test(name)) {
      const loc = await pythonLocation(found);
      if (loc) add(loc.prefixes, loc.bin);
      continue;
    }
    if (name === 'node') {
      try {
        const { stdout } = await run(found, ['-p', 'process.execPath'], { timeout: 15_000 });
        const exec = await realpath(stdout.trim());
        add([dirname(dirname(exec))], dirname(exec));
      } catch {
        // an unusable node is left hidden
      }
      continue;
    }
    // A console script (pytest, …): its shebang names the interpreter whose prefix holds it. A pyenv shim's shebang
    // is bash; then the python of the same PATH covers it.
    const head = (await readFile(real, { encoding: 'utf8' }).catch(() => '')).split('\n', 1)[0] ?? '';
    const interpreter = head.startsWith('#!') ? head.slice(2).trim().split(/\s+/)[0] : undefined;
    if (interpreter && /^python[0-9.]*$/.test(basename(interpreter))) {
      const loc = await pythonLocation(interpreter);
      if (loc) add(loc.prefixes, loc.bin);
    } else if (under(dirname(real), hiddenRoots) && !/\/shims$/.test(dirname(real))) {
      add([dirname(dirname(real))], dirname(real));
    }
  }
  // A prefix inside another exposed prefix is exposed with it.
  const outer = paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(`${q}/`)));
  return { paths: outer, binDirs };
}
