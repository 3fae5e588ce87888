/**
 * Execution liveness: whether the runner that owns a RUNNING execution is still there, so an orphaned execution
 * (its process crashed or was stopped) is run again and a live one never twice. An owner is `<pid>/<instance>`:
 * another process's row is orphaned when that pid is gone or its heartbeat is older than three beats; this
 * process's, when that instance was closed or no longer runs it.
 *
 * @example
 * const owner = registerRunner();
 * if (row.status === 'RUNNING' && isOrphaned(row, { owner, runsHere: false, now: Date.now(), heartbeatMs: 5000 })) adopt(row);
 * unregisterRunner(owner);
 */
import { randomUUID } from 'node:crypto';
import { isProcessAlive } from '../../../shared/process-liveness.ts';
import type { ExecutionRow } from './execution-store.ts';

/** Runners alive in this process: a row owned by another instance of this pid that is gone is orphaned. */
const liveInstances = new Set<string>();

/** A new owner id for a runner in this process, alive until `unregisterRunner`. */
export function registerRunner(): string {
  const owner = `${process.pid}/${randomUUID()}`;
  liveInstances.add(owner);
  return owner;
}

export function unregisterRunner(owner: string): void {
  liveInstances.delete(owner);
}

export interface LivenessView {
  /** The runner asking. */
  owner: string;
  /** Whether the asking runner has this execution running now. */
  runsHere: boolean;
  now: number;
  heartbeatMs: number;
}

/** True when nobody runs this RUNNING execution any more. */
export function isOrphaned(row: ExecutionRow, view: LivenessView): boolean {
  if (row.owner === view.owner) return !view.runsHere;
  if (!row.owner) return true;
  const pid = Number(row.owner.split('/')[0]);
  if (!isProcessAlive(pid)) return true;
  if (pid === process.pid) return !liveInstances.has(row.owner);
  return (row.heartbeat_at ?? 0) < view.now - 3 * view.heartbeatMs;
}
