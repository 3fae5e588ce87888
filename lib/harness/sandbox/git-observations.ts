/**
 * Reads the log the sandbox's `git` shim writes (one record per invocation: exit code, cwd, argv) and turns the
 * invocations that truly needed history into `git.history-needed` observations. Recorded in both modes, so lenient
 * attempts show which shortcuts strict mode would have blocked.
 *
 * What counts (history beyond the one commit the agent starts from):
 * - subcommands that only exist to read or fetch history: `reflog`, `fetch`, `pull`, `clone`, `ls-remote`,
 *   `rev-list`, `blame`/`annotate`, `shortlog`, `whatchanged`, `bisect`, `cherry`, `range-diff`, `format-patch`
 *   (with a range), `bundle`, `notes`, `replace`, `for-each-ref`, `show-ref`, `fsck --lost-found`/`--unreachable`,
 *   `cherry-pick`, `rebase`, `merge`, `stash` (list/show/pop of stashes the agent did not make);
 * - `git log` beyond one commit (no `-1`/`-n 1`/`--max-count=1`), or with `--all`/`--branches`/`--tags`/`--remotes`/
 *   `--reflog`, a range or a revision other than HEAD;
 * - `git show`, `git diff`, `git checkout`/`switch`/`reset`/`restore --source`/`branch`/`tag`/`grep`/`archive`/
 *   `rev-parse`/`cat-file`/`describe` naming a revision other than HEAD/the index/the worktree (`HEAD~1`, a sha,
 *   `origin/main`, `--all`, `@{1}`, `v1.2`) — and any of them that FAILED on such a revision;
 * - anything with `--all`, `--reflog`, `--remotes`, `--tags`, `--branches` for a history-walking command.
 *
 * What does not: `git status`, `git diff` (worktree, `--cached`, `HEAD`), `git log -1`/`-n 1`, `git show` /
 * `git show HEAD[:path]`, `git describe` (`--always`, or failing on the one commit: a version plugin asking on every run
 * is not history needed), `git rev-parse HEAD`/`--show-toplevel`, `git add`, `git commit`, `git stash` of the agent's
 * own changes, `git branch` (listing), `git config`, `git ls-files`.
 */
import type { SandboxObservation } from './sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';

/** Subcommands whose use is history needed whatever their arguments. */
const ALWAYS_HISTORY = new Set([
  'reflog', 'fetch', 'pull', 'clone', 'ls-remote', 'rev-list', 'blame', 'annotate', 'shortlog', 'whatchanged', 'bisect',
  'cherry', 'range-diff', 'bundle', 'notes', 'replace', 'for-each-ref', 'show-ref', 'cherry-pick', 'rebase', 'merge',
  'remote', 'unpack-objects', 'verify-pack',
]);

/** Subcommands that read history only when given a revision other than HEAD (or a history-wide option). */
const REVISION_SUBCOMMANDS = new Set([
  'log', 'show', 'diff', 'checkout', 'switch', 'reset', 'restore', 'branch', 'tag', 'grep', 'archive', 'rev-parse',
  'cat-file', 'describe', 'format-patch', 'difftool', 'stash', 'fsck', 'worktree', 'ls-tree', 'name-rev',
]);

/** Options that walk every ref (or the reflog): always history. */
const WIDE_OPTIONS = /^--(?:all|reflog|remotes|branches|tags|glob|walk-reflogs|lost-found|unreachable)(?:=|$)|^-g$/;

/** Arguments that name the one commit (or the index / worktree) rather than history. */
function isCurrent(arg: string): boolean {
  return /^(?:HEAD|@)(?::.*)?$/.test(arg) || /^:/.test(arg) || arg === 'HEAD^{tree}' || arg === 'HEAD^{commit}';
}

/** Looks like a revision (as opposed to a path or an option). */
function looksLikeRevision(arg: string): boolean {
  if (arg.startsWith('-')) return false;
  return (
    /^[0-9a-f]{7,40}(?::|$)/i.test(arg) ||
    /[~^]/.test(arg) ||
    /@\{/.test(arg) ||
    /\.\./.test(arg) ||
    /^(?:HEAD|@|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD)(?:[~^:@]|$)/.test(arg) ||
    /^(?:origin|upstream)\//.test(arg) ||
    /^refs\//.test(arg) ||
    /^tags?\//.test(arg) ||
    /^v\d+(?:\.\d+)*/.test(arg) ||
    /^(?:main|master|develop|trunk)$/.test(arg)
  );
}

/** `git log` limited to one commit. */
function oneCommit(rest: string[]): boolean {
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '-1' || a === '--max-count=1' || a === '-n1' || a === '--no-walk') return true;
    if ((a === '-n' || a === '--max-count') && rest[i + 1] === '1') return true;
  }
  return false;
}

/** The arguments before `--` (after it come paths). */
function beforeDashDash(rest: string[]): string[] {
  const i = rest.indexOf('--');
  return i < 0 ? rest : rest.slice(0, i);
}

/** Why an invocation needed history, or undefined when it did not. */
export function historyNeed(argv: string[], exitCode: number): string | undefined {
  const { sub, rest } = subcommandOf(argv);
  if (!sub) return undefined;
  if (ALWAYS_HISTORY.has(sub)) return sub;
  if (!REVISION_SUBCOMMANDS.has(sub)) return undefined;
  const args = beforeDashDash(rest);
  const revisions = args.filter((a) => looksLikeRevision(a) && !isCurrent(a));
  // `--tags`/`--all` only choose which refs may name HEAD; it fails on the one commit (no tags) in strict mode.
  if (sub === 'describe') return revisions.length > 0 && exitCode === 0 ? `describe ${revisions.join(' ')}` : undefined;
  if (args.some((a) => WIDE_OPTIONS.test(a))) return `${sub} over every ref`;
  switch (sub) {
    case 'log':
    case 'whatchanged':
      if (revisions.length > 0) return `log of ${revisions.join(' ')}`;
      return oneCommit(args) ? undefined : 'log beyond one commit';
    case 'stash':
      // The agent's own stash is fine; listing or showing stashes it did not make is not (strict mode has none).
      return ['list', 'show'].includes(args[0] ?? '') && exitCode === 0 && args.slice(1).some((a) => /stash@\{/.test(a)) ? 'stash of history' : undefined;
    case 'fsck':
      return undefined;
    case 'branch':
    case 'tag':
      // Listing is harmless; creating one at a revision other than HEAD (or -a/-r listings) reads history.
      if (args.some((a) => a === '-a' || a === '-r' || a === '--remotes' || a === '--all')) return `${sub} of other refs`;
      return revisions.length > 0 ? `${sub} at ${revisions.join(' ')}` : undefined;
    default:
      return revisions.length > 0 ? `${sub} ${revisions.join(' ')}${exitCode !== 0 ? ' (failed)' : ''}` : undefined;
  }
}

/** git's options that take a separate value before the subcommand. */
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']);

export function subcommandOf(argv: string[]): { sub: string | undefined; rest: string[] } {
  let i = 0;
  while (i < argv.length) {
    const a = argv[i] ?? '';
    if (GLOBAL_WITH_VALUE.has(a)) i += 2;
    else if (a.startsWith('-')) i += 1;
    else return { sub: a, rest: argv.slice(i + 1) };
  }
  return { sub: undefined, rest: [] };
}


export function parseGitLog(text: string, mode: HarnessMode): SandboxObservation[] {
  const observations: SandboxObservation[] = [];
  for (const record of text.split('\x1e')) {
    if (!record) continue;
    const [code, cwd, ...argv] = record.split('\x1f');
    const exitCode = Number(code);
    const why = historyNeed(argv, exitCode);
    if (!why) continue;
    observations.push({
      kind: 'git.history-needed',
      at: new Date().toISOString(),
      detail: { argv: ['git', ...argv], cwd, exitCode, mode, failed: exitCode !== 0, why },
    });
  }
  return observations;
}
