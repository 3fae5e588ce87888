/**
 * The verdict channel for pytest: results the code under test cannot write after the fact.
 *
 * How it runs. `pytestStreamPrelude()` defines shell functions `python3`, `python`, `pytest` and `py.test` in the
 * graded script (not exported, so only the task's command line sees them): `python3 -m pytest …` and `pytest …`
 * start `python3 -I -c <launcher>` instead, the launcher (`pytest-stream/flywheel_pytest_stream.py`) travelling in
 * the command line itself — no file in the workspace, nothing to bind, nothing the code can edit. `-I` keeps the
 * workspace off `sys.path` while pytest, `_pytest` and pluggy are imported (a repository `pytest.py`, `_pytest/`,
 * `sitecustomize.py` or `.pth` cannot stand in for them); the workspace and PYTHONPATH are put on `sys.path` only
 * afterwards, as `python -m pytest` would have. The per-run nonce and the session's JUnit path come on stdin, never in
 * argv or the environment (the grader's own `--junitxml` is taken out of PYTEST_ADDOPTS for the launcher).
 * `--check-hash-based-pycs always` makes Python check every hash-based `.pyc` against its source, so an
 * unchecked-hash `.pyc` in the tree (grading already drops those from the diff: `compiled-files.ts`) cannot stand
 * in for its module; timestamp `.pyc`s are checked against the source's mtime and size anyway, and the launcher
 * writes no bytecode. (A fresh `pycache_prefix` would also ignore every cache of the environment's own packages and
 * recompile them on every graded run; the check above closes the hole without that cost.)
 *
 * What it writes. One line per test phase (`setup`, `call`, `teardown`), as the phase finishes, to a duplicate of
 * stderr taken before pytest captures anything: `@@flywheel-stream <nonce> {json}`, plus a header (which pytest
 * ran), an end line (exit status, SHA-256 of the JUnit file pytest just wrote) and `tamper` lines when pytest's
 * machinery was patched (identity of TestReport, CallInfo, the runner, terminal and JUnit hooks, pluggy, sys.exit,
 * os._exit, atexit.register), when a report says `passed` for a phase that raised, or when the JUnit file changed
 * after the session. Bytes already in the pipe cannot be taken back: the grader keeps the FIRST outcome of each
 * test phase, so an exit hook or a background process can only append (and what it appends is a disagreement).
 *
 * The guard. Before anything of the workspace can be imported, the launcher installs an audit hook
 * (`sys.addaudithook`: Python code cannot remove one). The baseline of the watched functions lives only in the hook's
 * closure, as tuples built in a frame that has returned, and nothing but the interpreter's hook list refers to the
 * hook: walking the frames up to the launcher (`sys._getframe`, `f_back`, `f_locals`) finds no baseline to rewrite.
 * The plugin asks for the comparison with `sys.audit('flywheel.check', …)` before each report line and at the end
 * (and the interpreter's own `cpython._PySys_ClearAuditHooks` runs it once more); the hook also checks that the
 * launcher's closures still hold what they held. On its own it reports, framed with the nonce and at the moment the
 * event fires, workspace (or unknown) code that reaches for frames (`sys._getframe` — also through `inspect` /
 * `traceback` helpers —, `sys._current_frames`, `tb_frame`, `gi_frame`), sets a trace or profile function, rewrites
 * the code or defaults of runner and launcher functions (`object.__setattr__`), lists live objects
 * (`gc.get_objects`/`get_referrers`/`get_referents`), reads or writes raw memory through ctypes (`from_address`,
 * `string_at`, `memmove`, `pythonapi` symbols), or opens `/proc/self/mem`, `/proc/self/fd`, `/dev/fd`. Code of the
 * environment (stdlib, site-packages, the import roots and PYTHONPATH outside the workspace) is not reported. Each
 * such line names the file whose code raised it and is `soft`: from a file of the base tree the diff did not touch it
 * is a note (libraries read frames for their own ends, memory-leak tests walk `gc`), from any other file (the agent's,
 * or one written during the run) tampering.
 *
 * What the grader checks (`checkPytestStream`): the nonce of every stream line; the runner's file is not in the
 * workspace; no tamper line; every session ended; the JUnit file has the hash the session reported and names the
 * same outcomes; pytest's own terminal summary counts the same passes and failures. Any failure is an integrity
 * failure: the attempt fails, whatever the reports say. Once a session streamed, the task's pytest ids take their
 * outcome from the stream only (`grade-attempt.ts`): a file in the report directory that no session wrote, or a
 * report naming an id no session ran, is an integrity failure (`report-planted`), and sessions that ran fewer tests
 * than the task names fail the attempt.
 *
 * What it does not defend against. Code imported by the tests runs in pytest's process, so a determined attacker who
 * targets the launcher itself can still forge: read the nonce from the plugin's closures (reached without a frame
 * or `gc`: through pytest's plugin manager), dup2 a pipe of its own onto the stream's descriptor (`os.dup2` raises no
 * audit event) and rewrite lines, swallow exceptions inside the test functions it imports, patch a watched class
 * attribute (no audit event either) and restore it before the next check, or reach frames through a stdlib helper
 * the hook does not know. The audit hook and the closure-held baseline raise the bar, and the static flags name the
 * usual routes (`runner-patching`: `_pytest`, `TestReport`, `__main__`, `_fw_*`, `sys._getframe`, `f_locals`,
 * `f_back`, `gc.get_objects`/`get_referrers`, ctypes memory primitives, `/proc/self/fd`; `runner-shadowing`;
 * `report-tampering`), but in-process forgery is not
 * impossible: that would take running the tests in a separate process from the code they import, which pytest does
 * not do. What the channel does guarantee: nothing written after a test phase finished (exit hooks, background
 * processes, rewritten or planted report files, printed fake summaries) changes that phase's outcome unnoticed, and
 * a module in the workspace cannot replace the runner. Commands that start pytest
 * other than from the task's command line (`make test`, `tox`, `exec pytest`, `timeout 60 pytest`) run without
 * the stream and are graded from their reports as before; the grade says so (`channel.kind: 'reports'`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseJunitXml } from './parse-junit-xml.ts';
import type { ReportFile } from './read-test-reports.ts';
import { TestOutcomeIndex } from './test-id.ts';
import { PYTEST_JUNIT_FILE } from './test-runner.ts';
import { worseOutcome, type ReportedTest, type TestOutcome, type TestReport } from './test-report.ts';

/** The launcher's Python source (run with `python -I -c`). */
export const PYTEST_STREAM_SOURCE = readFileSync(new URL('./pytest-stream/flywheel_pytest_stream.py', import.meta.url), 'utf8');

const MARK = '@@flywheel-stream ';

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Name of the JUnit file of the n-th pytest session of a graded run, in the report directory. */
export function streamJunitName(n: number): string {
  return `pytest-stream-${n}.xml`;
}

/**
 * Shell lines (after `gradingPrelude`) that read the nonce from stdin and route the task command's pytest runs
 * through the isolated launcher. `$FLYWHEEL_REPORT_DIR` must be set (as a shell variable) before.
 */
export function pytestStreamPrelude(): string {
  return [
    'IFS= read -r fw_nonce || true',
    `fw_src=${shellQuote(PYTEST_STREAM_SOURCE)}`,
    'fw_n=0',
    `fw_junit_opt="--junitxml=$FLYWHEEL_REPORT_DIR/${PYTEST_JUNIT_FILE}"`,
    // The JUnit path goes on stdin after the nonce, and the grader's own `--junitxml` leaves PYTEST_ADDOPTS: neither
    // argv nor the environment of the run names the report directory.
    'fw_pytest_run() { local py="$1" mode="$2"; shift 2; fw_n=$((fw_n+1)); PYTEST_ADDOPTS="${PYTEST_ADDOPTS//"$fw_junit_opt"/}" command "$py" -I --check-hash-based-pycs always -c "$fw_src" "$mode" "$@" <<<"$fw_nonce"$\'\\n\'"$FLYWHEEL_REPORT_DIR/pytest-stream-$fw_n.xml"; }',
    'fw_py_dispatch() { local py="$1"; shift; local orig=("$@"); while [ $# -gt 0 ]; do case "$1" in -B|-u|-b|-bb|-q|-s|-S|-E|-O|-OO|-I|-P) shift ;; *) break ;; esac; done',
    '  if [ "${1-}" = -m ] && { [ "${2-}" = pytest ] || [ "${2-}" = py.test ]; }; then shift 2; fw_pytest_run "$py" m "$@"; else command "$py" "${orig[@]}"; fi; }',
    'python3() { fw_py_dispatch python3 "$@"; }',
    'python() { fw_py_dispatch python "$@"; }',
    // `pytest` runs with the interpreter its script names (`#!/venv/bin/python3`), else python3, else python.
    'fw_pytest_script() { local py=python3 exe she; exe=$(type -P pytest 2>/dev/null || true)',
    '  if [ -f "$exe" ]; then IFS= read -r she < "$exe" || true; she=${she#\\#!}; she=${she%% *}; case "$she" in /*python*) [ -x "$she" ] && py=$she ;; esac; fi',
    '  [ "$py" = python3 ] && ! command -v python3 >/dev/null 2>&1 && py=python; fw_pytest_run "$py" s "$@"; }',
    'pytest() { fw_pytest_script "$@"; }',
    'py.test() { fw_pytest_script "$@"; }',
  ].join('\n');
}

interface PhaseLine {
  id: string;
  when: string;
  outcome: string;
  raw: string | null;
  xfail?: boolean;
}

export interface StreamSession {
  header: { pytest: string; writable?: boolean; version: string; python: string; cwd: string; mode: string; junit: string };
  end?: { exitstatus: number; junitSha256: string | null };
  exited: boolean;
  /** First line of each (test, phase), in arrival order. */
  phases: PhaseLine[];
}

export interface ParsedStream {
  sessions: StreamSession[];
  /** Tamper lines and stream anomalies: each one an integrity failure. */
  tamper: string[];
  /** Things worth a look that prove nothing (`exit-hook:calc/__init__.py`). */
  notes: string[];
  /**
   * Tamper lines of the launcher's audit hook (marked `soft`), with the file whose code raised them: tampering when
   * that file is the agent's (the diff touched it, or the base tree has no such file), only a note when it is the
   * repository's own, untouched code (libraries use `sys._getframe` for their own ends, leak tests walk `gc`).
   */
  located: Array<{ text: string; file: string }>;
}

/** Reads the stream lines of one graded run (from stderr). */
export function parsePytestStream(text: string, nonce: string): ParsedStream {
  const out: ParsedStream = { sessions: [], tamper: [], notes: [], located: [] };
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(MARK)) continue;
    const rest = line.slice(MARK.length);
    const space = rest.indexOf(' ');
    const got = space < 0 ? rest : rest.slice(0, space);
    if (got !== nonce) {
      out.tamper.push(`stream line with a wrong nonce: ${line.slice(0, 120)}`);
      continue;
    }
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(rest.slice(space + 1)) as Record<string, unknown>;
    } catch {
      out.tamper.push(`unreadable stream line: ${line.slice(0, 120)}`);
      continue;
    }
    const current = out.sessions.at(-1);
    switch (obj['t']) {
      case 'header':
        out.sessions.push({ header: obj as unknown as StreamSession['header'], exited: false, phases: [] });
        seen.clear();
        break;
      case 'r': {
        if (!current || current.end) {
          out.tamper.push(`test report outside a pytest session: ${String(obj['id'])}`);
          break;
        }
        const key = `${String(obj['id'])}\0${String(obj['when'])}`;
        const phase: PhaseLine = { id: String(obj['id']), when: String(obj['when']), outcome: String(obj['outcome']), raw: obj['raw'] === null || obj['raw'] === undefined ? null : String(obj['raw']), ...(obj['xfail'] ? { xfail: true } : {}) };
        if (seen.has(key)) {
          const first = current.phases.find((p) => p.id === phase.id && p.when === phase.when);
          if (first && first.outcome !== phase.outcome) out.tamper.push(`${phase.id} (${phase.when}) reported ${first.outcome}, then ${phase.outcome}`);
          break;
        }
        seen.add(key);
        current.phases.push(phase);
        break;
      }
      case 'end':
        if (current && !current.end) current.end = { exitstatus: Number(obj['exitstatus']), junitSha256: typeof obj['junitSha256'] === 'string' ? obj['junitSha256'] : null };
        else out.tamper.push('a second end of a pytest session');
        break;
      case 'exit':
        if (current) current.exited = true;
        break;
      case 'tamper': {
        const text = `${String(obj['what'])}${obj['detail'] ? ` (${String(obj['detail'])})` : ''}${typeof obj['file'] === 'string' && obj['file'] ? ` in ${obj['file']}` : ''}`;
        if (obj['soft'] === true && typeof obj['file'] === 'string' && obj['file'] !== '') out.located.push({ text, file: obj['file'] });
        else out.tamper.push(text);
        break;
      }
      case 'note':
        out.notes.push(String(obj['what']));
        break;
      default:
        break;
    }
  }
  return out;
}

function phaseOutcome(p: PhaseLine): TestOutcome {
  if (p.outcome === 'passed') return 'passed';
  if (p.outcome === 'skipped') return 'skipped';
  return p.when === 'call' ? 'failed' : 'error';
}

/** Each test's outcome over its phases (the worst; an xfail is skipped, an xpass passed, as pytest's JUnit says). */
export function streamTests(sessions: readonly StreamSession[]): ReportedTest[] {
  const byId = new Map<string, TestOutcome>();
  for (const s of sessions) {
    const mine = new Map<string, TestOutcome>();
    const whens = new Map<string, Set<string>>();
    for (const p of s.phases) {
      const o = phaseOutcome(p);
      const prev = mine.get(p.id);
      mine.set(p.id, prev === undefined ? o : worseOutcome(prev, o));
      whens.set(p.id, (whens.get(p.id) ?? new Set()).add(p.when));
    }
    // A test passes only when its run is complete: a call (unless setup already failed or skipped) and a teardown.
    // One cut short (os._exit in the test, a crash) is an error, never a pass.
    for (const [id, o] of mine) {
      const w = whens.get(id)!;
      if (o === 'passed' && (!w.has('call') || !w.has('teardown'))) mine.set(id, 'error');
      else if (o === 'skipped' && !w.has('teardown')) mine.set(id, 'error');
    }
    for (const [id, o] of mine) {
      const prev = byId.get(id);
      byId.set(id, prev === undefined ? o : worseOutcome(prev, o));
    }
  }
  return [...byId].map(([id, outcome]) => ({ id, outcome }));
}

const SUMMARY = /^(?:=+ )?((?:\d+ \w+(?:, )?)+) in [\d.]+s(?: \([^)]*\))?(?: =+)?$/;

/** pytest's closing `… 2 failed, 3 passed in 0.12s …` lines, parsed to counts. */
function terminalSummaries(stdout: string): Array<Record<string, number>> {
  const out: Array<Record<string, number>> = [];
  for (const raw of stdout.split(/\r?\n/)) {
    const m = SUMMARY.exec(raw.trim());
    if (!m) continue;
    const counts: Record<string, number> = {};
    for (const part of m[1]!.split(', ')) {
      const [n, word] = part.split(' ');
      counts[word!] = Number(n);
    }
    out.push(counts);
  }
  return out;
}

export interface StreamCheck {
  /** The verdict's report: each test's outcome from the stream. */
  report: TestReport;
  /** Integrity failures: the verdict cannot be trusted. */
  integrity: string[];
  /** Reasons the run failed that are not tampering (a session that never ended). */
  failures: string[];
  /** Notes for review (exit hooks registered by workspace code, plugins loaded from the workspace). */
  notes: string[];
  /** Report files the stream accounted for (the sessions' JUnit files), left out of the other reports. */
  junitFiles: string[];
  /** The runner file of every session. */
  runners: string[];
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Cross-checks a parsed stream against the JUnit files and pytest's terminal summary of the same run. `baseFiles`:
 * workspace files of the base tree the diff did not touch, whose soft tamper lines (frame access) are only notes.
 *
 * @example
 * const check = checkPytestStream({ stream: parsePytestStream(run.stderr, nonce), files: run.reports, stdout: run.stdout, workdir: run.workdir });
 */
export function checkPytestStream(input: { stream: ParsedStream; files: readonly ReportFile[]; stdout: string; workdir: string; baseFiles?: ReadonlySet<string> }): StreamCheck {
  const { stream } = input;
  const integrity = [...stream.tamper];
  const notes = [...stream.notes];
  // Soft tamper lines: a note when raised by the repository's own untouched code, tampering otherwise.
  for (const l of stream.located) {
    if (input.baseFiles?.has(l.file)) notes.push(`audit:${l.text}`);
    else integrity.push(l.text);
  }
  const failures: string[] = [];
  const junitFiles: string[] = [];
  const root = input.workdir.replace(/\/+$/, '');
  for (const [i, s] of stream.sessions.entries()) {
    const runner = s.header.pytest ?? '';
    if ((runner === root || runner.startsWith(`${root}/`)) && s.header.writable !== false) integrity.push(`runner-shadowed: pytest was imported from the workspace (${runner})`);
    if (!s.end) {
      failures.push(`test-stream-incomplete: pytest session ${i + 1} ended without its end line (crash, os._exit or killed)`);
      continue;
    }
    const name = s.header.junit ? basename(s.header.junit) : '';
    const file = name ? input.files.find((f) => basename(f.name) === name) : undefined;
    if (file) junitFiles.push(file.name);
    if (s.end.junitSha256 && !file) integrity.push(`junit-removed: ${name} was written by session ${i + 1} and is gone`);
    if (file && s.end.junitSha256 && sha256(file.content) !== s.end.junitSha256) integrity.push(`junit-rewritten: ${name} changed after pytest session ${i + 1} ended`);
    if (file) {
      let junit: TestReport | undefined;
      try {
        junit = parseJunitXml(file.content, file.name);
      } catch (error) {
        integrity.push(`junit-unreadable: ${name}: ${(error as Error).message}`);
      }
      if (junit) {
        const mine = streamTests([s]);
        const fromStream = new TestOutcomeIndex(mine);
        const fromJunit = new TestOutcomeIndex(junit.tests);
        const disagree: string[] = [];
        for (const t of mine) {
          const j = fromJunit.lookup(t.id);
          if (j !== t.outcome) disagree.push(`${t.id}: stream ${t.outcome}, junit ${j}`);
        }
        for (const t of junit.tests) {
          if (fromStream.lookup(t.id) === 'missing') disagree.push(`${t.id}: junit ${t.outcome}, not in the stream`);
        }
        if (disagree.length > 0) integrity.push(`report-disagreement: ${name}: ${disagree.slice(0, 5).join('; ')}${disagree.length > 5 ? ` … ${disagree.length - 5} more` : ''}`);
      }
    }
  }
  // pytest's own closing line of each session, against the stream's count of passed and failed calls.
  const summaries = terminalSummaries(input.stdout);
  const ended = stream.sessions.filter((s) => s.end);
  if (ended.length > 0 && summaries.length >= ended.length) {
    const last = summaries.slice(-ended.length);
    const said = { passed: 0, failed: 0 };
    for (const c of last) {
      said.passed += c['passed'] ?? 0;
      said.failed += c['failed'] ?? 0;
    }
    const counted = { passed: 0, failed: 0 };
    for (const s of ended) {
      for (const p of s.phases) {
        if (p.when !== 'call') continue;
        if (p.outcome === 'passed' && !p.xfail) counted.passed++;
        if (p.outcome === 'failed') counted.failed++;
      }
    }
    if (said.passed !== counted.passed || said.failed !== counted.failed) {
      integrity.push(`runner-summary-disagreement: pytest printed ${said.passed} passed, ${said.failed} failed; the stream has ${counted.passed} passed, ${counted.failed} failed`);
    }
  }
  return {
    report: { format: 'pytest-stream', source: 'stream', tests: streamTests(stream.sessions) },
    integrity,
    failures,
    notes,
    junitFiles,
    runners: stream.sessions.map((s) => s.header.pytest),
  };
}
