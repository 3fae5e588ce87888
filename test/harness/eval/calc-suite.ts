/**
 * Test fixture: a real git repository with a tiny Python project whose `add` is broken, and a suite folder holding
 * one task for it (one failToPass and one passToPass test). Also the scripted replies of a correct fix and a wrong one.
 *
 * The tests run with python3 alone (no pytest needed; the sandbox exposes the host's python3 even when it lives under
 * /root), through a shell runner that writes a JUnit report into the directory it is given (the command passes
 * `"$FLYWHEEL_REPORT_DIR"`, a variable of the graded script that is not exported), as the grader asks of non-pytest
 * runners.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskInput } from '../../../lib/harness/task/task-schema.ts';
import { reply, type RecordedRequest, type ScriptStep } from '../../support/scripted-model-server.ts';
import { gitSync } from '../../support/git-fixture.ts';

const g = gitSync;

export const BUG_LINE = 'return a - b  # bug';

/** Runs each test function of test_calc.py in its own python3 and writes one JUnit report. */
const RUNNER = `#!/bin/bash
out="\${1:-.}/junit.xml"
cases=""
fails=0
for t in test_add test_sub; do
  if python3 -c "import test_calc; test_calc.$t()" >/dev/null 2>&1; then
    cases="$cases<testcase classname=\\"test_calc\\" name=\\"$t\\"/>"
  else
    fails=$((fails+1))
    cases="$cases<testcase classname=\\"test_calc\\" name=\\"$t\\"><failure message=\\"assertion failed\\"/></testcase>"
  fi
done
echo "<?xml version=\\"1.0\\"?><testsuite name=\\"calc\\" tests=\\"2\\" failures=\\"$fails\\">$cases</testsuite>" > "$out"
[ "$fails" -eq 0 ]
`;

export interface CalcSuite {
  repoDir: string;
  suiteDir: string;
  base: string;
  task: TaskInput;
}

/** Makes `<root>/repo` (a git repository, base commit plus a later commit with the fix) and `<root>/suite/calc.json`. */
export function makeCalcSuite(root: string, overrides: Partial<TaskInput> = {}): CalcSuite {
  const repoDir = join(root, 'repo');
  mkdirSync(repoDir, { recursive: true });
  g(repoDir, ['init', '-q', '-b', 'main']);
  writeFileSync(join(repoDir, 'calc.py'), `def add(a, b):\n    ${BUG_LINE}\n\n\ndef sub(a, b):\n    return a - b\n`);
  writeFileSync(
    join(repoDir, 'test_calc.py'),
    'from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(-1, 1) == 0\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n',
  );
  writeFileSync(join(repoDir, 'run_tests.sh'), RUNNER);
  g(repoDir, ['add', '-A']);
  g(repoDir, ['commit', '-q', '-m', 'base']);
  const base = g(repoDir, ['rev-parse', 'HEAD']);
  // A later commit holds the answer: strict mode must keep it out of reach.
  writeFileSync(join(repoDir, 'calc.py'), 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n');
  g(repoDir, ['commit', '-q', '-am', 'fix add']);
  const suiteDir = join(root, 'suite');
  mkdirSync(suiteDir, { recursive: true });
  const task: TaskInput = {
    schemaVersion: 1,
    id: 'calc/add',
    suite: 'calc',
    split: 'held-out',
    visibility: 'private',
    repo: { kind: 'git', url: '../repo', commit: base },
    instruction: 'add() in calc.py returns the wrong result. Fix it.',
    setupCommand: 'python3 -c "import calc"',
    testCommand: 'bash run_tests.sh "$FLYWHEEL_REPORT_DIR"',
    failToPass: ['test_calc.py::test_add'],
    passToPass: ['test_calc.py::test_sub'],
    testFiles: ['test_calc.py', 'run_tests.sh'],
    limits: { turns: 6, wallClockSeconds: 60, commandSeconds: 30 },
    ...overrides,
  };
  writeFileSync(join(suiteDir, 'calc.json'), JSON.stringify(task, null, 2));
  return { repoDir, suiteDir, base, task };
}

/** The turn of a request: how many assistant messages it already carries. */
function turnOf(body: Record<string, unknown>): number {
  return (body['messages'] as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
}

export type ScriptFn = (request: RecordedRequest, index: number) => ScriptStep;

/**
 * A model that reads calc.py, edits the bug line into `replacement` (a function of how many edits this server has
 * scripted so far, 1-based) and submits, whatever attempt it is in. `firstCommand` runs with bash before the edit.
 */
export function fixScript(replacement: string | ((edit: number) => string), options: { firstCommand?: string } = {}): ScriptFn {
  let edits = 0;
  const pre = options.firstCommand ? [reply.tool('bash', { command: options.firstCommand }, { usage: { prompt_tokens: 100, completion_tokens: 10 } })] : [];
  return (request) => {
    const turn = turnOf(request.body);
    if (turn < pre.length) return pre[turn]!;
    const t = turn - pre.length;
    if (t === 0) return reply.tool('read_file', { path: 'calc.py' }, { usage: { prompt_tokens: 100, completion_tokens: 10 } });
    if (t === 1) {
      edits++;
      const newString = typeof replacement === 'string' ? replacement : replacement(edits);
      return reply.tool('edit', { path: 'calc.py', oldString: BUG_LINE, newString }, { usage: { prompt_tokens: 120, completion_tokens: 20 } });
    }
    return reply.tool('submit', { answer: 'done' }, { usage: { prompt_tokens: 140, completion_tokens: 5 } });
  };
}

export const CORRECT_FIX = fixScript('return a + b');
export const WRONG_FIX = fixScript('return a * b');
