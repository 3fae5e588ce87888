/**
 * Every repository path the documentation names exists: each `lib/…`, `test/…`, `functions/…`, `batch-images/…`,
 * `bin/…`, `bench/…` or `docs/…` written in README.md, docs/*.md and the READMEs under lib/, batch-images/ and data/
 * is a file or folder of the tree. A move that forgets the docs fails here, naming the document, line and path.
 * Globs and placeholders (`lib/<capability>/`, `test/contract/workflows*`, `functions/sweeps/<step>.ts`) are skipped.
 * The other way round, every folder of lib/ has its row in the README's folder table ("Where things are").
 */
import { existsSync, globSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The documents checked, relative to the repository root. */
const DOCUMENTS = ['README.md', 'docs/*.md', 'lib/**/README.md', 'batch-images/*/README.md', 'data/**/README.md'];

/**
 * A path of the repository as prose writes it: a top-level folder name, a slash and path characters, not preceded by
 * a path character (so `/usr/lib/…`, `node_modules/.bin` and `@aws-sdk/lib-dynamodb` are not mentions).
 */
const PATH_MENTION = /(?<![\w./@-])(?:lib|test|functions|batch-images|bin|bench|docs)\/[\w./<>*{}|…$-]*/g;
/** A mention with one of these stands for many paths (a glob, a placeholder, an alternative), not for one. */
const PLACEHOLDER = /[<>*{}|…$]/;

interface PathMention {
  document: string;
  line: number;
  path: string;
}

/** The exact repository paths `text` names, placeholders skipped, a sentence's closing full stop dropped. */
function pathMentions(document: string, text: string): PathMention[] {
  return text.split('\n').flatMap((lineText, index) =>
    [...lineText.matchAll(PATH_MENTION)]
      .map((match) => match[0].replace(/\.+$/, ''))
      .filter((path) => !PLACEHOLDER.test(path))
      .map((path) => ({ document, line: index + 1, path })),
  );
}

function documentsToCheck(): string[] {
  return DOCUMENTS.flatMap((pattern) => globSync(pattern, { cwd: ROOT, exclude: (name) => name === 'node_modules' })).sort();
}

describe('paths named in the documentation', () => {
  it('finds mentions, and skips globs and placeholders', () => {
    const text = [
      'See `lib/feedback/schemas.ts`, and test/e2e/. Not /usr/lib/git-core/git, node_modules/.bin or @aws-sdk/lib-dynamodb.',
      'Skipped: `lib/<capability>/infra/`, `test/contract/workflows*`, `functions/sweeps/<step>.ts`, `lib/a|b`.',
    ].join('\n');
    expect(pathMentions('x.md', text)).toEqual([
      { document: 'x.md', line: 1, path: 'lib/feedback/schemas.ts' },
      { document: 'x.md', line: 1, path: 'test/e2e/' },
    ]);
  });

  it('exist in the tree', () => {
    const documents = documentsToCheck();
    expect(documents).toContain('README.md');
    expect(documents).toContain('docs/architecture.md');
    const mentions = documents.flatMap((document) => pathMentions(document, readFileSync(join(ROOT, document), 'utf8')));
    // The README alone names well over a hundred paths: far fewer means the pattern broke, not that the docs are clean.
    expect(mentions.length).toBeGreaterThan(100);
    const missing = mentions.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ document, line, path }) => `${document}:${line} ${path}`);
    expect(missing).toEqual([]);
  });
});

describe("the README's folder table", () => {
  it('has a row for every folder of lib/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Where things are'), readme.indexOf('\n## ', readme.indexOf('## Where things are') + 1));
    const folders = readdirSync(join(ROOT, 'lib'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `lib/${entry.name}/`);
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((folder) => !table.includes(`\`${folder}`))).toEqual([]);
  });
});
