/**
 * Path containment by whole components (`/a/bc` is not within `/a/b`). Shared by every check that keeps the sandbox
 * root and the task's source out of reach (exposed paths, environment binds) and by the git targets, so they cannot
 * disagree on what "inside" means.
 *
 * @example
 * within('/srv/sb/attempts/1', '/srv/sb'); // true
 * within('/srv/sbx', '/srv/sb');           // false
 */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
