/**
 * Cheap detection of reads outside the workspace: a command that names a host path an agent has no business naming
 * (the sandbox root, /root, the task's source, the provider's `hide` list) is recorded as `read.outside-workspace`.
 * Those paths are all absent inside the sandbox, so this records intent, not access; it reads the command text only.
 *
 * @example
 * outsideReads({ command: 'cat /root/.aws/credentials', workdir, shownPaths: [], hidden: hiddenPaths(root, [], source) });
 * // [{ kind: 'read.outside-workspace', detail: { path: '/root', command: 'cat /root/.aws/credentials' }, … }]
 */
import type { SandboxObservation } from './sandbox.ts';

/** Host paths an agent has no business naming (all absent inside; naming one is recorded). */
export function hiddenPaths(root: string, hide: string[] | undefined, sourceDir: string | undefined): string[] {
  const paths = [root, '/root', ...(hide ?? [])];
  if (sourceDir) paths.push(sourceDir);
  return paths;
}

export function outsideReads(input: { command: string; workdir: string; shownPaths: string[]; hidden: string[] }): SandboxObservation[] {
  const { command } = input;
  const observed: SandboxObservation[] = [];
  // The workspace itself lies under the sandbox root: its own path is not a read outside.
  let text = command.replaceAll(input.workdir, '<workspace>');
  // Bound toolchains (a python under /root) are readable by design.
  for (const p of input.shownPaths) text = text.replaceAll(p, '<exposed>');
  for (const path of input.hidden) {
    if (path !== '/' && text.includes(path)) {
      observed.push({ kind: 'read.outside-workspace', at: new Date().toISOString(), detail: { path, command } });
    }
  }
  return observed;
}
