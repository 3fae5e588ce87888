/**
 * Small real repositories for the forge tests, made on disk by the tests (TypeScript run by node's own test runner
 * with its JUnit reporter, and Python run by pytest), plus a sandbox provider: the namespace sandbox with a per-session
 * counter in the environment (what makes a test flaky on purpose).
 */
import { writeGitRepo } from '../../support/git-fixture.ts';
import type { SandboxProvider, SandboxSession, SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import type { ForgeCandidate } from '../../../lib/forge/certify-candidate.ts';
import type { SuiteRun } from '../../../lib/forge/run-suite.ts';
import { testIdKey } from '../../../lib/harness/grading/test-id.ts';

export function writeRepo(files: Record<string, string>, options: { git?: boolean } = {}): Promise<string> {
  return writeGitRepo(files, { ...options, prefix: 'fw-forge-fixture-', message: 'initial' });
}

export const CALC_TS = `/** Adds two numbers. */
export function add(a: number, b: number): number {
  const sum = a + b;
  return sum;
}

/** Multiplies by repeated addition. */
export function multiply(a: number, b: number): number {
  let product = 0;
  for (let i = 0; i < b; i++) product = add(product, a);
  return product;
}

/** Reverses a string; no test calls it. */
export function reverseText(text: string): string {
  return text.split('').reverse().join('');
}
`;

export const SHARED_TS = `/** A tiny key-value registry every test file imports. */
export class Registry {
  items = new Map<string, number>();
  set(key: string, value: number): void {
    this.items.set(key, value);
  }
  get(key: string): number | undefined {
    return this.items.get(key);
  }
}
`;

export const STRINGS_TS = `export function shout(text: string): string {
  return text.toUpperCase() + '!';
}
`;

/** JUnit for the per-test results, and the spec reporter on stderr so a failed import's cause is in the log. */
export const NODE_TEST_COMMAND = `node --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" --test-reporter=spec --test-reporter-destination=stderr 'test/**/*.test.ts'`;

/** The TypeScript repository: calc (add, multiply, an untested function), a shared class every test imports, strings, and a flaky test. */
export function tsRepoFiles(options: { flaky?: boolean; staleBuildInfo?: boolean } = {}): Record<string, string> {
  return {
    'package.json': '{ "name": "calc-ts", "type": "module", "private": true }\n',
    // A stale compiler artefact committed by mistake, holding add's body: a task tree must not carry it.
    ...(options.staleBuildInfo ? { 'tsconfig.tsbuildinfo': '{"program":{"fileInfos":{"./src/calc.ts":{"text":"  const sum = a + b;\\n  return sum;"}}}}\n  const sum = a + b;\n' } : {}),
    'src/calc.ts': CALC_TS,
    'src/shared.ts': SHARED_TS,
    'src/strings.ts': STRINGS_TS,
    'test/calc.test.ts': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add, multiply } from '../src/calc.ts';
import { Registry } from '../src/shared.ts';

test('add adds', () => {
  assert.equal(add(2, 3), 5);
});
test('multiply multiplies', () => {
  assert.equal(multiply(4, 3), 12);
});
test('registry keeps values', () => {
  const r = new Registry();
  r.set('a', 1);
  assert.equal(r.get('a'), 1);
});
`,
    'test/strings.test.ts': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shout } from '../src/strings.ts';
import { Registry } from '../src/shared.ts';

// FORGE_ROT stands for the world moving under a suite (a dependency upgraded): re-certification must notice.
test('shout shouts', () => {
  assert.equal(shout(process.env.FORGE_ROT ? 'ho' : 'hi'), 'HI!');
});
test('registry starts empty', () => {
  assert.equal(new Registry().get('x'), undefined);
});
`,
    ...(options.flaky
      ? {
          'test/flaky.test.ts': `import { test } from 'node:test';
import assert from 'node:assert/strict';

test('sometimes passes', () => {
  assert.equal(Number(process.env.FORGE_SESSION ?? '0') % 2, 0);
});
`,
        }
      : {}),
  };
}

/** Replaces one function's body with a "not implemented" error, as the body-removal strategy does. */
export function stubBody(source: string, signature: string, body: string, stub = "  throw new Error('not implemented');\n"): string {
  if (!source.includes(signature + body)) throw new Error(`fixture: ${signature} not found`);
  return source.replace(signature + body, signature + stub);
}

export function candidate(c: Partial<ForgeCandidate> & Pick<ForgeCandidate, 'id' | 'edits'>): ForgeCandidate {
  return { strategy: 'remove-function-body', symbols: [], ...c };
}

/** The namespace sandbox, with `FORGE_SESSION=<n>` (a counter) in each session's environment. */
export class CountingProvider implements SandboxProvider {
  sessions = 0;
  /** More environment for every session (what a changed world looks like to a suite). */
  extraEnv: Record<string, string> = {};
  readonly inner: SandboxProvider;
  constructor(inner: SandboxProvider) {
    this.inner = inner;
  }
  open(spec: SandboxSpec): Promise<SandboxSession> {
    const n = this.sessions++;
    return this.inner.open({ ...spec, env: { ...spec.env, ...this.extraEnv, FORGE_SESSION: String(n) } });
  }
}

/** The Python repository; `stalePyc` adds a committed `__pycache__` file holding discount's body (as bytecode would). */
export function pythonRepoFiles(options: { stalePyc?: boolean } = {}): Record<string, string> {
  return {
    ...(options.stalePyc ? { 'shop/__pycache__/prices.cpython-312.pyc': '\u0000\u0000co_code    reduced = price * (100 - percent) / 100\n\u0000' } : {}),
    'pyproject.toml': '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    'shop/__init__.py': 'from shop.cart import Cart\nfrom shop.prices import discount, tax\n',
    'shop/prices.py': `def discount(price, percent):
    """Price after a percentage discount, rounded to cents."""
    reduced = price * (100 - percent) / 100
    return round(reduced, 2)


def tax(price, rate=0.2):
    return round(price * (1 + rate), 2)


def unused_helper(values):
    total = sum(v * v for v in values)
    return total
`,
    'shop/cart.py': `from shop.prices import discount


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, price, qty=1):
        self.lines.append((price, qty))

    def total(self, percent=0):
        gross = sum(p * q for p, q in self.lines)
        return discount(gross, percent)
`,
    'tests/test_prices.py': `from shop.prices import discount, tax


def test_discount():
    assert discount(100, 10) == 90.0


def test_tax():
    assert tax(10) == 12.0
`,
    'tests/test_cart.py': `from shop import Cart


def test_cart_total():
    c = Cart()
    c.add(10, 2)
    assert c.total() == 20


def test_cart_discount():
    c = Cart()
    c.add(50)
    assert c.total(50) == 25.0
`,
  };
}

/** A suite run as certification reads it, from `[id, outcome, message?]` rows (for the pure classification checks). */
export function runOf(tests: Array<[string, 'passed' | 'failed' | 'error', string?]>, log = ''): SuiteRun {
  return {
    tests: new Map(tests.map(([id, outcome, message]) => [testIdKey(id), { id, outcome, ...(message ? { message } : {}) }])),
    reports: [],
    files: [],
    workdir: '/w',
    problems: [],
    exitCode: 1,
    timedOut: false,
    durationMs: 1,
    log,
  };
}
