/**
 * Checks that read git history cannot be graded: a check runs in the grading tree (the base commit's files plus the
 * agent's diff), which has no `.git`, so `git log -1 --format=%s | grep -q '🎉'` finds nothing and its negation
 * always passes. A complaint about commits (messages, count, authorship) is the judge's to grade, from the git log
 * the harness harvests into the trajectory. These checks are refused when drafted (the drafter is asked again) and
 * when approved (`ValidationError` naming `checks[i]`).
 */

/** git subcommands that read history or the repository's metadata. */
const HISTORY_SUBCOMMANDS = [
  'log', 'show', 'rev-list', 'reflog', 'shortlog', 'whatchanged', 'blame', 'annotate', 'describe', 'cherry', 'rev-parse',
  'for-each-ref', 'show-ref', 'cat-file', 'name-rev', 'format-patch', 'diff', 'status', 'branch', 'tag', 'ls-tree', 'ls-files',
  'merge-base', 'notes', 'stash', 'fsck', 'count-objects', 'bisect', 'grep', 'config', 'symbolic-ref',
];

/** `git` (after any global options like `-C dir` or `--no-pager`) followed by a history subcommand. */
const GIT_HISTORY = new RegExp(String.raw`(?:^|[\s;&|(!{\x60]|\$\()git(?:\s+(?:-C\s+\S+|-c\s+\S+|--?[\w-]+(?:=\S+)?))*\s+(${HISTORY_SUBCOMMANDS.join('|')})\b`);
/** Reading the repository's metadata directly (`.git/HEAD`, `.git/logs/…`, `ORIG_HEAD`). */
const GIT_DIR = /(?:^|[\s'"=(/])\.git(?:\/|\s|$|['"])|\b(?:ORIG_HEAD|FETCH_HEAD|COMMIT_EDITMSG)\b/;

/**
 * The checks that read git history, as field issues (`checks[i]`).
 *
 * @example
 * historyCheckIssues(['test -f CHANGELOG.md', "! git log -1 --format=%s | grep -q '🎉'"]);
 * // [{ path: 'checks[1]', message: 'reads git history (`git log`): …' }]
 */
export function historyCheckIssues(checks: readonly string[]): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const [i, check] of checks.entries()) {
    const m = GIT_HISTORY.exec(check);
    const what = m ? `git ${m[1]}` : GIT_DIR.test(check) ? '.git' : undefined;
    if (what === undefined) continue;
    out.push({
      path: `checks[${i}]`,
      message: `reads git history (\`${what}\`): checks run in a grading tree with no .git, so such a check means nothing; a complaint about commits belongs in the rubric, judged from the git log the harness harvests into the trajectory`,
    });
  }
  return out;
}

/** What the drafter is told about checks. */
export const CHECKS_GUIDANCE =
  'Checks run in a copy of the repository with the agent\'s changes but WITHOUT git history (no .git): never write a check that runs git (log, show, rev-list, reflog, diff, status…) or reads .git. Complaints about commits (messages, count, authorship) go in the rubric: the judge reads the git log harvested into the trajectory.';
