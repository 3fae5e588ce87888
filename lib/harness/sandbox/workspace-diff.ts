/**
 * The agent's changes against the base tree, as a binary-safe git patch. Taken inside the sandbox with the real git
 * and a throwaway index: the agent controls `.git/config` (filters, fsmonitor), so the harness never runs git on the
 * workspace from the host. The environment's workspace binds are not mounted for this command, so they are not part
 * of the diff.
 *
 * @example
 * const patch = await workspaceDiff({ tree: layers.tree, realGitInside: base.realGitInside, runInternal, timeoutMs: 120_000 });
 */
import type { ExecResult } from './sandbox.ts';
import { SandboxClosedError, SandboxDiffError } from './sandbox-errors.ts';

export async function workspaceDiff(input: {
  /** The base tree (undefined before the workspace exists). */
  tree: string | undefined;
  /** Where the real git is inside the sandbox (undefined before the base system is ready). */
  realGitInside: string | undefined;
  /** Runs one of the harness's own commands inside the sandbox. */
  runInternal: (script: string, timeoutMs: number) => Promise<ExecResult>;
  timeoutMs: number;
}): Promise<string> {
  const { tree, realGitInside: realGit } = input;
  if (!tree || !realGit) throw new SandboxClosedError('the sandbox has no workspace');
  const script = [
    'export GIT_INDEX_FILE=/tmp/.flywheel/diff-index GIT_CONFIG_GLOBAL=/dev/null',
    'mkdir -p /tmp/.flywheel && rm -f "$GIT_INDEX_FILE"',
    `${realGit} read-tree ${tree} && ${realGit} add -A && ${realGit} -c core.quotepath=false diff --cached --binary --full-index ${tree}`,
    'code=$?; rm -f "$GIT_INDEX_FILE"; exit $code',
  ].join('\n');
  const r = await input.runInternal(script, input.timeoutMs);
  if (r.exitCode !== 0) throw new SandboxDiffError(`git diff failed: ${r.stderr.trim()}`);
  return r.stdout;
}
