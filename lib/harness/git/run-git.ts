/**
 * Runs the real `git` binary with a clean environment, so a caller's GIT_DIR, GIT_INDEX_FILE or alternates never leak
 * into the repository being built or audited.
 */
import { spawn } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment variables git reads that would change which repository or objects it sees. */
const GIT_ENV_PREFIX = /^GIT_/;

export function cleanGitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!GIT_ENV_PREFIX.test(k)) env[k] = v;
  // No user or system config: the result must not depend on who runs it.
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.GIT_OPTIONAL_LOCKS = '0';
  env.GIT_TERMINAL_PROMPT = '0';
  return { ...env, ...extra };
}

/**
 * @example
 * const { stdout } = await git(['rev-parse', 'HEAD'], { cwd: repo });
 */
export function git(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string | Buffer; allowFailure?: boolean } = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: options.cwd, env: cleanGitEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const result = { code: code ?? -1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
      if (result.code !== 0 && !options.allowFailure) {
        reject(new Error(`git ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`));
      } else resolve(result);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
