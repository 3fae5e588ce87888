/**
 * `go test -json` (test2json) events, one JSON object a line. A test's id is `package::Test/subtest`; its outcome is
 * its last `pass`/`fail`/`skip` event. A test that started (`run`) and never ended (a panic, a timeout) is an error.
 * A package that failed to build has no test events, so its tests are `missing` at grading. Lines that are not JSON
 * (build output mixed into stdout) are ignored.
 */
import type { ReportedTest, TestOutcome, TestReport } from './test-report.ts';

interface GoEvent {
  Action?: unknown;
  Package?: unknown;
  Test?: unknown;
  Output?: unknown;
}

const TERMINAL: Record<string, TestOutcome> = { pass: 'passed', fail: 'failed', skip: 'skipped' };

function events(text: string): GoEvent[] {
  const out: GoEvent[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (v !== null && typeof v === 'object' && typeof (v as GoEvent).Action === 'string') out.push(v as GoEvent);
    } catch {
      /* not an event */
    }
  }
  return out;
}

/** True when the text holds at least one test2json event. */
export function looksLikeGoTestJson(text: string): boolean {
  return events(text.slice(0, 64 * 1024)).length > 0;
}

/**
 * @example
 * const report = parseGoTestJson(result.stdout, 'stdout');
 */
export function parseGoTestJson(text: string, source = 'go-test.json'): TestReport {
  const state = new Map<string, TestOutcome | 'running'>();
  for (const e of events(text)) {
    if (typeof e.Test !== 'string' || e.Test === '') continue;
    const id = `${typeof e.Package === 'string' ? e.Package : ''}::${e.Test}`;
    const action = e.Action as string;
    if (action === 'run' && !state.has(id)) state.set(id, 'running');
    const terminal = TERMINAL[action];
    if (terminal) state.set(id, terminal);
  }
  const tests: ReportedTest[] = [...state].map(([id, s]) => ({ id, outcome: s === 'running' ? 'error' : s, ...(s === 'running' ? { message: 'started but never finished' } : {}) }));
  return { format: 'go-test-json', source, tests };
}
