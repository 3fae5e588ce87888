/**
 * How a sandbox provider finds the environment a task's tree needs. The cached builder (virtualenv, `node_modules`,
 * toolchain prefixes keyed by the tree's lockfiles) lives beside this file.
 */
import type { SandboxEnvironment } from '../sandbox/sandbox.ts';

export interface EnvironmentRequest {
  /** A read-only copy of the task's base tree (lockfiles, pyproject.toml, package.json are read from here). */
  treeDir: string;
}

export interface EnvironmentResolver {
  resolve(request: EnvironmentRequest): Promise<SandboxEnvironment>;
}
