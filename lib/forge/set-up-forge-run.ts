/**
 * What every forge pass over a repository starts with, `forge run` and `forge plan` alike: the runner resolved from
 * the checkout and the spec, the spec made runnable with it, and the environment resolved (and recorded) once.
 *
 * @example
 * const { runner, spec, environment } = await setUpForgeRun(work, input.spec, provider);
 */
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { prepareForgeEnvironment, type ForgeEnvironmentRecord } from './environment/forge-environment.ts';
import type { WorkRepo } from './forge-git.ts';
import { resolveRunner, runnableSpec, type ResolvedRunner } from './runner/resolve-runner.ts';
import type { ForgeSpec, RunnableForgeSpec } from './schemas.ts';

export async function setUpForgeRun(work: WorkRepo, given: ForgeSpec, provider: SandboxProvider): Promise<{ runner: ResolvedRunner; spec: RunnableForgeSpec; environment: ForgeEnvironmentRecord }> {
  const runner = await resolveRunner(work, given);
  const spec = runnableSpec(given, runner);
  const environment = await prepareForgeEnvironment({ work, spec, provider });
  return { runner, spec, environment };
}

/** Candidates tried at most: the spec's cap, else 20 per task asked for. */
export function candidateLimit(spec: Pick<ForgeSpec, 'maxCandidates' | 'maxTasks'>): number {
  return spec.maxCandidates ?? spec.maxTasks * 20;
}
