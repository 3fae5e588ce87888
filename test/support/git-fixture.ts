/**
 * Git for test fixtures: a repository made by a test is never touched by the machine's or the user's git config,
 * and its commits have a fixed author, so fixtures are the same wherever the suite runs.
 *
 * @example
 * gitSync(dir, ['init', '-q', '-b', 'main']);
 * const sha = gitSync(dir, ['rev-parse', 'HEAD']);
 */
import { execFileSync } from 'node:child_process';

export function gitSync(dir: string, args: string[], input?: string): string {
  return execFileSync('git', args, {
    cwd: dir,
    input,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
    },
  })
    .toString()
    .trim();
}
