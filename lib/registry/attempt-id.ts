/**
 * The console's attempt id: the attempt record's whole key (run id, task, mode, n) as one URL-safe token, so
 * `GET /v1/attempts/{id}` is one read. The harness's own `attemptId` (`<runId>.<task>.<mode>.<n>`) cannot be split
 * back (run ids and task ids may hold dots).
 */
import { HarnessModeSchema, type HarnessMode } from '../harness/task/harness-mode.ts';

export interface AttemptRef {
  runId: string;
  taskId: string;
  mode: HarnessMode;
  n: number;
}

/**
 * @example
 * const id = encodeAttemptId({ runId: 'sweep.s1.ck.suite.strict.0.shard-0', taskId: 'calc/add', mode: 'strict', n: 0 });
 * decodeAttemptId(id); // the same ref
 */
export function encodeAttemptId(ref: AttemptRef): string {
  return Buffer.from(JSON.stringify([ref.runId, ref.taskId, ref.mode, ref.n]), 'utf8').toString('base64url');
}

/** The ref an id names, or undefined when it is not one of ours. */
export function decodeAttemptId(id: string): AttemptRef | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 4) return undefined;
  const [runId, taskId, mode, n] = value as unknown[];
  const m = HarnessModeSchema.safeParse(mode);
  if (typeof runId !== 'string' || typeof taskId !== 'string' || !m.success || typeof n !== 'number' || !Number.isInteger(n) || n < 0) return undefined;
  if (runId === '' || taskId === '' || runId.includes('#') || taskId.includes('#')) return undefined;
  return { runId, taskId, mode: m.data, n };
}

/** The sweep a shard's eval run belongs to (`sweep.<sweepId>.…`, `lib/sweeps/record-keys.ts` `shardRunId`). */
export function sweepIdOfRun(runId: string): string | undefined {
  const m = /^sweep\.([A-Za-z0-9][A-Za-z0-9_-]*)\./.exec(runId);
  return m?.[1];
}
