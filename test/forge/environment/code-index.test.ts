import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeFingerprints } from '../../../lib/forge/environment/code-fingerprints.ts';
import { CodeIndex, MAX_CODE_FILE_BYTES } from '../../../lib/forge/environment/code-index.ts';
import { deletedCodeQuery } from '../../../lib/forge/environment/deleted-code-query.ts';
import { LEAK_MIN_LINES, LEAK_MIN_SHARE, LEAK_MIN_SHARED_FINGERPRINTS } from '../../../lib/forge/environment/environment-leak-index.ts';

/** The body of a TypeScript function as a removal patch takes it away. */
const DELETED_TS = `  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params) as Array<[string, string]>) {
    if (value === undefined || value === '') continue;
    search.append(key.trim().toLowerCase(), value);
  }
  const query: string = search.toString();
  return query ? \`\${url}\${url.includes('?') ? '&' : '?'}\${query}\` : url;
`;

/** The same code as a bundler publishes it: types gone, double quotes, other layout, a comment added. */
const PUBLISHED_JS = `// bundle-kit: vendored helpers
function withQuery(url, params) {
  var search = new URLSearchParams();
  for (var [key, value] of Object.entries(params)) {
    if (value === undefined || value === "") continue; // skip empties
    search.append(key.trim().toLowerCase(), value)
  }
  var query = search.toString();
  return query ? \`\${url}\${url.includes("?") ? "&" : "?"}\${query}\` : url
}
export { withQuery };
`;

const DELETED_PY = `    words = [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]
    if not words:
        raise ValueError("nothing to slugify in %r" % (text,))
    return separator.join(words)[:max_length].rstrip(separator)
`;

/** A reformatted copy, vendored under another package's name. */
const VENDORED_PY = `# vendored from tidytext 0.9
import re

def _slug(text, separator='-', max_length=50):
    words = [w for w in re.split(r'[^a-z0-9]+', text.lower()) if w]
    if not words: raise ValueError('nothing to slugify in %r' % (text,))
    return separator.join(words)[: max_length].rstrip(separator)
`;

const UNRELATED_JS = `export function total(items) {
  let sum = 0;
  for (const item of items) sum += item.price * item.quantity;
  return Math.round(sum * 100) / 100;
}
`;

const THRESHOLDS = { minShare: LEAK_MIN_SHARE, minShared: LEAK_MIN_SHARED_FINGERPRINTS, minLines: LEAK_MIN_LINES };

describe('code fingerprints and the code index (real files on disk)', () => {
  let root: string;
  let outside: string;
  let index: CodeIndex;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fw-code-index-'));
    outside = await mkdtemp(join(tmpdir(), 'fw-code-index-outside-'));
    const files: Record<string, string> = {
      'node_modules/bundle-kit/dist/index.mjs': PUBLISHED_JS,
      'node_modules/cart/index.js': UNRELATED_JS,
      'lib/python3.11/site-packages/textkit_vendor/_tidy.py': VENDORED_PY,
      'lib/python3.11/site-packages/textkit_vendor/README.md': DELETED_PY,
      'lib/python3.11/site-packages/textkit_vendor/__pycache__/copy.py': VENDORED_PY,
    };
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, rel)), { recursive: true });
      await writeFile(join(root, rel), text);
    }
    // A link out of the indexed folder is not followed.
    await writeFile(join(outside, 'copy.mjs'), PUBLISHED_JS);
    await symlink(outside, join(root, 'node_modules', 'linked'));
    index = await CodeIndex.build(root);
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('reads reformatted code as the same fingerprints (quotes, spacing, comments, semicolons)', () => {
    const a = codeFingerprints("def f(x, y):\n    return x * 2 + y  # twice\n", 'python');
    const b = codeFingerprints('def f(x,y): return x*2+y', 'python');
    expect(a.length).toBeGreaterThan(0);
    expect([...a]).toEqual([...b]);
    expect([...codeFingerprints("const s = 'a';", 'script')]).toEqual([...codeFingerprints('var s = "a"', 'script')]);
  });

  it('finds the transpiled copy of a TypeScript body in a bundled dependency, not the unrelated file', () => {
    const matches = index.search(deletedCodeQuery(DELETED_TS), THRESHOLDS);
    expect(matches.map((m) => m.file)).toEqual([join(root, 'node_modules/bundle-kit/dist/index.mjs')]);
    expect(matches[0]!.share).toBeGreaterThanOrEqual(LEAK_MIN_SHARE);
  });

  it('finds a reformatted Python copy vendored under another name, by content', () => {
    const matches = index.search(deletedCodeQuery(DELETED_PY), THRESHOLDS);
    expect(matches.map((m) => m.file)).toEqual([join(root, 'lib/python3.11/site-packages/textkit_vendor/_tidy.py')]);
  });

  it('finds nothing for code that is nowhere else, and skips non-code files, bytecode caches and links out', () => {
    const fresh = `  const parts = [base.replace(/\\/+$/, ''), ...segments.map((s) => s.replace(/^\\/+|\\/+$/g, ''))];\n  return parts.filter(Boolean).join('/');\n`;
    expect(index.search(deletedCodeQuery(fresh), THRESHOLDS)).toEqual([]);
    expect(index.files.some((f) => f.endsWith('.md') || f.includes('/__pycache__/') || f.includes('/linked/'))).toBe(false);
    expect(index.stats.files).toBe(3);
  });
});

describe('copies an agent reads other than as a code file (real files on disk)', () => {
  let root: string;
  let index: CodeIndex;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fw-code-index-other-'));
    const sourceMap = JSON.stringify({ version: 3, sources: ['../src/url.ts'], sourcesContent: [`export function withQuery(url: string, params: Record<string, string>): string {\n${DELETED_TS}}\n`], mappings: 'AAAA' });
    await mkdir(join(root, 'node_modules/url-kit/dist'), { recursive: true });
    // A minified bundle the fingerprints cannot read, and its source map, which carries the original TypeScript.
    await writeFile(join(root, 'node_modules/url-kit/dist/index.mjs'), 'export function w(a,b){let c=new URLSearchParams;for(const[d,e]of Object.entries(b))e&&c.append(d.trim().toLowerCase(),e);const f=c.toString();return f?a+(a.includes("?")?"&":"?")+f:a}\n');
    await writeFile(join(root, 'node_modules/url-kit/dist/index.mjs.map'), sourceMap);
    await mkdir(join(root, 'node_modules/.vite-node'), { recursive: true });
    await writeFile(join(root, 'node_modules/.vite-node/url.mjs'), `export const w=(a)=>a;\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(sourceMap).toString('base64')}\n`);
    await mkdir(join(root, 'node_modules/.cache/babel'), { recursive: true });
    await writeFile(join(root, 'node_modules/.cache/babel/a1b2.js'), PUBLISHED_JS);
    await mkdir(join(root, 'lib/python3.11/site-packages/docs_kit'), { recursive: true });
    await writeFile(join(root, 'lib/python3.11/site-packages/docs_kit/slug.py.gz'), gzipSync(VENDORED_PY));
    await mkdir(join(root, 'node_modules/huge'), { recursive: true });
    await writeFile(join(root, 'node_modules/huge/bundle.js'), `${PUBLISHED_JS}\n//${'x'.repeat(MAX_CODE_FILE_BYTES)}\n`);
    index = await CodeIndex.build(root);
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("finds the deleted TypeScript in a source map's sourcesContent (a file or inline) and in a tool cache inside node_modules", () => {
    const files = index.search(deletedCodeQuery(DELETED_TS), THRESHOLDS).map((m) => m.file);
    expect(files.sort()).toEqual([
      join(root, 'node_modules/.cache/babel/a1b2.js'),
      join(root, 'node_modules/.vite-node/url.mjs'),
      join(root, 'node_modules/url-kit/dist/index.mjs.map'),
    ]);
  });

  it('names a code file too big to index instead of passing over it in silence', () => {
    expect(index.oversize).toEqual([join(root, 'node_modules/huge/bundle.js')]);
    expect(index.stats.oversize).toBe(1);
  });

  it('finds the deleted Python in a gzipped copy', () => {
    const files = index.search(deletedCodeQuery(DELETED_PY), THRESHOLDS).map((m) => m.file);
    expect(files).toEqual([join(root, 'lib/python3.11/site-packages/docs_kit/slug.py.gz')]);
  });
});
