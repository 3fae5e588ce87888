/**
 * Whether a process still exists, for the owners recorded in files and rows (a runtime's pid, a lock's owner, an
 * attempt's harness, a job runner): one answer for every place that asks, so they agree on the edge cases.
 *
 * @example
 * if (!isProcessAlive(lock.pid)) takeOver(lock);
 */

/**
 * True when a process with this pid exists. Asks with signal 0, which checks without delivering anything: EPERM
 * means the process exists but belongs to another user, so it counts as alive (its lock or row is not ours to take).
 * A pid that is not a positive integer is never alive: `kill(0)` or `kill(-n)` would ask about a process group.
 * A pid the system has since reused reads as alive; callers that must tell (a job's process) check more.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}
