/**
 * The name-level half of the environment leak check: the project's own package installed, under its name, in a folder
 * the sandbox can read that no environment build cleaned (the machine's `dist-packages`, a toolchain's global
 * `node_modules`). The harness takes the project out of the layers it builds; these folders it does not touch. The
 * content index finds a copy whose source matches; this finds one it cannot read as source (bytecode only, a compiled
 * extension, a minified bundle), so the record says the project is importable from the machine.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ReachableRoot } from './reachable-roots.ts';

export interface ProjectNames {
  /** Distribution or package names (`click`, `@scope/url-kit`). */
  names: string[];
  /** Python top-level modules (`click`). */
  topLevel: string[];
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * Where the project's own package is installed by name in the machine's or the toolchains' package folders, as the
 * sandbox names them.
 *
 * @example
 * await projectCopies(roots, { names: ['click'], topLevel: ['click'] }) // ['/usr/lib/python3/dist-packages/click']
 */
export async function projectCopies(roots: readonly ReachableRoot[], project: ProjectNames): Promise<string[]> {
  const names = new Set(project.names.map(normalize));
  const tops = new Set(project.topLevel);
  if (names.size === 0 && tops.size === 0) return [];
  const out: string[] = [];
  for (const root of roots) {
    if (root.kind === 'layer') continue;
    if (basename(root.source) === 'node_modules') {
      for (const name of project.names) {
        const pkg = await readFile(join(root.source, name, 'package.json'), 'utf8').catch(() => undefined);
        if (pkg !== undefined) out.push(join(root.inside, name));
      }
      continue;
    }
    for (const entry of await readdir(root.source).catch(() => [] as string[])) {
      const module = entry.replace(/\.(?:py|pyc)$|\..*\.so$|\.so$/, '');
      const dist = /^([^-]+)-.*\.(?:dist-info|egg-info|egg)$/.exec(entry)?.[1];
      if (tops.has(entry) || tops.has(module) || (dist !== undefined && names.has(normalize(dist)))) out.push(join(root.inside, entry));
    }
  }
  return out;
}
