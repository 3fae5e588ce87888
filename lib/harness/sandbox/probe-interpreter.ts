/**
 * Asking the host's interpreters where they live: one PATH lookup and one Python probe, shared by the sandbox's
 * interpreter exposure (`expose-interpreters.ts`) and the task environment's toolchains
 * (`lib/harness/environment/toolchains.ts`). A pyenv shim is a shell script that needs pyenv itself, so the
 * interpreter is asked (`sys.prefix`, `sys.base_prefix`, `sys.executable`, its package folders) instead of following
 * the shim.
 */
import { execFile } from 'node:child_process';
import { access, constants, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The first executable file named `name` on `pathEnv`, as `which` finds it. */
export async function which(name: string, pathEnv: string): Promise<string | undefined> {
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

export interface PythonProbe {
  executable: string;
  prefix: string;
  basePrefix: string;
  /** `3.11.7` */
  version: string;
  /** `sys.version` in full. */
  full: string;
  /** Its package folders: `site-packages`, `dist-packages`, the user site (whether or not they exist). */
  packageDirs: string[];
  /** The pytest version it has, if any. */
  pytest?: string;
}

const PYTHON_PROBE = `
import json, site, sys, sysconfig
dirs = set()
for p in list(getattr(site, 'getsitepackages', lambda: [])()) + [site.getusersitepackages(), sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']]:
    if p: dirs.add(p)
for p in sys.path:
    if p.endswith('site-packages') or p.endswith('dist-packages'): dirs.add(p)
try:
    from importlib.metadata import version
    pytest = version('pytest')
except Exception:
    pytest = None
print(json.dumps({'executable': sys.executable, 'base_prefix': sys.base_prefix, 'prefix': sys.prefix,
  'version': '%d.%d.%d' % sys.version_info[:3], 'full': sys.version, 'dirs': sorted(dirs), 'pytest': pytest}))
`;

/** Runs `interpreter -I` on the probe; undefined when it is not a usable Python. */
export async function probePython(interpreter: string, env: NodeJS.ProcessEnv = process.env): Promise<PythonProbe | undefined> {
  try {
    const { stdout } = await run(interpreter, ['-I', '-c', PYTHON_PROBE], { timeout: 20_000, env });
    const p = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      executable?: string; base_prefix?: string; prefix?: string; version?: string; full?: string; dirs?: string[]; pytest?: string | null;
    };
    if (!p.executable || !p.base_prefix || !p.prefix || !p.version) return undefined;
    return {
      executable: p.executable,
      prefix: p.prefix,
      basePrefix: p.base_prefix,
      version: p.version,
      full: p.full ?? p.version,
      packageDirs: p.dirs ?? [],
      ...(p.pytest ? { pytest: p.pytest } : {}),
    };
  } catch {
    return undefined;
  }
}
