/**
 * Shell checks (commands that must exit 0 after the attempt, as an eval draft's `checks`) graded through the tests
 * path. The verdict never reads an exit code the checked code could fake, and never a file it could write:
 * `checksTestCommand` turns the checks into a test command that runs each check in its own `bash -c` (in the grading
 * tree: pristine base + the agent's diff, in the grading sandbox, stdin closed), keeps each check's exit status in a
 * variable of the grading shell (a child process cannot change it), and after the LAST check prints one result line
 * per check on stderr, tagged with the run's nonce (`fw_nonce`, read by the grading prelude from stdin and never
 * exported: the checks cannot know it). `gradeAttempt` reads the outcomes of a check task from those lines only
 * (`readCheckResults`); any file in the report directory is an integrity failure. The ids are `checks::check-<n>`,
 * listed as the task's `failToPass`.
 */

/** The JUnit classname of a check's testcase; its id is `checks::check-<n>`. */
export const CHECKS_CLASSNAME = 'checks';

/** First line of a generated checks command (this version: results on the nonce-tagged stream). */
export const CHECKS_COMMAND_MARKER = '# flywheel-checks v2';

/** Prefix of a check result line: `@@flywheel-check <nonce> check-<n> <exit status>`. */
const RESULT_TAG = '@@flywheel-check';

/** The test ids of `count` checks, in order. */
export function checkTestIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${CHECKS_CLASSNAME}::check-${i + 1}`);
}

/**
 * @example
 * const { testCommand, failToPass } = checksTestCommand(['test -f CHANGELOG.md', 'grep -q "## 1.2.0" CHANGELOG.md']);
 * // failToPass: ['checks::check-1', 'checks::check-2']
 */
export function checksTestCommand(checks: readonly string[]): { testCommand: string; failToPass: string[] } {
  const lines = [
    CHECKS_COMMAND_MARKER,
    'declare -a __fw_status=()',
    '__fw_check() {',
    '  local name="$1" cmd',
    '  cmd="$(printf %s "$2" | base64 -d)"',
    '  echo "== $name: $cmd"',
    '  bash -c "$cmd" </dev/null',
    '  __fw_status[$3]=$?',
    '}',
    ...checks.map((c, i) => `__fw_check check-${i + 1} ${Buffer.from(c, 'utf8').toString('base64')} ${i + 1}`),
    // After the last check: one line per check, tagged with the nonce only the grading shell holds.
    ...(checks.length === 0 ? [] : [`for __fw_i in ${checks.map((_, i) => i + 1).join(' ')}; do printf '\\n${RESULT_TAG} %s check-%s %s\\n' "$fw_nonce" "$__fw_i" "\${__fw_status[$__fw_i]:-none}" >&2; done`]),
  ];
  return { testCommand: lines.join('\n'), failToPass: checkTestIds(checks.length) };
}

/**
 * The checks a generated checks command runs (this version's or the earlier JUnit-writing one's), or `undefined` when
 * `testCommand` is not one. A stored task of the earlier form is graded with this version's command.
 *
 * @example
 * checksOf(checksTestCommand(['test -f A']).testCommand); // ['test -f A']
 */
export function checksOf(testCommand: string): string[] | undefined {
  const isV2 = testCommand.startsWith(`${CHECKS_COMMAND_MARKER}\n`);
  const isV1 = testCommand.startsWith('__fw_out="$FLYWHEEL_REPORT_DIR/checks-junit.xml"\n');
  if (!isV2 && !isV1) return undefined;
  const out: string[] = [];
  for (const line of testCommand.split('\n')) {
    const m = /^__fw_check check-(\d+) ([A-Za-z0-9+/=]*)(?: \d+)?$/.exec(line);
    if (!m) continue;
    if (Number(m[1]) !== out.length + 1) return undefined;
    out.push(Buffer.from(m[2]!, 'base64').toString('utf8'));
  }
  return out;
}

/**
 * The outcome of each check from the run's stderr: only lines carrying this run's nonce count; a check with no such
 * line (the run was killed, its output cut, a check killed the grading shell) is `missing`. Lines that use the tag
 * with another nonce, or name a check twice, are returned as `forged` (an integrity failure).
 *
 * @example
 * readCheckResults(run.stderr, nonce, 2); // { perTest: { 'checks::check-1': 'passed', 'checks::check-2': 'failed' }, forged: [] }
 */
export function readCheckResults(stderr: string, nonce: string, count: number): { perTest: Record<string, 'passed' | 'failed' | 'missing'>; forged: string[] } {
  const perTest: Record<string, 'passed' | 'failed' | 'missing'> = Object.fromEntries(checkTestIds(count).map((id) => [id, 'missing' as const]));
  const seen = new Set<string>();
  const forged: string[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.includes(RESULT_TAG)) continue;
    const m = /^@@flywheel-check (\S+) check-(\d+) (\S+)$/.exec(line);
    if (!m || m[1] !== nonce) {
      forged.push(`check-result-forged: a result line without this run's nonce: ${line.slice(0, 120)}`);
      continue;
    }
    const id = `${CHECKS_CLASSNAME}::check-${m[2]}`;
    if (!(id in perTest) || seen.has(id)) {
      forged.push(`check-result-forged: ${id} reported twice or unknown`);
      continue;
    }
    seen.add(id);
    perTest[id] = m[3] === '0' ? 'passed' : 'failed';
  }
  return { perTest, forged: forged.slice(0, 5) };
}
