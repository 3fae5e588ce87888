/**
 * Where the environment builder may fetch packages from: pip's index, extra indexes and find-links as the host's pip
 * is configured (`pip config list`, overridden by PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_FIND_LINKS), and npm's
 * registry (`npm config get registry`). Network indexes become the build sandbox's network allow-list (its egress
 * proxy speaks CONNECT, which pip and npm use through HTTPS_PROXY); `file://` indexes and find-links folders are bound
 * read-only into the build sandbox. The task's own files never choose an index.
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PackageSource {
  /** Arguments to `pip install` (`--index-url …`, `--extra-index-url …`, `--find-links …`) or npm (`--registry=…`). */
  args: string[];
  /** Hosts the build may reach (`pypi.org`, `files.pythonhosted.org`, `registry.npmjs.org`, `127.0.0.1:3141`). */
  allowHosts: string[];
  /** Local folders the build reads (file:// indexes, find-links), bound read-only. */
  readDirs: string[];
  /** What the source is, for the key and the manifest. */
  describe: Record<string, unknown>;
}

const PYPI = 'https://pypi.org/simple';

function hostOf(url: URL): string {
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  return url.port && url.port !== defaultPort ? `${url.hostname}:${url.port}` : url.hostname;
}

async function isDir(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

/** Splits pip's `a b` / `a\nb` multi-values. */
const many = (v: string | undefined) => (v ?? '').split(/\s+/).map((s) => s.trim()).filter(Boolean);

/** Parses `pip config list` output (`global.index-url='…'`, `:env:.find-links='…'`) into the last value per key. */
export function parsePipConfigList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^[^.]*\.([a-z-]+)='(.*)'$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

async function addLocation(source: PackageSource, value: string): Promise<boolean> {
  if (/^https?:\/\//i.test(value)) {
    const url = new URL(value);
    const host = hostOf(url);
    if (!source.allowHosts.includes(host)) source.allowHosts.push(host);
    return true;
  }
  const path = value.startsWith('file://') ? new URL(value).pathname : isAbsolute(value) ? value : undefined;
  if (!path) return false;
  // A folder of wheels, or an index root; a file (a single wheel) is read from its folder. A `…/simple` index links
  // its files relatively (`../../files/x.whl`), so its parent is shown.
  const base = (await isDir(path)) ? path : dirname(path);
  const dir = /\/simple\/?$/.test(base) ? dirname(base.replace(/\/$/, '')) : base;
  if (!(await isDir(dir))) return false;
  if (!source.readDirs.includes(dir)) source.readDirs.push(dir);
  return true;
}

/**
 * pip's package sources as `python` sees them on the host (its config files and PIP_* variables).
 *
 * @example
 * await pipSource('/usr/bin/python3') // { args: ['--index-url', 'https://pypi.org/simple'], allowHosts: ['pypi.org', 'files.pythonhosted.org'], … }
 */
export async function pipSource(python: string, env: NodeJS.ProcessEnv = process.env): Promise<PackageSource> {
  let config: Record<string, string> = {};
  try {
    const { stdout } = await run(python, ['-m', 'pip', 'config', 'list'], { timeout: 30_000, env: { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    config = parsePipConfigList(stdout);
  } catch {
    // no pip config readable: PIP_* variables and the default index decide
  }
  const indexUrl = env['PIP_INDEX_URL'] || config['index-url'] || PYPI;
  const extra = many(env['PIP_EXTRA_INDEX_URL'] ?? config['extra-index-url']);
  const findLinks = many(env['PIP_FIND_LINKS'] ?? config['find-links']);
  const source: PackageSource = { args: [], allowHosts: [], readDirs: [], describe: { indexUrl, extraIndexUrls: extra, findLinks } };
  if (await addLocation(source, indexUrl)) source.args.push('--index-url', indexUrl);
  // pypi.org serves its files from another host.
  if (/^https?:\/\/pypi\.org\//i.test(indexUrl) || extra.some((u) => /^https?:\/\/pypi\.org\//i.test(u))) source.allowHosts.push('files.pythonhosted.org');
  for (const url of extra) if (await addLocation(source, url)) source.args.push('--extra-index-url', url);
  for (const link of findLinks) if (await addLocation(source, link)) source.args.push('--find-links', link);
  return source;
}

/** npm's registry as the host's npm is configured (`npm config get registry`). */
export async function npmSource(npmCli: string | undefined, node = process.execPath, env: NodeJS.ProcessEnv = process.env): Promise<PackageSource> {
  let registry = env['npm_config_registry'] || env['NPM_CONFIG_REGISTRY'] || '';
  if (!registry && npmCli) {
    try {
      const { stdout } = await run(node, [npmCli, 'config', 'get', 'registry'], { timeout: 30_000, env: { ...env, PATH: `${dirname(node)}:${env['PATH'] ?? ''}` } });
      registry = stdout.trim();
    } catch {
      registry = '';
    }
  }
  registry ||= 'https://registry.npmjs.org/';
  const source: PackageSource = { args: [], allowHosts: [], readDirs: [], describe: { registry } };
  if (await addLocation(source, registry)) source.args.push(`--registry=${registry}`);
  return source;
}

/** The CA bundle the host's TLS clients are told to trust (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, PIP_CERT), to show inside. */
export function trustedCaFiles(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'PIP_CERT', 'REQUESTS_CA_BUNDLE']) {
    const value = env[name];
    if (value && isAbsolute(value)) out[name] = value;
  }
  return out;
}

export const joinArgs = (args: string[]) => args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
export { join as joinPath };
