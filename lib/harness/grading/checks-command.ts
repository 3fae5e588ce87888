/**
 * Shell checks (commands that must exit 0 after the attempt, as an eval draft's `checks`) graded through the tests
 * path. The verdict never reads an exit code, only reports, so a bare `a && b` test command would grade nothing
 * (`no-tests-to-grade`). `checksTestCommand` turns the checks into a test command that runs each check in its own
 * `bash -c` (in the grading tree: pristine base + the agent's diff, in the grading sandbox) and writes one JUnit
 * testcase per check into `$FLYWHEEL_REPORT_DIR` (`checks::check-1` passed when it exited 0, failed otherwise), and
 * the ids the task lists as `failToPass`. A check's output goes to the test log; the checks themselves are kept on
 * the task's metadata in words.
 */

/** The JUnit classname of a check's testcase; its id is `checks::check-<n>`. */
export const CHECKS_CLASSNAME = 'checks';

/** The test ids of `count` checks, in order. */
export function checkTestIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${CHECKS_CLASSNAME}::check-${i + 1}`);
}

/**
 * @example
 * const { testCommand, failToPass } = checksTestCommand(['test -f CHANGELOG.md', "! git log -1 --format=%s | grep -q '🎉'"]);
 * // failToPass: ['checks::check-1', 'checks::check-2']
 */
export function checksTestCommand(checks: readonly string[]): { testCommand: string; failToPass: string[] } {
  const lines = [
    '__fw_out="$FLYWHEEL_REPORT_DIR/checks-junit.xml"',
    `printf '%s\\n' '<?xml version="1.0" encoding="UTF-8"?>' '<testsuite name="${CHECKS_CLASSNAME}">' > "$__fw_out"`,
    '__fw_check() {',
    '  local name="$1" cmd status',
    '  cmd="$(printf %s "$2" | base64 -d)"',
    '  echo "== $name: $cmd"',
    '  bash -c "$cmd" </dev/null',
    '  status=$?',
    `  if [ "$status" -eq 0 ]; then printf '<testcase classname="${CHECKS_CLASSNAME}" name="%s"/>\\n' "$name" >> "$__fw_out";`,
    `  else printf '<testcase classname="${CHECKS_CLASSNAME}" name="%s"><failure message="exited %s"/></testcase>\\n' "$name" "$status" >> "$__fw_out"; fi`,
    '}',
    ...checks.map((c, i) => `__fw_check check-${i + 1} ${Buffer.from(c, 'utf8').toString('base64')}`),
    `printf '%s\\n' '</testsuite>' >> "$__fw_out"`,
  ];
  return { testCommand: lines.join('\n'), failToPass: checkTestIds(checks.length) };
}
