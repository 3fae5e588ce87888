import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { FORGE_ENVIRONMENT_ERROR, prepareForgeEnvironment, type ForgeEnvironmentRecord } from '../../../lib/forge/environment/forge-environment.ts';
import { prepareWorkRepo } from '../../../lib/forge/forge-git.ts';
import { forgeRepository, type ForgeRunResult } from '../../../lib/forge/forge-repository.ts';
import { parseForgeSpec, type RunnableForgeSpec } from '../../../lib/forge/schemas.ts';
import { cachedEnvironmentResolver, NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { candidate, NODE_TEST_COMMAND, stubBody, writeRepo } from '../support/forge-fixtures.ts';

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

/** A provider whose environments are cached in the test's own folder (nothing shared with other runs). */
function providerIn(data: string): NamespaceSandboxProvider {
  return new NamespaceSandboxProvider({ root: join(data, 'sandbox'), environments: cachedEnvironmentResolver({ cacheDir: join(data, 'envs') }) });
}

const WITH_QUERY_SIGNATURE = 'export function withQuery(url: string, params: Record<string, string>): string {\n';
const WITH_QUERY_BODY = `  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params) as Array<[string, string]>) {
    if (value === undefined || value === '') continue;
    search.append(key.trim().toLowerCase(), value);
  }
  const query: string = search.toString();
  return query ? \`\${url}\${url.includes('?') ? '&' : '?'}\${query}\` : url;
`;
const JOIN_PATH_SIGNATURE = 'export function joinPath(base: string, ...segments: string[]): string {\n';
const JOIN_PATH_BODY = `  const parts = [base.replace(/\\/+$/, ''), ...segments.map((s) => s.replace(/^\\/+|\\/+$/g, ''))];
  return parts.filter(Boolean).join('/');
`;
const URL_TS = `/** Appends query parameters to a URL, skipping empty values; keys are trimmed and lower-cased. */
${WITH_QUERY_SIGNATURE}${WITH_QUERY_BODY}}

/** Joins a base URL and path segments with single slashes. */
${JOIN_PATH_SIGNATURE}${JOIN_PATH_BODY}}
`;

/** The prepared node_modules, kept outside the checkout (the checkout's node_modules links to it). */
const NODE_MODULES: Record<string, string> = {
  // What the tests import: the sandbox finds it only if the prepared node_modules is there.
  'check-kit/package.json': '{ "name": "check-kit", "version": "1.0.0", "type": "module", "main": "index.js" }\n',
  'check-kit/index.js': "import assert from 'node:assert/strict';\nexport function same(actual, expected) {\n  assert.equal(actual, expected);\n}\n",
  // A dev dependency that bundles a transpiled copy of withQuery under its own name.
  'bundle-kit/package.json': '{ "name": "bundle-kit", "version": "2.1.0", "type": "module", "main": "dist/index.mjs" }\n',
  'bundle-kit/dist/index.mjs': `// bundle-kit 2.1.0, helpers bundled from their sources
function withQuery(url, params) {
  var search = new URLSearchParams();
  for (var [key, value] of Object.entries(params)) {
    if (value === undefined || value === "") continue;
    search.append(key.trim().toLowerCase(), value)
  }
  var query = search.toString();
  return query ? \`\${url}\${url.includes("?") ? "&" : "?"}\${query}\` : url
}
function bundleName() { return "bundle-kit" }
export { bundleName, withQuery };
`,
  // A published release of the project itself (both functions): taken out when the layer is made.
  'url-kit/package.json': '{ "name": "url-kit", "version": "0.9.0", "type": "module", "main": "dist/index.mjs" }\n',
  'url-kit/dist/index.mjs': `export function withQuery(url, params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === "") continue;
    search.append(key.trim().toLowerCase(), value);
  }
  const query = search.toString();
  return query ? \`\${url}\${url.includes("?") ? "&" : "?"}\${query}\` : url;
}
export function joinPath(base, ...segments) {
  const parts = [base.replace(/\\/+$/, ""), ...segments.map((s) => s.replace(/^\\/+|\\/+$/g, ""))];
  return parts.filter(Boolean).join("/");
}
`,
};

describe('forge environment: a TypeScript checkout with a prepared node_modules (namespace sandbox)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let result: ForgeRunResult;

  beforeAll(async () => {
    repo = await writeRepo({
      'package.json': '{ "name": "url-kit", "version": "1.0.0", "type": "module", "private": true, "devDependencies": { "bundle-kit": "2.1.0", "check-kit": "1.0.0" } }\n',
      '.gitignore': 'node_modules\n',
      'src/url.ts': URL_TS,
      'test/url.test.ts': `import { test } from 'node:test';
import { same } from 'check-kit';
import { joinPath, withQuery } from '../src/url.ts';

test('withQuery appends parameters', () => {
  same(withQuery('https://x.dev/a', { Page: '2', q: '' }), 'https://x.dev/a?page=2');
});
test('withQuery extends an existing query', () => {
  same(withQuery('https://x.dev/a?b=1', { c: '3' }), 'https://x.dev/a?b=1&c=3');
});
test('joinPath joins with single slashes', () => {
  same(joinPath('https://x.dev/', '/api/', 'v1'), 'https://x.dev/api/v1');
});
`,
    });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-env-ts-'));
    // node_modules is a link to a folder elsewhere (a shared, prepared copy).
    await writeFiles(join(data, 'deps', 'node_modules'), NODE_MODULES);
    await symlink(join(data, 'deps', 'node_modules'), join(repo, 'node_modules'));
    ports = openLocalPorts(join(data, '.flywheel'));
    const spec = parseForgeSpec({ name: 'url-kit', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test' }, suite: 'url-kit', k: 1, maxTasks: 5 });
    result = await forgeRepository({
      spec,
      provider: providerIn(data),
      ports,
      runId: 'env-ts',
      candidates: async () => [
        candidate({ id: 'with-query-body', symbols: ['withQuery'], edits: [{ path: 'src/url.ts', content: stubBody(URL_TS, WITH_QUERY_SIGNATURE, WITH_QUERY_BODY) }], testFiles: ['test/url.test.ts'] }),
        candidate({ id: 'join-path-body', symbols: ['joinPath'], edits: [{ path: 'src/url.ts', content: stubBody(URL_TS, JOIN_PATH_SIGNATURE, JOIN_PATH_BODY) }], testFiles: ['test/url.test.ts'] }),
      ],
    });
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('runs the baseline against the prepared node_modules (no install), copied into the environment cache', () => {
    expect(result.baseline.stable.length).toBe(3);
    const layer = result.environment.layers[0]!;
    expect(result.environment.layers).toHaveLength(1);
    expect(layer).toMatchObject({ kind: 'node', from: 'checkout', target: '/opt/flywheel/env/node' });
    expect(layer.preparedFrom).toBe(`${join(repo, 'node_modules')} -> ${join(data, 'deps', 'node_modules')}`);
    expect(layer.packages.sort()).toEqual(['bundle-kit@2.1.0', 'check-kit@1.0.0']);
    // The release of the project itself was taken out of the copy (and the prepared folder left as it was).
    expect(layer.removed).toEqual([expect.stringMatching(/^url-kit@0\.9\.0: its name is the project's/)]);
    expect(existsSync(join(data, 'deps', 'node_modules', 'url-kit', 'dist', 'index.mjs'))).toBe(true);
    expect(existsSync(join(data, 'envs', layer.key, 'env.json'))).toBe(true);
    expect(result.environment.searched).toContain('/opt/flywheel/env/node');
  });

  it('refuses the deletion whose transpiled copy a dev dependency bundles, naming the file', () => {
    const refused = result.candidates.find((c) => c.candidateId === 'with-query-body')!;
    expect(refused.verdict).toBe('rejected:answer-reachable');
    expect(refused.detail).toContain('<workspace>/node_modules/bundle-kit/dist/index.mjs');
  });

  it('certifies the deletion whose code is nowhere else, and records the environment on the task', () => {
    const certified = result.candidates.find((c) => c.candidateId === 'join-path-body')!;
    expect(certified.verdict).toBe('certified');
    const task = result.tasks[0]!.task!;
    // (How the id names the file is the test-id module's business; the title is whole.)
    expect(task.failToPass).toEqual([expect.stringMatching(/::joinPath joins with single slashes$/)]);
    const recorded = (task.metadata.forge as { environment: ForgeEnvironmentRecord }).environment;
    expect(recorded).toEqual(result.environment);
    expect(recorded.id).toMatch(/^env-[0-9a-f]{32}$/);
  });
});

const CORE_PY = `import re


def slugify(text, separator="-", max_length=50):
    """A URL slug of the text: lower-case words joined by the separator."""
    words = [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]
    if not words:
        raise ValueError("nothing to slugify in %r" % (text,))
    return separator.join(words)[:max_length].rstrip(separator)


def wrap_words(text, width):
    """Lines of at most width characters, broken between words."""
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if len(candidate) > width and current:
            lines.append(current)
            candidate = word
        current = candidate
    return lines + ([current] if current else [])
`;
const SLUGIFY_SIGNATURE = 'def slugify(text, separator="-", max_length=50):\n    """A URL slug of the text: lower-case words joined by the separator."""\n';
const SLUGIFY_BODY = '    words = [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]\n    if not words:\n        raise ValueError("nothing to slugify in %r" % (text,))\n    return separator.join(words)[:max_length].rstrip(separator)\n';
const WRAP_SIGNATURE = 'def wrap_words(text, width):\n    """Lines of at most width characters, broken between words."""\n';
const WRAP_BODY = '    lines, current = [], ""\n    for word in text.split():\n        candidate = f"{current} {word}".strip()\n        if len(candidate) > width and current:\n            lines.append(current)\n            candidate = word\n        current = candidate\n    return lines + ([current] if current else [])\n';
const PY_STUB = '    raise NotImplementedError\n';

/** The host interpreter's site-packages, where this machine's pytest lives (copied into the prepared virtualenv). */
function hostSitePackages(): string {
  return execFileSync('python3', ['-c', 'import pytest, os; print(os.path.dirname(os.path.dirname(pytest.__file__)))']).toString().trim();
}

describe('forge environment: a Python src-layout checkout with a prepared .venv (namespace sandbox)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let result: ForgeRunResult;

  beforeAll(async () => {
    repo = await writeRepo({
      'pyproject.toml': '[project]\nname = "tidy-text"\nversion = "1.0.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n',
      '.gitignore': '.venv/\n',
      'src/tidytext/__init__.py': 'from tidytext.core import slugify, wrap_words\n',
      'src/tidytext/core.py': CORE_PY,
      'tests/test_core.py': `from tidytext import slugify, wrap_words


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"


def test_wrap_words():
    assert wrap_words("the quick brown fox", 9) == ["the quick", "brown fox"]
`,
    });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-env-py-'));
    // A virtualenv prepared without the network: pytest and its requirements copied from the host's site-packages.
    const venv = join(repo, '.venv');
    execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
    const version = execFileSync('python3', ['-c', 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")']).toString().trim();
    const site = join(venv, 'lib', `python${version}`, 'site-packages');
    const host = hostSitePackages();
    for (const name of await readdir(host)) {
      if (/^(?:_?pytest|pluggy|iniconfig|packaging|pygments)(?:$|-.*\.dist-info$)|^py\.py$/i.test(name)) await cp(join(host, name), join(site, name), { recursive: true });
    }
    await writeFiles(site, {
      // A copy of slugify, reformatted and vendored under another package's name: found by content.
      'textkit_vendor/__init__.py': '',
      'textkit_vendor/_tidy.py': `# vendored from tidy-text 0.9
import re

def _slug(text, separator='-', max_length=50):
    words = [w for w in re.split(r'[^a-z0-9]+', text.lower()) if w]
    if not words: raise ValueError('nothing to slugify in %r' % (text,))
    return separator.join(words)[: max_length].rstrip(separator)
`,
      // A release of the project itself (both functions), installed by name: taken out when the layer is made.
      'tidytext/__init__.py': 'from tidytext.core import slugify, wrap_words\n',
      'tidytext/core.py': CORE_PY,
      'tidy_text-0.9.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: tidy-text\nVersion: 0.9.0\n',
      'tidy_text-0.9.0.dist-info/top_level.txt': 'tidytext\n',
      'tidy_text-0.9.0.dist-info/RECORD': 'tidytext/__init__.py,,\ntidytext/core.py,,\ntidy_text-0.9.0.dist-info/METADATA,,\ntidy_text-0.9.0.dist-info/RECORD,,\n',
    });
    ports = openLocalPorts(join(data, '.flywheel'));
    const spec = parseForgeSpec({ name: 'tidy-text', repo: { kind: 'local', path: repo }, testCommand: 'python -m pytest -q -p no:cacheprovider tests', runner: { kind: 'pytest' }, suite: 'tidy-text', k: 1, maxTasks: 5 });
    result = await forgeRepository({
      spec,
      provider: providerIn(data),
      ports,
      runId: 'env-py',
      candidates: async () => [
        candidate({ id: 'slugify-body', strategy: 'function-body', symbols: ['src/tidytext/core.py#slugify'], edits: [{ path: 'src/tidytext/core.py', content: stubBody(CORE_PY, SLUGIFY_SIGNATURE, SLUGIFY_BODY, PY_STUB) }], testFiles: ['tests/test_core.py'] }),
        candidate({ id: 'wrap-words-body', strategy: 'function-body', symbols: ['src/tidytext/core.py#wrap_words'], edits: [{ path: 'src/tidytext/core.py', content: stubBody(CORE_PY, WRAP_SIGNATURE, WRAP_BODY, PY_STUB) }], testFiles: ['tests/test_core.py'] }),
      ],
    });
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('runs pytest from the prepared virtualenv, relocated into the environment cache, the project taken out', async () => {
    expect(result.baseline.stable.sort()).toEqual(['tests/test_core.py::test_slugify', 'tests/test_core.py::test_wrap_words']);
    const layer = result.environment.layers[0]!;
    expect(result.environment.layers).toHaveLength(1);
    expect(layer).toMatchObject({ kind: 'python', from: 'checkout', preparedFrom: join(repo, '.venv'), target: '/opt/flywheel/env/python' });
    expect(layer.packages).toEqual(expect.arrayContaining([expect.stringMatching(/^pytest@/), expect.stringMatching(/^pluggy@/)]));
    expect(layer.removed).toEqual([expect.stringMatching(/^tidy-text@0\.9\.0: its name is the project's/)]);
    // The venv's own absolute path (scripts, activation) now names where the layer is bound.
    const activate = await readFile(join(data, 'envs', layer.key, 'layer', 'bin', 'activate'), 'utf8');
    expect(activate).not.toContain(repo);
    expect(activate).toContain('/opt/flywheel/env/python');
    // The host's own site-packages is covered inside the sandbox: recorded as masked, not searched.
    expect(result.environment.masked).toContain(hostSitePackages());
  });

  it('refuses the deletion whose reformatted copy is vendored in site-packages under another name, naming the file', () => {
    const refused = result.candidates.find((c) => c.candidateId === 'slugify-body')!;
    expect(refused.verdict).toBe('rejected:answer-reachable');
    expect(refused.detail).toMatch(/\/opt\/flywheel\/env\/python\/lib\/python3\.\d+\/site-packages\/textkit_vendor\/_tidy\.py \(\d+% of the deleted code's fingerprints/);
  });

  it('certifies the deletion whose code is nowhere else', () => {
    const certified = result.candidates.find((c) => c.candidateId === 'wrap-words-body')!;
    expect(certified.verdict).toBe('certified');
    expect(result.tasks[0]!.task!.failToPass).toEqual(['tests/test_core.py::test_wrap_words']);
    expect((result.tasks[0]!.task!.metadata.forge as { environment: ForgeEnvironmentRecord }).environment.layers[0]!.from).toBe('checkout');
  });
});

describe('forge environment: a build failure stops the run before it starts', () => {
  let repo: string;
  let data: string;

  beforeAll(async () => {
    repo = await writeRepo({ 'package.json': '{ "name": "broken-lock", "version": "1.0.0", "dependencies": { "left-pad": "1.3.0" } }\n', 'package-lock.json': '{ this is not json\n', 'index.js': 'export const x = 1;\n' });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-env-fail-'));
  });

  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('throws Flywheel.ForgeEnvironmentError naming the lockfile', async () => {
    const spec = parseForgeSpec({ repo: { kind: 'git', url: repo }, testCommand: 'node --test' }) as RunnableForgeSpec;
    const work = await prepareWorkRepo(spec.repo, join(data, 'work'));
    const error = await prepareForgeEnvironment({ work, spec, provider: providerIn(data) }).then(
      () => undefined,
      (e: unknown) => e as Error & { files: string[] },
    );
    expect(error?.name).toBe(`Flywheel.${FORGE_ENVIRONMENT_ERROR}`);
    expect(error?.message).toContain('could not be built from package-lock.json, package.json');
    expect(error?.files).toEqual(['package-lock.json', 'package.json']);
  }, 180_000);
});
