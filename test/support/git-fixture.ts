/**
 * Git for test fixtures: a repository made by a test is never touched by the machine's or the user's git config,
 * and its commits have a fixed author, so fixtures are the same wherever the suite runs.
 *
 * @example
 * gitSync(dir, ['init', '-q', '-b', 'main']);
 * const sha = gitSync(dir, ['rev-parse', 'HEAD']);
 * expect(gitResult(dir, ['show', 'v2']).code).not.toBe(0);
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The environment of every fixture git: no system, global or user config, a fixed author and committer. */
function fixtureGitEnv(dir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
  };
}

export function gitSync(dir: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd: dir, input, env: fixtureGitEnv(dir) })
    .toString()
    .trim();
}

/** Git in `dir`, asynchronously: its whole stdout (untrimmed); throws when git fails. */
export async function gitIn(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('git', args, { cwd: dir, env: fixtureGitEnv(dir), maxBuffer: 64 << 20 });
  return stdout;
}

/** Git in `dir` when failing is the point: the exit code and both outputs, never a throw. */
export function gitResult(dir: string, args: string[]): { code: number; out: string; err: string } {
  const result = spawnSync('git', args, { cwd: dir, env: fixtureGitEnv(dir) });
  return { code: result.status ?? -1, out: result.stdout.toString(), err: result.stderr.toString() };
}

/**
 * Writes `files` (path → text) into a new temporary folder and, unless `git: false`, commits them as one commit on
 * `main`. Returns the folder.
 *
 * @example
 * const repo = await writeGitRepo({ 'src/add.ts': 'export const add = (a: number, b: number) => a + b;\n' });
 */
export async function writeGitRepo(files: Record<string, string>, options: { git?: boolean; prefix?: string; message?: string } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), options.prefix ?? 'flywheel-repo-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  if (options.git !== false) {
    gitSync(dir, ['init', '-q', '-b', 'main']);
    gitSync(dir, ['add', '-A']);
    gitSync(dir, ['commit', '-q', '-m', options.message ?? 'fixture']);
  }
  return dir;
}
