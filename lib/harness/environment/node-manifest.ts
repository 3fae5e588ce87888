/**
 * What a Node tree needs: its `package.json` and lockfile (`package-lock.json` or `npm-shrinkwrap.json`), installed
 * with `npm ci --ignore-scripts` (no lifecycle scripts: they are the tree's code, and the agent may run them itself
 * inside the sandbox), or `npm install --ignore-scripts --no-package-lock` when there is no lockfile. A tree that
 * ships its own `node_modules` gets no layer (its files are the environment).
 */
import { readTreeFile, isTreeDir } from './read-tree.ts';

export interface NodePlan {
  packageJson: string;
  lockfile?: { name: 'package-lock.json' | 'npm-shrinkwrap.json'; text: string };
  /** `name` of the tree's package.json: never installed from the registry. */
  projectName?: string;
  files: string[];
}

/** The node plan of a tree; undefined without a package.json, or when the tree ships node_modules. */
export async function readNodePlan(treeDir: string): Promise<NodePlan | undefined> {
  const packageJson = await readTreeFile(treeDir, 'package.json');
  if (packageJson === undefined) return undefined;
  if (await isTreeDir(treeDir, 'node_modules')) return undefined;
  let projectName: string | undefined;
  try {
    const name = (JSON.parse(packageJson) as { name?: unknown }).name;
    if (typeof name === 'string' && name) projectName = name;
  } catch {
    // npm reports an invalid package.json itself, naming the file
  }
  const files = ['package.json'];
  for (const name of ['npm-shrinkwrap.json', 'package-lock.json'] as const) {
    const text = await readTreeFile(treeDir, name);
    if (text !== undefined) {
      files.push(name);
      return { packageJson, lockfile: { name, text }, ...(projectName ? { projectName } : {}), files };
    }
  }
  return { packageJson, ...(projectName ? { projectName } : {}), files };
}
