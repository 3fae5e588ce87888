/**
 * The host interpreters a task's environment runs on, found as the host resolves them: `python3` on PATH (a pyenv
 * shim is a shell script that needs pyenv itself, so the interpreter is asked for its own prefix and executable) and
 * Node as this process runs it (`process.execPath`). Each prefix is bound read-only at its own path inside the
 * sandbox, with the interpreter's own package folders (`site-packages`, Debian's `dist-packages`, the user site)
 * covered, so nothing the host installed is importable: only the task's environment layer is.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { probePython, which } from '../sandbox/probe-interpreter.ts';

export interface PythonToolchain {
  kind: 'python';
  /** The real interpreter (`/root/.pyenv/versions/3.11.7/bin/python3.11`), never a shim. */
  executable: string;
  /** `sys.base_prefix`: bound read-only at the same path. */
  prefix: string;
  binDir: string;
  /** `3.11.7` */
  version: string;
  /** `sys.version` in full (build, compiler): part of the environment key. */
  fullVersion: string;
  /** The interpreter's package folders, covered inside the sandbox. */
  packageDirs: string[];
  /** The version of pytest the host interpreter has, when it has one (pinned in the environment). */
  pytestVersion?: string;
}

export interface NodeToolchain {
  kind: 'node';
  executable: string;
  prefix: string;
  binDir: string;
  version: string;
  /** npm's package folder (holding `bin/npm-cli.js`), run with this node; bound read-only when outside the prefix. */
  npmDir?: string;
  npmVersion?: string;
}

export interface Toolchains {
  python?: PythonToolchain;
  node?: NodeToolchain;
}

/** The python3 the host's PATH resolves, asked about itself; undefined when there is none. */
export async function detectPython(pathEnv = process.env.PATH ?? '', command = 'python3'): Promise<PythonToolchain | undefined> {
  const found = await which(command, pathEnv);
  if (!found) return undefined;
  const probe = await probePython(found, { ...process.env, PATH: pathEnv });
  if (!probe) return undefined;
  // A venv on PATH: its base interpreter is the toolchain (the venv's packages are the host's, so they stay out).
  const prefix = probe.basePrefix;
  const executable = await realpath(probe.executable).catch(() => probe.executable);
  const baseExecutable = probe.prefix !== probe.basePrefix ? join(prefix, 'bin', `python${probe.version.split('.').slice(0, 2).join('.')}`) : executable;
  // The package folders of the base installation and of the interpreter the probe ran in.
  const candidates = [...new Set(probe.packageDirs.map((d) => (d.startsWith(`${probe.prefix}/`) ? d.replace(probe.prefix, prefix) : d)).concat(probe.packageDirs))].sort();
  // Only folders that exist can be covered.
  const packageDirs: string[] = [];
  for (const d of candidates) if (await stat(d).then((s) => s.isDirectory(), () => false)) packageDirs.push(d);
  return {
    kind: 'python',
    executable: baseExecutable,
    prefix,
    binDir: dirname(baseExecutable),
    version: probe.version,
    fullVersion: probe.full,
    packageDirs,
    ...(probe.pytest ? { pytestVersion: probe.pytest } : {}),
  };
}

/** The Node this process runs on, and the npm the host's PATH resolves (run with that node). */
export async function detectNode(execPath = process.execPath, pathEnv = process.env.PATH ?? ''): Promise<NodeToolchain> {
  const executable = await realpath(execPath).catch(() => execPath);
  const binDir = dirname(executable);
  const prefix = dirname(binDir);
  let npmDir: string | undefined;
  let npmVersion: string | undefined;
  const candidates = [join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js')];
  const onPath = await which('npm', pathEnv);
  if (onPath) candidates.push(await realpath(onPath).catch(() => onPath));
  for (const candidate of candidates) {
    // npm's launcher resolves to <npm>/bin/npm-cli.js (a symlink on Debian and in Node's own tarball).
    const dir = dirname(dirname(candidate));
    try {
      const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'npm' && (await stat(join(dir, 'bin', 'npm-cli.js')).then((s) => s.isFile()))) {
        npmDir = dir;
        npmVersion = pkg.version;
        break;
      }
    } catch {
      // not npm's folder
    }
  }
  return { kind: 'node', executable, prefix, binDir, version: process.version.replace(/^v/, ''), ...(npmDir ? { npmDir } : {}), ...(npmVersion ? { npmVersion } : {}) };
}

/** System prefixes the sandbox's base system already shows: not bound again (only their package folders covered). */
const SYSTEM_PREFIXES = new Set(['/', '/usr', '/usr/local', '/bin']);

/**
 * The binds, masks and PATH entries that show these toolchains inside a sandbox.
 *
 * @example
 * toolchainExposure({ python }) // { binds: [{ source: '/root/.pyenv/versions/3.11.7', target: same }], masks: ['…/site-packages'], pathDirs: ['…/bin'] }
 */
export function toolchainExposure(toolchains: Toolchains): { binds: Array<{ source: string; target: string }>; masks: string[]; pathDirs: string[] } {
  const binds: Array<{ source: string; target: string }> = [];
  const masks: string[] = [];
  const pathDirs: string[] = [];
  for (const t of [toolchains.python, toolchains.node]) {
    if (!t) continue;
    if (!SYSTEM_PREFIXES.has(t.prefix) && !binds.some((b) => b.source === t.prefix)) binds.push({ source: t.prefix, target: t.prefix });
    if (!pathDirs.includes(t.binDir)) pathDirs.push(t.binDir);
  }
  const npmDir = toolchains.node?.npmDir;
  const covered = (dir: string) => SYSTEM_PREFIXES.has(dir) || binds.some((b) => dir === b.source || dir.startsWith(`${b.source}/`));
  if (npmDir && !covered(npmDir)) binds.push({ source: npmDir, target: npmDir });
  for (const dir of toolchains.python?.packageDirs ?? []) if (!masks.includes(dir)) masks.push(dir);
  return { binds, masks, pathDirs };
}
