import { describe, expect, it } from 'vitest';
import type { ForgeCandidate } from '../../../lib/forge/certify-candidate.ts';
import type { CandidateProfile } from '../../../lib/forge/candidate.ts';
import { rankCandidates } from '../../../lib/forge/rank/rank-candidates.ts';
import { difficultyOf, directoryOf, primaryFile } from '../../../lib/forge/rank/candidate-features.ts';
import { parseForgeSpec, type Baseline, type RunnableForgeSpec } from '../../../lib/forge/schemas.ts';

function spec(overrides: Record<string, unknown> = {}): RunnableForgeSpec {
  return parseForgeSpec({ repo: { kind: 'local', path: '.' }, testCommand: 'pytest', ...overrides }) as RunnableForgeSpec;
}

function baseline(collectedFiles: string[]): Baseline {
  return { runs: 1, outcomes: {}, stable: [], flaky: [], skipped: [], collected: 0, durationsMs: [], logKeys: [], testFiles: {}, collectedFiles };
}

const TESTS = ['tests/test_a.py', 'tests/test_b.py', 'tests/test_c.py', 'tests/test_d.py', 'tests/test_e.py', 'tests/test_f.py'];

/** A candidate deleting `[start, end)` of `file`, entry point `file#name`, with a profile as the candidates module sets it. */
function cand(file: string, name: string, options: { lines?: number; isPublic?: boolean; span?: [number, number]; tests?: string[]; sibling?: string; symbols?: string[]; strategy?: string } = {}): ForgeCandidate {
  const span = options.span ?? [0, 10];
  const profile: CandidateProfile = {
    entryPoint: `${file}#${name}`,
    isPublic: options.isPublic ?? !name.startsWith('_'),
    removedLines: options.lines ?? 8,
    spans: [{ path: file, start: span[0], end: span[1] }],
    ...(options.sibling ? { identicalSibling: options.sibling } : {}),
  };
  return {
    id: `${options.strategy ?? 'body'}-${file}-${name}`,
    strategy: options.strategy ?? 'function-body',
    symbols: options.symbols ?? [`${file}#${name}`],
    edits: [{ path: file, content: '' }],
    testFiles: options.tests ?? ['tests/test_a.py'],
    profile,
  };
}

const ids = (r: ReturnType<typeof rankCandidates>) => r.ordered.map((o) => o.candidate.id);
const fileOf = (c: ForgeCandidate) => c.profile!.entryPoint.split('#')[0]!;

describe('rankCandidates: refusals without a run', () => {
  it('refuses one-liners and bodies identical to a sibling, each with its reason and detail', () => {
    const r = rankCandidates(
      [cand('pkg/url.py', 'with_http', { lines: 1 }), cand('pkg/url.py', 'with_https', { sibling: 'pkg/url.py#with_http', span: [20, 40] }), cand('pkg/url.py', 'parse', { span: [50, 90] })],
      { spec: spec(), baseline: baseline(TESTS), limit: 10 },
    );
    expect(ids(r)).toEqual(['body-pkg/url.py-parse']);
    expect(r.refused.map((x) => [x.candidate.id, x.reason, x.detail])).toEqual([
      ['body-pkg/url.py-with_http', 'one-liner', 'removes 1 statement(s); at least 2 make a task'],
      ['body-pkg/url.py-with_https', 'near-duplicate', 'same body as pkg/url.py#with_http'],
    ]);
  });

  it('the one-liner threshold is the spec’s minRemovedLines', () => {
    const r = rankCandidates([cand('a.py', 'f', { lines: 3 })], { spec: spec({ minRemovedLines: 4 }), baseline: baseline(TESTS), limit: 10 });
    expect(r.refused.map((x) => x.reason)).toEqual(['one-liner']);
  });

  it('keeps one member of an overlapping family (public entry, smallest unit) and refuses the rest as overlapping it', () => {
    // parse (public, 6 lines) calls _scan (private, 12 lines); the groups and the file overlap both.
    const family = [
      cand('pkg/parser.py', 'parse', { strategy: 'group', symbols: ['pkg/parser.py#parse', 'pkg/parser.py#_scan'], span: [0, 200], lines: 18 }),
      cand('pkg/parser.py', '_scan', { span: [100, 200], lines: 12 }),
      cand('pkg/parser.py', 'parse', { span: [0, 90], lines: 6 }),
      cand('pkg/parser.py', '_scan', { strategy: 'group', symbols: ['pkg/parser.py#_scan', 'pkg/parser.py#_peek'], span: [100, 260], lines: 15 }),
      cand('pkg/parser.py', 'parser', { strategy: 'file', span: [0, 400], lines: 40 }),
    ];
    const r = rankCandidates(family, { spec: spec(), baseline: baseline(TESTS), limit: 10 });
    expect(ids(r)).toEqual(['body-pkg/parser.py-parse', 'body-pkg/parser.py-_scan']);
    expect(Object.fromEntries(r.refused.map((x) => [x.candidate.id, `${x.reason}: ${x.detail}`]))).toEqual({
      'group-pkg/parser.py-parse': 'near-duplicate: overlaps body-pkg/parser.py-parse',
      'group-pkg/parser.py-_scan': 'near-duplicate: overlaps body-pkg/parser.py-_scan',
      'file-pkg/parser.py-parser': 'near-duplicate: overlaps body-pkg/parser.py-parse',
    });
  });

  it('spans in different files, or adjacent spans, do not overlap', () => {
    const r = rankCandidates([cand('a.py', 'f', { span: [0, 10] }), cand('a.py', 'g', { span: [10, 20] }), cand('b.py', 'f', { span: [0, 10] })], { spec: spec(), baseline: baseline(TESTS), limit: 10 });
    expect(r.refused).toEqual([]);
    expect(r.ordered).toHaveLength(3);
  });
});

describe('rankCandidates: the order tried', () => {
  it('public API before private helpers, focused before broad, untested last', () => {
    const r = rankCandidates(
      [
        cand('m/a.py', '_helper', { span: [0, 10] }),
        cand('m/b.py', 'everything', { tests: TESTS.slice(0, 5) }),
        cand('m/c.py', 'lonely', { tests: [] }),
        cand('m/d.py', 'feature'),
      ],
      { spec: spec(), baseline: baseline(TESTS), limit: 10 },
    );
    expect(ids(r)).toEqual(['body-m/d.py-feature', 'body-m/a.py-_helper', 'body-m/b.py-everything', 'body-m/c.py-lonely']);
    expect(r.ordered.map((o) => o.rank.position)).toEqual([0, 1, 2, 3]);
    const scores = r.ordered.map((o) => o.rank.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(r.ordered[0]!.rank).toMatchObject({ isPublic: true, removedLines: 8, relatedTests: 1 });
    expect(r.ordered[1]!.rank.isPublic).toBe(false);
  });

  it('public API comes before any private helper, even from a file already picked (public first, then spread)', () => {
    const r = rankCandidates(
      [cand('lib/api.py', 'get', { span: [0, 10] }), cand('lib/api.py', 'post', { span: [20, 30] }), cand('lib/_internal.py', '_walk'), cand('lib/api.py', 'put', { span: [40, 50] })],
      { spec: spec(), baseline: baseline(TESTS), limit: 10 },
    );
    expect(r.ordered.map((o) => fileOf(o.candidate))).toEqual(['lib/api.py', 'lib/api.py', 'lib/api.py', 'lib/_internal.py']);
  });

  it('within a file, the mid-sized deletion first', () => {
    const r = rankCandidates(
      [cand('a.py', 'tiny', { lines: 2, span: [0, 5] }), cand('a.py', 'huge', { lines: 80, span: [10, 500] }), cand('a.py', 'mid', { lines: 10, span: [600, 700] })],
      { spec: spec(), baseline: baseline(TESTS), limit: 10 },
    );
    expect(ids(r)).toEqual(['body-a.py-mid', 'body-a.py-tiny', 'body-a.py-huge']);
    expect(r.ordered[0]!.rank.difficulty).toBe(0.5);
    expect(difficultyOf({ removedLines: 10, symbols: 1 })).toBe(0.5);
    expect(difficultyOf({ removedLines: undefined, symbols: 3 })).toBe(0.5);
  });

  /** 4 files in 2 directories, 3 public candidates each, listed in path order. */
  const spreadSet = (): ForgeCandidate[] =>
    ['core/a.py', 'core/b.py', 'core/c.py', 'util/d.py'].flatMap((file) => [0, 1, 2].map((i) => cand(file, `f${i}`, { span: [i * 100, i * 100 + 50] })));

  it('spreads over files and directories: the first N tried come from N different files, the first two from two directories', () => {
    for (const seed of [0, 1, 2, 3, 4]) {
      const r = rankCandidates(spreadSet(), { spec: spec({ seed }), baseline: baseline(TESTS), limit: 12 });
      const files = r.ordered.map((o) => fileOf(o.candidate));
      expect(new Set(files.slice(0, 4)).size).toBe(4);
      expect(new Set(files.slice(4, 8)).size).toBe(4);
      expect(new Set(files.slice(0, 2).map((f) => f.split('/')[0]))).toEqual(new Set(['core', 'util']));
    }
  });

  it('is deterministic for a seed, another seed draws another order, and no seed is path order for all', () => {
    const order = (seed: number) => ids(rankCandidates(spreadSet(), { spec: spec({ seed }), baseline: baseline(TESTS), limit: 12 }));
    expect(order(7)).toEqual(order(7));
    const firstFiles = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((seed) => order(seed).slice(0, 4).join(',')));
    expect(firstFiles.size).toBeGreaterThan(1);
    const pathOrder = spreadSet().map((c) => c.id);
    expect([0, 1, 2, 3].every((seed) => order(seed).join() === pathOrder.join())).toBe(false);
  });

  it('limit caps the order tried, after refusals', () => {
    const r = rankCandidates([...spreadSet(), cand('z.py', 'one', { lines: 1 })], { spec: spec(), baseline: baseline(TESTS), limit: 5 });
    expect(r.ordered).toHaveLength(5);
    expect(r.refused.map((x) => x.reason)).toEqual(['one-liner']);
  });

  it('candidates made by hand (no profile) count as public, keep their maker’s order in a file, and those no test reaches go last', () => {
    const hand = (id: string, path: string, testFiles?: string[]): ForgeCandidate => ({ id, strategy: 'remove-function-body', symbols: [], edits: [{ path, content: '' }], ...(testFiles ? { testFiles } : {}) });
    const r = rankCandidates([hand('first', 'src/calc.ts', ['test/calc.test.ts']), hand('untested', 'src/calc.ts'), hand('second', 'src/calc.ts', ['test/calc.test.ts']), hand('other', 'src/shared.ts')], {
      spec: spec(),
      baseline: baseline([]),
      limit: 10,
    });
    expect(ids(r)).toEqual(['first', 'second', 'other', 'untested']);
    expect(r.refused).toEqual([]);
    expect(r.ordered[0]!.rank).toMatchObject({ isPublic: true, removedLines: 0, difficulty: 0.5 });
  });

  it('counts only the test files the runner collected (a package’s paths seen from the root match)', () => {
    const r = rankCandidates([cand('packages/u/src/a.ts', 'f', { tests: ['packages/u/test/a.test.ts', 'typings/editor.py'] }), cand('packages/u/src/b.ts', 'g', { tests: ['typings/stub.py'] })], {
      spec: spec(),
      baseline: baseline(['test/a.test.ts', 'test/b.test.ts']),
      limit: 10,
    });
    expect(r.ordered.map((o) => [o.candidate.id, o.rank.relatedTests])).toEqual([
      ['body-packages/u/src/a.ts-f', 1],
      ['body-packages/u/src/b.ts-g', 0],
    ]);
  });
});

describe('primaryFile and directoryOf', () => {
  it('a symbol entry point names its file, a path entry point is the file, else the first edit', () => {
    expect(primaryFile('src/url.ts#withHttp', ['src/other.ts'])).toBe('src/url.ts');
    expect(primaryFile('src/url.ts', ['src/index.ts', 'src/url.ts'])).toBe('src/url.ts');
    expect(primaryFile(undefined, ['src/index.ts'])).toBe('src/index.ts');
    expect(primaryFile(undefined, [])).toBe('');
    expect(directoryOf('src/url.ts')).toBe('src');
    expect(directoryOf('setup.py')).toBe('.');
  });
});
