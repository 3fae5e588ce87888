/**
 * Reads the log the sandbox's `git` shim writes (one record per invocation: exit code, cwd, argv) and turns the
 * invocations that asked for history into `git.history-needed` observations. A command counts when its subcommand
 * is one that reads history (log, show, fetch, reflog, …) or when it failed on a revision the stripped repository
 * lacks. Recorded in both modes, so lenient attempts show which shortcuts strict mode would have blocked.
 */
import type { HarnessMode, SandboxObservation } from './sandbox.ts';

const HISTORY_SUBCOMMANDS = new Set([
  'log', 'show', 'reflog', 'fetch', 'pull', 'clone', 'rev-list', 'describe', 'blame', 'annotate', 'notes', 'stash',
  'tag', 'remote', 'ls-remote', 'cat-file', 'fsck', 'for-each-ref', 'shortlog', 'whatchanged', 'bisect',
  'cherry-pick', 'rebase', 'merge', 'cherry', 'range-diff', 'format-patch', 'show-ref', 'rev-parse', 'checkout',
  'switch', 'reset', 'restore', 'branch', 'diff', 'grep', 'archive', 'bundle', 'replace', 'verify-pack', 'unpack-objects',
]);

/** Subcommands that only read history when given a revision (`git diff` alone is fine). */
const NEEDS_REVISION_ARG = new Set(['checkout', 'switch', 'reset', 'restore', 'branch', 'diff', 'grep', 'rev-parse', 'archive']);

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

function looksLikeRevision(arg: string): boolean {
  return /^[0-9a-f]{7,40}$/i.test(arg) || /[~^@]/.test(arg) || /^(HEAD|origin\/|refs\/|tags\/)/.test(arg) || arg === '--all' || arg === '-a' || arg === '-r' || arg === '--remotes';
}

export function parseGitLog(text: string, mode: HarnessMode): SandboxObservation[] {
  const observations: SandboxObservation[] = [];
  for (const record of text.split('\x1e')) {
    if (!record) continue;
    const [code, cwd, ...argv] = record.split('\x1f');
    const exitCode = Number(code);
    const { sub, rest } = subcommandOf(argv);
    if (!sub || !HISTORY_SUBCOMMANDS.has(sub)) continue;
    if (NEEDS_REVISION_ARG.has(sub) && !rest.some(looksLikeRevision) && exitCode === 0) continue;
    observations.push({
      kind: 'git.history-needed',
      at: new Date().toISOString(),
      detail: { argv: ['git', ...argv], cwd, exitCode, mode, failed: exitCode !== 0 },
    });
  }
  return observations;
}
