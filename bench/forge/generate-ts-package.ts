/**
 * A generated TypeScript package shaped like a small URL library, for the forge's benchmark: `package.json` with
 * `"test": "vitest run"` and vitest as a dev dependency, `src/*.ts` behind an `index.ts` of re-exports (with two
 * sibling functions whose bodies are identical, `withHttp` and `withHttps`), and `test/*.test.ts` whose titles hold
 * `/` and `.` (the test ids must keep them whole).
 *
 * Its `node_modules` is an UNTRACKED prepared copy, as on a developer's checkout: a symlink to a folder that holds
 * vitest (default: this repository's own `node_modules`), listed in `.gitignore`. Deterministic, no network.
 */
import { symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { GeneratedRepo } from './generate-python-src.ts';
import { writeRepoFiles } from './write-files.ts';

/** The README-style test command the issue tried on a TypeScript package. */
export const TS_PACKAGE_TEST_COMMAND = 'npx vitest run';

export interface TsPackageOptions {
  /** What `node_modules` links to (an untracked prepared copy); default this checkout's `node_modules`. */
  nodeModules?: string;
  /** Commit the repository (default true). */
  git?: boolean;
}

const SOURCES: Record<string, string> = {
  'src/scheme.ts': `/** Strips a leading "<scheme>://". */
function stripScheme(url: string): string {
  const at = url.indexOf('://');
  return at >= 0 ? url.slice(at + 3) : url;
}

/** The URL with the http scheme. */
export function withHttp(url: string, scheme = 'http'): string {
  const rest = stripScheme(url);
  return \`\${scheme}://\${rest}\`;
}

/** The URL with the https scheme (a sibling of withHttp with the same body). */
export function withHttps(url: string, scheme = 'https'): string {
  const rest = stripScheme(url);
  return \`\${scheme}://\${rest}\`;
}

export function hasProtocol(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(url);
}
`,
  'src/query.ts': `export type Query = Record<string, string | string[]>;

/** Parses "a=1&b=2&b=3" into { a: '1', b: ['2', '3'] }. */
export function parseQuery(text: string): Query {
  const out: Query = {};
  for (const pair of text.replace(/^\\?/, '').split('&')) {
    if (!pair) continue;
    const [rawKey, rawValue = ''] = pair.split('=');
    const key = decodeURIComponent(rawKey!.replace(/\\+/g, ' '));
    const value = decodeURIComponent(rawValue.replace(/\\+/g, ' '));
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** The inverse of parseQuery, keys in insertion order. */
export function stringifyQuery(query: Query): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) parts.push(\`\${encodeURIComponent(key)}=\${encodeURIComponent(v)}\`);
  }
  return parts.join('&');
}
`,
  'src/path.ts': `/** Resolves "." and ".." segments; keeps a leading slash. */
export function normalizePath(path: string): string {
  const absolute = path.startsWith('/');
  const parts: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length && parts[parts.length - 1] !== '..') parts.pop();
      else if (!absolute) parts.push('..');
      continue;
    }
    parts.push(segment);
  }
  const joined = parts.join('/');
  return absolute ? \`/\${joined}\` : joined || '.';
}

/** Joins URL parts with exactly one slash between them. */
export function joinURL(base: string, ...parts: string[]): string {
  let url = base.replace(/\\/+$/, '');
  for (const part of parts) url += \`/\${part.replace(/^\\/+|\\/+$/g, '')}\`;
  return url;
}

export function extname(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : '';
}
`,
  'src/parse.ts': `export interface ParsedURL {
  protocol: string;
  host: string;
  pathname: string;
  search: string;
  hash: string;
}

/** Splits a URL into its parts without the WHATWG parser (relative URLs too). */
export function parseURL(input: string): ParsedURL {
  const match = /^(?:([a-z][a-z0-9+.-]*:)\\/\\/([^/?#]*))?([^?#]*)(\\?[^#]*)?(#.*)?$/i.exec(input);
  if (!match) throw new Error(\`not a URL: \${input}\`);
  return { protocol: match[1] ?? '', host: match[2] ?? '', pathname: match[3] ?? '', search: match[4] ?? '', hash: match[5] ?? '' };
}

/** The inverse of parseURL. */
export function stringifyParsedURL(parsed: ParsedURL): string {
  const origin = parsed.protocol ? \`\${parsed.protocol}//\${parsed.host}\` : '';
  return origin + parsed.pathname + parsed.search + parsed.hash;
}
`,
  'src/trailing.ts': `export function hasTrailingSlash(url: string): boolean {
  return url.split('?')[0]!.endsWith('/');
}

/** Adds a trailing slash to the path part (before any query or hash). */
export function withTrailingSlash(url: string): string {
  const [path, ...rest] = url.split(/(?=[?#])/);
  if (path!.endsWith('/')) return url;
  return [\`\${path}/\`, ...rest].join('');
}

/** Removes the path part's trailing slash (not the root's). */
export function withoutTrailingSlash(url: string): string {
  const [path, ...rest] = url.split(/(?=[?#])/);
  if (path === '/' || !path!.endsWith('/')) return url;
  return [path!.slice(0, -1), ...rest].join('');
}
`,
  'src/encoding.ts': `/** Encodes a path segment, keeping the characters RFC 3986 allows unescaped in one. */
export function encodePath(text: string): string {
  return encodeURI(text).replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/\\?/g, '%3F').replace(/#/g, '%23');
}

/** Decodes, leaving malformed escapes as they are. */
export function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
`,
  'src/host.ts': `/** The host's labels, lower-cased, without a port. */
export function hostLabels(host: string): string[] {
  const bare = host.replace(/:\\d+$/, '').toLowerCase();
  return bare.split('.').filter(Boolean);
}

/** True for "example.com" under "com", "a.example.com" under "example.com". */
export function isSubdomainOf(host: string, parent: string): boolean {
  const h = hostLabels(host);
  const p = hostLabels(parent);
  if (p.length === 0 || h.length <= p.length) return false;
  return h.slice(h.length - p.length).join('.') === p.join('.');
}
`,
  'src/index.ts': `export { withHttp, withHttps, hasProtocol } from './scheme.ts';
export { parseQuery, stringifyQuery, type Query } from './query.ts';
export { normalizePath, joinURL, extname } from './path.ts';
export { parseURL, stringifyParsedURL, type ParsedURL } from './parse.ts';
export { hasTrailingSlash, withTrailingSlash, withoutTrailingSlash } from './trailing.ts';
export { encodePath, decodeSafe } from './encoding.ts';
export { hostLabels, isSubdomainOf } from './host.ts';
`,
};

const TESTS: Record<string, string> = {
  'test/scheme.test.ts': `import { describe, expect, it } from 'vitest';
import { hasProtocol, withHttp, withHttps } from '../src/index.ts';

describe('withHttp', () => {
  it('adds http:// to example.com', () => expect(withHttp('example.com')).toBe('http://example.com'));
  it('replaces https:// in https://a.b/c', () => expect(withHttp('https://a.b/c')).toBe('http://a.b/c'));
});
describe('withHttps', () => {
  it('adds https:// to example.com', () => expect(withHttps('example.com')).toBe('https://example.com'));
  it('replaces http:// in http://a.b/c', () => expect(withHttps('http://a.b/c')).toBe('https://a.b/c'));
});
it('hasProtocol knows mailto: and a/b.c', () => {
  expect(hasProtocol('mailto:x@y.z')).toBe(true);
  expect(hasProtocol('a/b.c')).toBe(false);
});
`,
  'test/query.test.ts': `import { describe, expect, it } from 'vitest';
import { parseQuery, stringifyQuery } from '../src/index.ts';

describe('parseQuery', () => {
  it('parses ?a=1&b=2', () => expect(parseQuery('?a=1&b=2')).toEqual({ a: '1', b: '2' }));
  it('collects repeated keys: b=2&b=3', () => expect(parseQuery('b=2&b=3')).toEqual({ b: ['2', '3'] }));
  it('decodes a+b and %2F', () => expect(parseQuery('q=a+b&p=x%2Fy')).toEqual({ q: 'a b', p: 'x/y' }));
});
describe('stringifyQuery', () => {
  it('encodes a/b.c values', () => expect(stringifyQuery({ p: 'a/b.c' })).toBe('p=a%2Fb.c'));
  it('round-trips arrays', () => expect(parseQuery(stringifyQuery({ b: ['2', '3'] }))).toEqual({ b: ['2', '3'] }));
});
`,
  'test/path.test.ts': `import { describe, expect, it } from 'vitest';
import { extname, joinURL, normalizePath } from '../src/index.ts';

describe('normalizePath', () => {
  it('a/./b → a/b', () => expect(normalizePath('a/./b')).toBe('a/b'));
  it('/a/../b → /b', () => expect(normalizePath('/a/../b')).toBe('/b'));
  it('keeps ../x relative', () => expect(normalizePath('../x')).toBe('../x'));
});
describe('joinURL', () => {
  it('joins https://x.org/ and /api/ and v1', () => expect(joinURL('https://x.org/', '/api/', 'v1')).toBe('https://x.org/api/v1'));
});
describe('extname', () => {
  it('a/b.tar.gz → .gz', () => expect(extname('a/b.tar.gz')).toBe('.gz'));
  it('a.b/.bashrc has none', () => expect(extname('a.b/.bashrc')).toBe(''));
});
`,
  'test/parse.test.ts': `import { describe, expect, it } from 'vitest';
import { parseURL, stringifyParsedURL } from '../src/index.ts';

describe('parseURL', () => {
  it('splits https://a.b/c/d.e?x=1#top', () =>
    expect(parseURL('https://a.b/c/d.e?x=1#top')).toEqual({ protocol: 'https:', host: 'a.b', pathname: '/c/d.e', search: '?x=1', hash: '#top' }));
  it('takes a relative ./a/b', () => expect(parseURL('./a/b').pathname).toBe('./a/b'));
  it('round-trips http://h.io/p?q', () => expect(stringifyParsedURL(parseURL('http://h.io/p?q'))).toBe('http://h.io/p?q'));
});
`,
  'test/trailing.test.ts': `import { describe, expect, it } from 'vitest';
import { hasTrailingSlash, withTrailingSlash, withoutTrailingSlash } from '../src/index.ts';

describe('trailing slashes', () => {
  it('sees /a/ in /a/?x', () => expect(hasTrailingSlash('/a/?x')).toBe(true));
  it('adds one to /a.b?x=1', () => expect(withTrailingSlash('/a.b?x=1')).toBe('/a.b/?x=1'));
  it('keeps /a/ as is', () => expect(withTrailingSlash('/a/')).toBe('/a/'));
  it('removes one from /a/b/#h', () => expect(withoutTrailingSlash('/a/b/#h')).toBe('/a/b#h'));
  it('keeps the root /', () => expect(withoutTrailingSlash('/')).toBe('/'));
});
`,
  'test/encoding.test.ts': `import { describe, expect, it } from 'vitest';
import { decodeSafe, encodePath } from '../src/index.ts';

describe('encoding', () => {
  it('encodes a b/c?d.e', () => expect(encodePath('a b/c?d.e')).toBe('a%20b/c%3Fd.e'));
  it('keeps [x] in a/[x].ts', () => expect(encodePath('a/[x].ts')).toBe('a/[x].ts'));
  it('decodes %2F to /', () => expect(decodeSafe('a%2Fb')).toBe('a/b'));
  it('leaves a malformed %E0%A4%A', () => expect(decodeSafe('%E0%A4%A')).toBe('%E0%A4%A'));
});
`,
  'test/host.test.ts': `import { describe, expect, it } from 'vitest';
import { hostLabels, isSubdomainOf } from '../src/index.ts';

describe('hosts', () => {
  it('labels of WWW.Example.com:8080', () => expect(hostLabels('WWW.Example.com:8080')).toEqual(['www', 'example', 'com']));
  it('a.example.com is under example.com', () => expect(isSubdomainOf('a.example.com', 'example.com')).toBe(true));
  it('example.com is not under example.com', () => expect(isSubdomainOf('example.com', 'example.com')).toBe(false));
  it('badexample.com is not under example.com', () => expect(isSubdomainOf('badexample.com', 'example.com')).toBe(false));
});
`,
};

/** Tests in the generated suite. */
export const TS_PACKAGE_TEST_COUNT = 32;

/**
 * The tracked files of the generated TypeScript package.
 *
 * @example
 * const files = tsPackageFiles(); // files['src/index.ts'], files['test/path.test.ts'], …
 */
export function tsPackageFiles(): Record<string, string> {
  return {
    'package.json': `${JSON.stringify({ name: 'urlkit', version: '2.1.0', type: 'module', private: true, scripts: { test: 'vitest run' }, devDependencies: { vitest: '^5.1.2' } }, null, 2)}\n`,
    '.gitignore': 'node_modules\ndist/\n',
    'README.md': '# urlkit\n\nURL helpers: schemes, queries, paths, parsing, trailing slashes, encoding, hosts.\n',
    'tsconfig.json': `${JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, allowImportingTsExtensions: true, noEmit: true } }, null, 2)}\n`,
    ...SOURCES,
    ...TESTS,
  };
}

/**
 * Writes the package under `dir`, commits it (unless `git: false`) and links the untracked `node_modules`.
 *
 * @example
 * generateTsPackage('/tmp/urlkit'); // then: flywheel forge run --repo /tmp/urlkit --test-cmd 'npx vitest run'
 */
export function generateTsPackage(dir: string, options: TsPackageOptions = {}): GeneratedRepo {
  const files = tsPackageFiles();
  const commit = writeRepoFiles(dir, files, { git: options.git ?? true });
  symlinkSync(resolve(options.nodeModules ?? join(import.meta.dirname, '../../node_modules')), join(dir, 'node_modules'));
  return { files: Object.keys(files).length, tests: TS_PACKAGE_TEST_COUNT, ...(commit ? { commit } : {}) };
}
