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
 * character). The file or module part — before the first `::`, ` > ` or `#` — loses its source-file extension
 * (`.py`, `.ts`, `.go`, …) and is split on `/` and `.` (a path and a dotted module name agree); the parts after it
 * (classes, describe blocks, test titles, go subtests) are split on `::` and ` > ` only and otherwise kept whole, so
 * the titles `a.b` and `a/b` of one file stay two tests. The key is the segments joined by `/`. So
 * `tests/test_calc.py::TestAdd::test_neg[1-2]` and the JUnit `tests.test_calc.TestAdd` + `test_neg[1-2]` share the
 * key `tests/test_calc/TestAdd/test_neg[1-2]`.
 *
 * Lookup of a task id: the exact key first; otherwise every reported key that ends with the task key on a segment
 * boundary (`TestAdd/negative` finds `example.com/calc/TestAdd/negative`), or that the task key ends with when the
 * reported key has two segments or more (a runner started one directory lower). Several matches give the worst of
 * their outcomes, so a looser match can make a test fail, never pass; no match is `missing`.
 */
import { worseOutcome, type GradedOutcome, type ReportedTest, type TestOutcome } from './test-report.ts';

const EXTENSION = /\.(?:py|pyi|ts|tsx|mts|cts|js|jsx|mjs|cjs|go|java|kt|rb|rs|php|cs)(?=\/|$)/g;

/** Where the file or module part of an id ends: its first `::`, ` > ` or `#`. */
const FIRST_SEPARATOR = /::| > |#/;

/** The comparison key of a test id (see the module comment). */
export function testIdKey(id: string): string {
  const trimmed = id.trim();
  const bracket = trimmed.indexOf('[');
  const sep = FIRST_SEPARATOR.exec(trimmed);
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

/** Reported outcomes by key, merged (worst outcome) across reports and duplicate entries. */
export class TestOutcomeIndex {
  readonly #byKey = new Map<string, TestOutcome>();
  readonly #byLast = new Map<string, string[]>();

  constructor(tests: Iterable<ReportedTest>) {
    for (const t of tests) this.add(t);
  }

  add(test: ReportedTest): void {
    const key = testIdKey(test.id);
    if (key === '') return;
    const prev = this.#byKey.get(key);
    if (prev === undefined) {
      const last = lastSegment(key);
      const bucket = this.#byLast.get(last);
      if (bucket) bucket.push(key);
      else this.#byLast.set(last, [key]);
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
    let found: TestOutcome | undefined;
    for (const candidate of this.#byLast.get(lastSegment(key)) ?? []) {
      const match =
        candidate.endsWith(`/${key}`) || (key.endsWith(`/${candidate}`) && segmentCount(candidate) >= 2);
      if (!match) continue;
      const outcome = this.#byKey.get(candidate)!;
      found = found === undefined ? outcome : worseOutcome(found, outcome);
    }
    return found ?? 'missing';
  }
}

function segmentCount(key: string): number {
  const bracket = key.indexOf('[');
  const head = bracket >= 0 ? key.slice(0, bracket) : key;
  return head.split('/').length;
}
