import { describe, expect, it } from 'vitest';
import { deriveFilterCommand } from '../../../lib/forge/runner/derive-filter.ts';
import { withReporterFlags } from '../../../lib/forge/runner/reporter-flags.ts';
import { inferRunnerKind } from '../../../lib/forge/runner/runner-invocation.ts';
import { shellTokens } from '../../../lib/forge/runner/shell-words.ts';
import { fillFilter } from '../../../lib/forge/run-suite.ts';
import { NODE_TEST_COMMAND } from '../support/forge-fixtures.ts';

const values = (command: string) => shellTokens(command)?.map((t) => (t.kind === 'word' ? t.value : t.kind));

describe('shellTokens', () => {
  it('splits words, removes quotes, keeps && and redirections, and refuses what it cannot take apart', () => {
    expect(values(`cd 'my pkg' && PYTHONPATH=src python3 -m pytest -q "tests dir" a\\ b`)).toEqual(['cd', 'my pkg', 'and', 'PYTHONPATH=src', 'python3', '-m', 'pytest', '-q', 'tests dir', 'a b']);
    expect(values(`go test -json ./... > "$FLYWHEEL_REPORT_DIR/go.json" 2>&1`)).toEqual(['go', 'test', '-json', './...', 'redirect', 'redirect']);
    expect(values(`npx vitest run '$(not expanded)'`)).toEqual(['npx', 'vitest', 'run', '$(not expanded)']);
    for (const refused of ['pytest | tee log', 'pytest; echo', 'pytest || true', 'pytest &', 'echo $(pwd)', 'echo `pwd`', '(cd a && pytest)', `pytest 'unclosed`, 'pytest # comment']) {
      expect(shellTokens(refused), refused).toBeUndefined();
    }
  });
});

describe('deriveFilterCommand', () => {
  it('keeps env, cd, interpreter and options, and replaces the positional test paths by {files}', () => {
    expect(deriveFilterCommand('PYTHONPATH=src python3 -m pytest -q tests', 'pytest')).toBe('PYTHONPATH=src python3 -m pytest -q {files}');
    expect(deriveFilterCommand(`python -m pytest tests/unit -q -k 'not slow' -p no:cacheprovider tests/more`, 'pytest')).toBe(`python -m pytest -q -k 'not slow' -p no:cacheprovider {files}`);
    expect(deriveFilterCommand('cd pkg && PYTHONPATH=src python -m pytest -q --rootdir=.. tests', 'pytest')).toBe('cd pkg && PYTHONPATH=src python -m pytest -q --rootdir=.. {files}');
    expect(deriveFilterCommand('pytest', 'pytest')).toBe('pytest {files}');
    expect(deriveFilterCommand('uv run pytest -x -- tests', 'pytest')).toBe('uv run pytest -x -- {files}');
    expect(deriveFilterCommand(NODE_TEST_COMMAND, 'node-test')).toBe(NODE_TEST_COMMAND.replace(` 'test/**/*.test.ts'`, ' {files}'));
    expect(deriveFilterCommand('npx vitest run --reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json" test/unit', 'vitest')).toBe('npx vitest run --reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json" {files}');
    expect(deriveFilterCommand('npx jest --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json" --config jest.config.js 2>&1', 'jest')).toBe('npx jest --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json" --config jest.config.js --runTestsByPath {files} 2>&1');
    expect(deriveFilterCommand('npm run build && npm test -- --reporter=json', 'vitest')).toBe('npm run build && npm test -- --reporter=json {files}');
    expect(deriveFilterCommand('npm test', 'jest')).toBe('npm test -- --runTestsByPath {files}');
  });

  it('gives go its packages ({dirs}) and stops at -args', () => {
    expect(deriveFilterCommand('go test -json -run TestAdd ./... > "$FLYWHEEL_REPORT_DIR/go.json"', 'go')).toBe('go test -json -run TestAdd {dirs} > "$FLYWHEEL_REPORT_DIR/go.json"');
    expect(deriveFilterCommand('go test -json ./pkg/... -args -update', 'go')).toBe('go test -json {dirs} -args -update');
  });

  it('refuses commands it cannot take apart, another runner, and other', () => {
    expect(deriveFilterCommand('python -m pytest -q | tee log', 'pytest')).toBeUndefined();
    expect(deriveFilterCommand('pytest; echo done', 'pytest')).toBeUndefined();
    expect(deriveFilterCommand('make test', 'pytest')).toBeUndefined();
    expect(deriveFilterCommand('npx vitest run', 'jest')).toBeUndefined();
    expect(deriveFilterCommand('pytest', 'other')).toBeUndefined();
  });
});

describe('withReporterFlags', () => {
  it('adds the reporter a runner needs, after its subcommand, and runs bare vitest once', () => {
    const vitestFlags = '--reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"';
    expect(withReporterFlags('npx vitest run test/a', 'vitest').command).toBe(`npx vitest run ${vitestFlags} test/a`);
    expect(withReporterFlags('npx vitest', 'vitest').command).toBe(`npx vitest run ${vitestFlags}`);
    expect(withReporterFlags('cd web && npx vitest run', 'vitest').command).toBe(`cd web && npx vitest run ${vitestFlags}`);
    expect(withReporterFlags('npx jest --ci', 'jest').command).toBe('npx jest --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json" --ci');
    expect(withReporterFlags('node --import tsx --test test/', 'node-test').command).toBe('node --import tsx --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" test/');
    expect(withReporterFlags('go test ./...', 'go').command).toBe('go test -json ./...');
    expect(withReporterFlags('npm test', 'vitest', 'vitest').command).toBe(`npm test -- ${vitestFlags}`);
    expect(withReporterFlags('npm run test -- --ci', 'jest', 'jest').command).toBe('npm run test -- --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json" --ci');
  });

  it('puts the flags straight after the script name for yarn, pnpm and bun run (they pass a `--` on to the runner)', () => {
    const vitestFlags = '--reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"';
    expect(withReporterFlags('pnpm test', 'vitest', 'vitest run').command).toBe(`pnpm test ${vitestFlags}`);
    expect(withReporterFlags('yarn test --coverage', 'vitest', 'vitest run').command).toBe(`yarn test ${vitestFlags} --coverage`);
    expect(withReporterFlags('cd web && bun run test', 'vitest', 'vitest run').command).toBe(`cd web && bun run test ${vitestFlags}`);
    expect(deriveFilterCommand(`pnpm test ${vitestFlags}`, 'vitest')).toBe(`pnpm test ${vitestFlags} {files}`);
    expect(deriveFilterCommand('yarn run test', 'jest')).toBe('yarn run test --runTestsByPath {files}');
    // `bun test` is bun's own runner, not the package's test script.
    expect(withReporterFlags('bun test', 'vitest', 'vitest run').note).toMatch(/no reporter flags added/);
  });

  it('leaves pytest and commands that already report readably alone, and says when it cannot tell', () => {
    expect(withReporterFlags('python -m pytest -q', 'pytest')).toEqual({ command: 'python -m pytest -q' });
    expect(withReporterFlags('npx vitest run --reporter json', 'vitest')).toEqual({ command: 'npx vitest run --reporter json' });
    expect(withReporterFlags('npm test', 'jest', 'jest --json')).toEqual({ command: 'npm test' });
    expect(withReporterFlags(NODE_TEST_COMMAND, 'node-test')).toEqual({ command: NODE_TEST_COMMAND });
    expect(withReporterFlags('go test -json ./...', 'go')).toEqual({ command: 'go test -json ./...' });
    expect(withReporterFlags('node --test --test-reporter=tap', 'node-test').note).toMatch(/its own --test-reporter \(tap\)/);
    expect(withReporterFlags('npx vitest run | tee log', 'vitest').note).toMatch(/no reporter flags added/);
  });
});

describe('inferRunnerKind', () => {
  it('reads the runner from the command, through npm test from the script kind', () => {
    expect(inferRunnerKind('PYTHONPATH=src python3 -m pytest -q')).toBe('pytest');
    expect(inferRunnerKind('cd web && npx vitest run')).toBe('vitest');
    expect(inferRunnerKind('npx jest --ci')).toBe('jest');
    expect(inferRunnerKind('node --import tsx --test')).toBe('node-test');
    expect(inferRunnerKind('go test ./...')).toBe('go');
    expect(inferRunnerKind('npm test', 'vitest')).toBe('vitest');
    expect(inferRunnerKind('npm test')).toBe('other');
    expect(inferRunnerKind('pytest -q | tee log')).toBe('pytest');
    expect(inferRunnerKind('make test')).toBe('other');
  });
});

describe('fillFilter', () => {
  it('quotes files, makes them relative to a leading cd folder, and gives go their folders', () => {
    expect(fillFilter('cd web && npx vitest run {files}', ['web/test/a.test.ts', 'test/b.test.ts'])).toBe(`cd web && npx vitest run 'test/a.test.ts' 'test/b.test.ts'`);
    expect(fillFilter(`cd 'packages/py' && python -m pytest {files}`, ['packages/py/tests/test_a.py'])).toBe(`cd 'packages/py' && python -m pytest 'tests/test_a.py'`);
    expect(fillFilter('go test -json {dirs}', ['calc/add_test.go', 'calc/sub_test.go', 'main_test.go'])).toBe(`go test -json '.' './calc'`);
    expect(fillFilter('pytest {files}', ['web/test_a.py'])).toBe(`pytest 'web/test_a.py'`);
    expect(fillFilter('cd "my web" && npx vitest run {files}', ['my web/test/a.test.ts'])).toBe(`cd "my web" && npx vitest run 'test/a.test.ts'`);
  });
});
