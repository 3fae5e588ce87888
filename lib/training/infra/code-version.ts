/**
 * The code version a deployment's training lineage records (`FLYWHEEL_CODE_VERSION` of the training step function):
 * the checkout's commit at synth time (`git rev-parse HEAD`, `+dirty` with uncommitted changes to tracked files),
 * else `FLYWHEEL_CODE_VERSION` of the synthesizing shell, else `<package name>@<version>` (an unpacked release).
 *
 * @example
 * fn.addEnvironment('FLYWHEEL_CODE_VERSION', synthCodeVersion()); // 'c0ffee…' or 'flywheel@0.1.0'
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function synthCodeVersion(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLYWHEEL_CODE_VERSION) return env.FLYWHEEL_CODE_VERSION;
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
    const sha = git(['rev-parse', 'HEAD']);
    return git(['status', '--porcelain', '--untracked-files=no']) === '' ? sha : `${sha}+dirty`;
  } catch {
    // Not a git checkout: the package version says what code it is.
    try {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name?: string; version?: string };
      return `${pkg.name ?? 'flywheel'}@${pkg.version ?? '0.0.0'}`;
    } catch {
      return 'unknown';
    }
  }
}
