/**
 * Test ids come in each runner's notation, and a task's ids in whichever its author used:
 *
 * | runner | notation | example |
 * | --- | --- | --- |
 * | pytest (node id, `-rA` lines) | `path::Class::test[params]` | `tests/test_calc.py::TestAdd::test_neg[1-2]` |
 * | JUnit XML | `classname.name` or `classname::name` | `tests.test_calc.TestAdd::test_neg[1-2]`, `com.acme.CalcTest.adds` |
 * | vitest / jest | `file > describe > test` | `src/calc.test.ts > add > adds two numbers` |
 * | go test | `package::Test/subtest` (or just `Test/subtest`) | `example.com/calc::TestAdd/negative` |
 *
 * Normalisation, so these compare equal: keep a trailing `[params]` part verbatim (parameters may hold any
 * character). The file or module part — before the first `::` or ` > ` (else the first `#`) — loses its source-file extension
 * (`.py`, `.ts`, `.go`, …) and is split on `/` and `.` (a path and a dotted module name agree); the parts after it
 * (classes, describe blocks, test titles, go subtests) are split on `::` and ` > ` only and otherwise kept whole, so
 * the titles `a.b` and `a/b` of one file stay two tests. A go test written without its package (`TestAdd/1.5`) is all
 * title, as it is after `package::`. A `[…]` followed by `/` is a folder (`routes/[slug]/`), not parameters. The key
 * is the segments joined by `/`. So
 * `tests/test_calc.py::TestAdd::test_neg[1-2]` and the JUnit `tests.test_calc.TestAdd` + `test_neg[1-2]` share the
 * key `tests/test_calc/TestAdd/test_neg[1-2]`.
 *
 * Lookup of a task id: the exact key first; otherwise every reported key that ends with the task key on a segment
 * boundary (`TestAdd/negative` finds `example.com/calc/TestAdd/negative`), or that the task key ends with when the
 * reported key has two segments or more (a runner started one directory lower). When neither matches, the same
 * lookup on coarse keys (titles split on `/`, `.` and `#` as well: how ids compared before titles were kept whole), so a
 * task id written in another notation still finds its test. Several matches give the worst of their outcomes, so a
 * looser match can make a test fail, never pass; no match is `missing`.
 */
import { worseOutcome, type GradedOutcome, type ReportedTest, type TestOutcome } from './test-report.ts';

const EXTENSION = /\.(?:py|pyi|ts|tsx|mts|cts|js|jsx|mjs|cjs|go|java|kt|rb|rs|php|cs)(?=\/|$)/g;

/** Where the file or module part of an id ends: its first `::` or ` > `; else its first `#` (Java's `Class#method`). */
const FIRST_SEPARATOR = /::| > /;

/**
 * A go test name without its package (`TestAdd/negative`, `TestParse/1.5`, `TestAdd/#00`): all of it is the test, as
 * it is after `package::` in go's own ids, so nothing in it is a module part to split.
 */
const BARE_GO_TEST = /^(?:Test|Benchmark|Example|Fuzz)[^./:#\s[]*(?:\/|$)/;

/**
 * Where parameters start: the first `[` whose `]` is not followed by `/` (a folder such as `routes/[slug]/` is
 * path, not parameters); -1 when none.
 */
function paramsStart(id: string): number {
  for (let at = id.indexOf('['); at >= 0; at = id.indexOf('[', at + 1)) {
    const close = id.indexOf(']', at);
    if (close < 0 || id[close + 1] !== '/') return at;
  }
  return -1;
}

/** The comparison key of a test id (see the module comment). */
export function testIdKey(id: string): string {
  const trimmed = id.trim();
  const bracket = paramsStart(trimmed);
  const sep = FIRST_SEPARATOR.exec(trimmed) ?? (BARE_GO_TEST.test(trimmed) ? { index: 0 } : /#/.exec(trimmed));
  const cut = sep && (bracket < 0 || sep.index < bracket) ? sep.index : bracket >= 0 ? bracket : trimmed.length;
  const filePart = trimmed.slice(0, cut);
  let rest = trimmed.slice(cut);
  // Parameters are verbatim: nothing after the first `[` of the titles is split.
  const restBracket = rest.indexOf('[');
  const params = restBracket >= 0 ? rest.slice(restBracket) : '';
  if (restBracket >= 0) rest = rest.slice(0, restBracket);
  const segments = [
    ...filePart.replace(EXTENSION, '').split(/[/.]/),
    ...rest.replace(/^#/, '').split(/::| > /),
  ]
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (params !== '' && segments.length > 0) segments[segments.length - 1] += params;
  else if (params !== '') segments.push(params);
  return segments.join('/');
}

/** The last segment of a key (with its params): every suffix match shares it, so it buckets the index. */
function lastSegment(key: string): string {
  const bracket = key.indexOf('[');
  const head = bracket >= 0 ? key.slice(0, bracket) : key;
  return key.slice(head.lastIndexOf('/') + 1);
}

/**
 * pytest's node id from a JUnit testcase (`file`, `classname`, `name`), for display: `tests/t.py::TestC::test_x`.
 * Falls back to `classname::name` when the classname does not start with the file's module path.
 */
export function junitCaseId(testcase: { classname?: string; name: string; file?: string }): string {
  const { classname, name, file } = testcase;
  if (file && classname && file.endsWith('.py')) {
    const modulePath = file.slice(0, -3).replaceAll('/', '.');
    if (classname === modulePath) return `${file}::${name}`;
    if (classname.startsWith(`${modulePath}.`)) return `${file}::${classname.slice(modulePath.length + 1).replaceAll('.', '::')}::${name}`;
  }
  return classname ? `${classname}::${name}` : name;
}

/**
 * A key with its titles split on `/`, `.` and `#` too (how every part was split before titles were kept whole): the
 * fallback for a task id written in another notation than the runner's (`com.acme.CalcTest.adds 1.5` against the
 * JUnit `com.acme.CalcTest` + `adds 1.5`), used only when the whole-title key matches nothing.
 */
function coarseKey(key: string): string {
  const bracket = key.indexOf('[');
  const head = bracket >= 0 ? key.slice(0, bracket) : key;
  const params = bracket >= 0 ? key.slice(bracket) : '';
  const parts = head
    .split(/[/.#]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return params !== '' && parts.length > 0 ? `${parts.join('/')}${params}` : [...parts, params].filter(Boolean).join('/');
}

function addToBucket(map: Map<string, string[]>, bucket: string, value: string): void {
  const list = map.get(bucket);
  if (list) list.push(value);
  else map.set(bucket, [value]);
}

/** Reported outcomes by key, merged (worst outcome) across reports and duplicate entries. */
export class TestOutcomeIndex {
  readonly #byKey = new Map<string, TestOutcome>();
  readonly #byLast = new Map<string, string[]>();
  /** Coarse key → the keys that share it, and coarse keys by last segment (the fallback lookup). */
  readonly #byCoarse = new Map<string, string[]>();
  readonly #byCoarseLast = new Map<string, string[]>();

  constructor(tests: Iterable<ReportedTest>) {
    for (const t of tests) this.add(t);
  }

  add(test: ReportedTest): void {
    const key = testIdKey(test.id);
    if (key === '') return;
    const prev = this.#byKey.get(key);
    if (prev === undefined) {
      addToBucket(this.#byLast, lastSegment(key), key);
      const coarse = coarseKey(key);
      if (!this.#byCoarse.has(coarse)) addToBucket(this.#byCoarseLast, lastSegment(coarse), coarse);
      addToBucket(this.#byCoarse, coarse, key);
    }
    this.#byKey.set(key, prev === undefined ? test.outcome : worseOutcome(prev, test.outcome));
  }

  /** Distinct tests reported. */
  get size(): number {
    return this.#byKey.size;
  }

  /** Counts of each outcome over the distinct tests reported. */
  counts(): Record<TestOutcome, number> {
    const c: Record<TestOutcome, number> = { passed: 0, failed: 0, skipped: 0, error: 0 };
    for (const o of this.#byKey.values()) c[o] += 1;
    return c;
  }

  /** The outcome of a task's test id, or `missing`. */
  lookup(taskId: string): GradedOutcome {
    const key = testIdKey(taskId);
    if (key === '') return 'missing';
    const exact = this.#byKey.get(key);
    if (exact !== undefined) return exact;
    const fine = suffixMatches(key, this.#byLast);
    if (fine.length > 0) return this.#worst(fine);
    const coarse = coarseKey(key);
    const exactCoarse = this.#byCoarse.get(coarse);
    if (exactCoarse) return this.#worst(exactCoarse);
    const coarseMatches = suffixMatches(coarse, this.#byCoarseLast).flatMap((c) => this.#byCoarse.get(c) ?? []);
    return coarseMatches.length > 0 ? this.#worst(coarseMatches) : 'missing';
  }

  #worst(keys: readonly string[]): TestOutcome {
    return keys.map((k) => this.#byKey.get(k)!).reduce((a, b) => worseOutcome(a, b));
  }
}

/**
 * Keys that end with `key` on a segment boundary, or that `key` ends with when they have two segments or more,
 * from the bucket of `key`'s last segment.
 */
function suffixMatches(key: string, byLast: ReadonlyMap<string, readonly string[]>): string[] {
  return (byLast.get(lastSegment(key)) ?? []).filter(
    (candidate) => candidate.endsWith(`/${key}`) || (key.endsWith(`/${candidate}`) && segmentCount(candidate) >= 2),
  );
}

function segmentCount(key: string): number {
  const bracket = key.indexOf('[');
  const head = bracket >= 0 ? key.slice(0, bracket) : key;
  return head.split('/').length;
}
