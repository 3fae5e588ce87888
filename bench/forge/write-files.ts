/**
 * Writes a generated repository to disk and commits it: the shared last step of the bench's generators.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Writes `files` under `dir` and, unless `git` is false, commits them as one commit on `main` (fixed author and date,
 * so the same generator gives the same commit id).
 *
 * @example
 * writeRepoFiles('/tmp/repo', { 'README.md': '# demo\n' }); // → the commit id
 */
export function writeRepoFiles(dir: string, files: Record<string, string>, options: { git?: boolean } = {}): string | undefined {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  if (options.git === false) return undefined;
  const env = { ...process.env, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'generated repository'], { cwd: dir, env });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir }).toString().trim();
}
