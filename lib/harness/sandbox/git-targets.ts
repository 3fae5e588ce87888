/**
 * Where a sandboxed command could find a git: `git` in each PATH folder (through the binds that show it) and
 * git-core's own. The command plan covers each with the git shim, so every git a command runs is logged (an agent
 * that calls `/usr/lib/git-core/git` directly is logged too).
 *
 * @example
 * await gitTargets(['/venv/bin', '/usr/bin', '/bin'], [{ source: '/opt/venv', target: '/venv' }]);
 * // ['/usr/bin/git', '/usr/lib/git-core/git']   (/bin/git is the same file when /bin links to usr/bin)
 */
import { realpath, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { GIT_CORE_GIT } from './base-system.ts';
import { within } from './path-within.ts';

export async function gitTargets(pathDirs: string[], binds: Array<{ source: string; target: string }>): Promise<string[]> {
  const targets: string[] = [];
  const seen = new Set<string>();
  for (const dir of pathDirs) {
    const inside = join(dir, 'git');
    const bind = binds.filter((b) => within(inside, b.target)).sort((a, b) => b.target.length - a.target.length)[0];
    let host: string;
    if (bind) host = join(bind.source, relative(bind.target, inside));
    else if (['/usr', '/bin', '/sbin', '/lib', '/lib64'].some((r) => within(inside, r))) host = inside;
    else continue;
    const st = await stat(host).catch(() => undefined);
    if (!st?.isFile()) continue;
    // /bin/git and /usr/bin/git are one file when /bin links to usr/bin: one bind covers both.
    const key = bind ? `${bind.target}:${inside}` : await realpath(host).catch(() => host);
    if (seen.has(key)) continue;
    seen.add(key);
    targets.push(bind ? inside : key);
  }
  if ((await stat(GIT_CORE_GIT).then((s) => s.isFile(), () => false)) && !targets.includes(GIT_CORE_GIT)) targets.push(GIT_CORE_GIT);
  return targets;
}
