import type { RecordItem, RecordsPort } from '../../ports/records.ts';
import type { HarnessMode, HistoryReaudit, SandboxObservation } from '../sandbox/sandbox.ts';
import type { StopReason } from '../trajectory/trajectory-schema.ts';

/**
 * The record one attempt of an eval leaves in the records port: `pk EVAL#<runId>`, `sk ATTEMPT#<taskId>#<mode>#<n>`.
 * Large bodies (trajectory, diff) live in blobs; the record holds their keys. Every try of the attempt is kept in
 * `history`, so an infrastructure error is never silently dropped, and it is never scored as the model failing.
 */
export type AttemptStatus = 'passed' | 'failed' | 'infrastructure-error' | 'ungraded';

/** Statuses that end an attempt for good: a resumed run skips them. An infrastructure error is tried again. */
export const FINISHED_STATUSES: readonly AttemptStatus[] = ['passed', 'failed', 'ungraded'];

/** Where a try broke when it broke for reasons that are not the model's. */
export type InfrastructurePhase = 'sandbox' | 'setup-failed' | 'agent' | 'grading' | 'storage';

export interface AttemptUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** One try of an attempt (an attempt is tried again after an infrastructure error). */
export interface AttemptTry {
  try: number;
  startedAt: string;
  durationMs: number;
  outcome: 'completed' | 'infrastructure-error';
  stopReason?: StopReason;
  usage: AttemptUsage;
  trajectoryKey?: string;
  infrastructureError?: { phase: InfrastructurePhase; error: string; message: string };
}

/** What a grader says about an attempt's diff; extra fields (per-test outcomes, log keys) are kept as given. */
export interface AttemptGrade {
  passed: boolean;
  reasons?: string[];
  [detail: string]: unknown;
}

/** One layer of the task environment an attempt ran against (from its `env.json` manifest), in brief. */
export interface AttemptEnvironmentLayer {
  /** `python` or `node` (as the manifest says). */
  kind: string;
  /** The layer's cache key (`python-<hex>`): which build it was. */
  key: string;
  /** Packages taken out of the layer (a release of the project under test pulled in by a dependency), with why. */
  removed: Array<{ name: string; version: string; path?: string; reason?: string }>;
  /** Choices the build made (a pytest pin the index does not have). */
  notes: string[];
}

/** The task environment an attempt's commands ran against (`SandboxSession.taskEnvironment`), in brief. */
export interface AttemptEnvironment {
  /** Stable id of the environment (hash of the recipe and the lockfiles). */
  id: string;
  layers: AttemptEnvironmentLayer[];
}

/** At most this many removed packages and notes are kept per layer; a record stays small. */
const MAX_ENVIRONMENT_ITEMS = 50;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * The key facts of a session's environment for the record: its id, and per layer manifest its kind, key, removed
 * packages and notes. Manifests come as `unknown` (the sandbox's resolver writes them): whatever is not of the
 * expected shape is left out, never thrown on.
 *
 * @example
 * environmentFacts({ id: 'env-1a2b', manifests: [{ kind: 'python', key: 'python-3f1c', removed: [], notes: [] }] });
 * // { id: 'env-1a2b', layers: [{ kind: 'python', key: 'python-3f1c', removed: [], notes: [] }] }
 */
export function environmentFacts(environment: { id: string; manifests?: unknown[] }): AttemptEnvironment {
  const layers: AttemptEnvironmentLayer[] = [];
  for (const m of Array.isArray(environment.manifests) ? environment.manifests : []) {
    if (typeof m !== 'object' || m === null) continue;
    const o = m as Record<string, unknown>;
    const removed = Array.isArray(o['removed']) ? o['removed'] : [];
    const notes = Array.isArray(o['notes']) ? o['notes'] : [];
    layers.push({
      kind: str(o['kind']) ?? 'unknown',
      key: str(o['key']) ?? '',
      removed: removed
        .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null)
        .slice(0, MAX_ENVIRONMENT_ITEMS)
        .map((r) => {
          const path = str(r['path']);
          const reason = str(r['reason']);
          return { name: str(r['name']) ?? '', version: str(r['version']) ?? '', ...(path !== undefined ? { path } : {}), ...(reason !== undefined ? { reason } : {}) };
        }),
      notes: notes.filter((n): n is string => typeof n === 'string').slice(0, MAX_ENVIRONMENT_ITEMS),
    });
  }
  return { id: String(environment.id), layers };
}

export interface AttemptRecord extends RecordItem {
  kind: 'eval-attempt';
  runId: string;
  attemptId: string;
  taskId: string;
  suite: string;
  mode: HarnessMode;
  /** 0-based attempt number within (task, mode). */
  n: number;
  status: AttemptStatus;
  stopReason?: StopReason;
  /** Usage of the try that counted (the last one). */
  usage: AttemptUsage;
  /** Usage summed over every try, infrastructure errors included: what the endpoint was billed. */
  usageAllTries: AttemptUsage;
  turns: number;
  durationMs: number;
  trajectoryKey?: string;
  diffKey?: string;
  grade?: AttemptGrade;
  /** What the sandbox blocked or saw during the try that counted (integrity evidence). */
  observations?: SandboxObservation[];
  /**
   * The task environment the counted try's commands ran against (its id, and each layer's key, removed packages and
   * notes), when the sandbox says (`SandboxSession.taskEnvironment`).
   */
  environment?: AttemptEnvironment;
  /** Strict mode: the workspace re-audited after the agent finished, before it was removed. */
  historyReaudit?: HistoryReaudit;
  /**
   * Set when the attempt failed for integrity, not for a wrong fix: the re-audit found history brought back (or could
   * not read the workspace's repository), the verdict channel caught tampering, or (strict mode) the diff holds a flag
   * aimed at the verdict. Such an attempt's status is `failed`; reports count these apart (`compare-modes`).
   */
  integrityFailure?: { reasons: string[] };
  model: string;
  tries: number;
  history: AttemptTry[];
  startedAt: string;
  finishedAt: string;
}

export function evalPartition(runId: string): string {
  return `EVAL#${runId}`;
}

export function attemptSortKey(taskId: string, mode: HarnessMode, n: number): string {
  return `ATTEMPT#${taskId}#${mode}#${n}`;
}

/** A stable, path-safe attempt id (it names blobs): `<runId>.<taskId with / as __>.<mode>.<n>`. */
export function evalAttemptId(runId: string, taskId: string, mode: HarnessMode, n: number): string {
  return `${runId}.${taskId.replaceAll('/', '__')}.${mode}.${n}`;
}

/** The stored record of one attempt, if any. */
export async function getAttemptRecord(records: RecordsPort, runId: string, taskId: string, mode: HarnessMode, n: number): Promise<AttemptRecord | undefined> {
  return (await records.get(evalPartition(runId), attemptSortKey(taskId, mode, n))) as AttemptRecord | undefined;
}

/** Every attempt record of a run (all pages). */
export async function listAttemptRecords(records: RecordsPort, runId: string): Promise<AttemptRecord[]> {
  const out: AttemptRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: evalPartition(runId), sort: { beginsWith: 'ATTEMPT#' }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...(page.items as AttemptRecord[]));
    cursor = page.cursor;
  } while (cursor);
  return out;
}
