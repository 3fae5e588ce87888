/**
 * The attempt-wide limits with their defaults filled in. One place, because the cgroup, the capped disk and the
 * materialized workspace must all read the same numbers for one attempt.
 *
 * @example
 * attemptLimits({ commandTimeoutMs: 60_000, outputBytes: 1 << 20, cpus: 1 });
 * // { memoryBytes: 4 GiB, processes: 512, diskBytes: 2 GiB, cpus: 1 }
 */
import type { SandboxSpec } from './sandbox.ts';

/** Defaults of the attempt-wide limits (`SandboxLimits` fields left out). */
export const DEFAULT_LIMITS = { memoryBytes: 4 * 1024 ** 3, processes: 512, diskBytes: 2 * 1024 ** 3, cpus: 2 } as const;

/** The attempt-wide fields of `limits`, each given or defaulted. */
export function attemptLimits(l: SandboxSpec['limits']): Required<Pick<SandboxSpec['limits'], 'memoryBytes' | 'processes' | 'diskBytes' | 'cpus'>> {
  return {
    memoryBytes: l.memoryBytes ?? DEFAULT_LIMITS.memoryBytes,
    processes: l.processes ?? DEFAULT_LIMITS.processes,
    diskBytes: l.diskBytes ?? DEFAULT_LIMITS.diskBytes,
    cpus: l.cpus ?? DEFAULT_LIMITS.cpus,
  };
}
