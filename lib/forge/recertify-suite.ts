/**
 * Re-certification: suites rot as dependencies and runners move, so each active task of a suite is checked again
 * as it is shipped — its stored repository, statement, tests and reference patch — and retired, with the reason,
 * when it no longer holds: the do-nothing agent must still fail on its failToPass tests, its passToPass tests must
 * still pass on the untouched tree, and the reference patch must pass the harness's grading k times.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import { gradeAttempt } from '../harness/grading/grade-attempt.ts';
import { testIdKey } from '../harness/grading/test-id.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import type { Task } from '../harness/task/task-schema.ts';
import { forgeTestRunner } from './forge-test-runner.ts';
import { listSuiteTasks, readStoredTask, unpackRepo } from './forge-records.ts';
import { forgedTaskRecord, type ForgedTaskRecord } from './record-codecs.ts';
import { runSetup, runSuite } from './run-suite.ts';

export interface RecertifyOutcome {
  taskId: string;
  /** `kept`, `retired` (now), or `skipped` (already retired). */
  result: 'kept' | 'retired' | 'skipped';
  reason?: string;
  durationMs: number;
}

export interface RecertifyInput {
  suite: string;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  /** Oracle runs; default 3. */
  k?: number;
  /** Only these task ids (default every active task). */
  taskIds?: string[];
  testTimeoutMs?: number;
  now?: () => Date;
  onProgress?: (o: RecertifyOutcome) => void;
}

function repoCommit(task: Task): string | undefined {
  return task.repo.kind === 'git' ? task.repo.commit : task.repo.kind === 'blob' ? task.repo.baseCommit : undefined;
}

/** Checks one stored task; returns the reason it fails, or undefined when it still certifies. */
export async function recheckTask(input: { task: Task; repoDir: string; provider: SandboxProvider; k: number; timeoutMs: number }): Promise<string | undefined> {
  const { task, repoDir, provider } = input;
  if (task.testCommand === undefined) return undefined; // graded by a judge alone: no tests to recertify
  const commit = repoCommit(task);
  const session = await provider.open({ sourceDir: repoDir, ...(commit ? { baseCommit: commit } : {}), mode: 'strict', networkAllowList: task.networkAllowList, limits: { commandTimeoutMs: input.timeoutMs, outputBytes: 16 << 20 } });
  try {
    const setupError = await runSetup(session, task.setupCommand, input.timeoutMs);
    if (setupError) return `suite-does-not-run: ${setupError}`;
    const run = await runSuite(session, { command: task.testCommand, timeoutMs: input.timeoutMs, label: 'recertify: untouched task tree' });
    if (run.tests.size === 0) return `suite-does-not-run: the test command reported no tests (exit ${run.exitCode})`;
    const passingNow = task.failToPass.filter((id) => run.tests.get(testIdKey(id))?.outcome === 'passed');
    if (passingNow.length === task.failToPass.length) return `do-nothing-passes: every failToPass test passes on the untouched tree`;
    if (passingNow.length > 0) return `fail-to-pass-changed: ${passingNow.length} failToPass test(s) now pass without the feature, e.g. ${passingNow[0]}`;
    const broken = task.passToPass.filter((id) => run.tests.get(testIdKey(id))?.outcome !== 'passed');
    if (broken.length > 0) return `pass-to-pass-broken: ${broken.length} passToPass test(s) no longer pass on the untouched tree, e.g. ${broken[0]} (${run.tests.get(testIdKey(broken[0]!))?.outcome ?? 'missing'})`;
  } finally {
    await session.close();
  }
  const runTests = forgeTestRunner(provider, { ...(task.setupCommand ? { setupCommand: task.setupCommand } : {}), networkAllowList: task.networkAllowList });
  for (let i = 0; i < input.k; i++) {
    // strict: false — the gold patch is the trusted oracle; in a pytest-plugin repository its hooks and `_pytest`
    // imports are the project's own code, not tampering (flags are still recorded; stream tampering still fails it).
    const grade = await gradeAttempt({ task, sourceDir: repoDir, ...(commit ? { baseCommit: commit } : {}), diff: task.goldPatch ?? '', attemptId: `forge-recertify-${randomUUID()}`, runTests, timeoutMs: input.timeoutMs, strict: false });
    if (!grade.passed) return `oracle-failed: run ${i + 1}: ${grade.reasons.slice(0, 2).join('; ')}`;
  }
  return undefined;
}

/**
 * @example
 * const outcomes = await recertifySuite({ suite: 'calc', provider, ports });
 * console.log(outcomes.filter((o) => o.result === 'retired'));
 */
export async function recertifySuite(input: RecertifyInput): Promise<RecertifyOutcome[]> {
  const now = input.now ?? (() => new Date());
  const records = await listSuiteTasks(input.ports.records, input.suite);
  const outcomes: RecertifyOutcome[] = [];
  for (const record of records) {
    if (input.taskIds && !input.taskIds.includes(record.taskId)) continue;
    const t0 = Date.now();
    if (record.status !== 'active') {
      const o: RecertifyOutcome = { taskId: record.taskId, result: 'skipped', ...(record.retiredReason ? { reason: record.retiredReason } : {}), durationMs: 0 };
      outcomes.push(o);
      input.onProgress?.(o);
      continue;
    }
    const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-recert-'));
    let reason: string | undefined;
    try {
      const task = await readStoredTask(input.ports.blobs, record);
      const tarball = await input.ports.blobs.get(record.repoKey);
      if (!tarball) reason = `repository-missing: blob ${record.repoKey} is gone`;
      else {
        await unpackRepo(tarball, join(scratch, 'repo'));
        reason = await recheckTask({ task, repoDir: join(scratch, 'repo'), provider: input.provider, k: input.k ?? 3, timeoutMs: input.testTimeoutMs ?? task.limits.commandSeconds * 1000 });
      }
    } catch (error) {
      reason = `infrastructure-error: ${(error as Error).message}`;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    const at = now().toISOString();
    // An infrastructure error says nothing about the task: it stays active and the outcome says why it was not checked.
    const retire = reason !== undefined && !reason.startsWith('infrastructure-error');
    const updated: ForgedTaskRecord = { ...record, updatedAt: at, lastRecertifiedAt: at, ...(retire ? { status: 'retired', retiredReason: reason, retiredAt: at } : {}) };
    await input.ports.records.put(forgedTaskRecord.encode(updated));
    const o: RecertifyOutcome = { taskId: record.taskId, result: retire ? 'retired' : 'kept', ...(reason ? { reason } : {}), durationMs: Date.now() - t0 };
    outcomes.push(o);
    input.onProgress?.(o);
  }
  return outcomes;
}
