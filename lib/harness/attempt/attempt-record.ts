/**
 * The record one attempt of an eval leaves in the records port (keys in `record-keys.ts`, codec in
 * `record-codecs.ts`): `pk EVAL#<runId>`, `sk ATTEMPT#<taskId>#<mode>#<n>`. Large bodies (trajectory, diff) live in
 * blobs; the record holds their keys. Every try of the attempt is kept in `history`, so an infrastructure error is
 * never silently dropped, and it is never scored as the model failing. The schemas here are the types.
 */
import { z } from 'zod';
import { IntegrityFlagSchema } from '../integrity/integrity-flag.ts';
import { HistoryReauditSchema, SandboxObservationSchema } from '../sandbox/sandbox.ts';
import { HarnessModeSchema, type HarnessMode } from '../task/harness-mode.ts';
import { StopReasonSchema } from '../trajectory/trajectory-schema.ts';

export const ATTEMPT_STATUSES = ['passed', 'failed', 'infrastructure-error', 'ungraded'] as const;
export const AttemptStatusSchema = z.enum(ATTEMPT_STATUSES);
export type AttemptStatus = z.infer<typeof AttemptStatusSchema>;

/** Statuses that end an attempt for good: a resumed run skips them. An infrastructure error is tried again. */
export const FINISHED_STATUSES: readonly AttemptStatus[] = ['passed', 'failed', 'ungraded'];

/** Where a try broke when it broke for reasons that are not the model's. */
export const InfrastructurePhaseSchema = z.enum(['sandbox', 'setup-failed', 'agent', 'grading', 'storage']);
export type InfrastructurePhase = z.infer<typeof InfrastructurePhaseSchema>;

export const AttemptUsageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number(),
});
export type AttemptUsage = z.infer<typeof AttemptUsageSchema>;

/** One try of an attempt (an attempt is tried again after an infrastructure error). */
export const AttemptTrySchema = z.object({
  try: z.number().int(),
  startedAt: z.string(),
  durationMs: z.number(),
  outcome: z.enum(['completed', 'infrastructure-error']),
  stopReason: StopReasonSchema.optional(),
  usage: AttemptUsageSchema,
  trajectoryKey: z.string().optional(),
  infrastructureError: z.object({ phase: InfrastructurePhaseSchema, error: z.string(), message: z.string() }).optional(),
});
export type AttemptTry = z.infer<typeof AttemptTrySchema>;

/**
 * What a grader says about an attempt's diff; extra fields (per-test outcomes, log keys) are kept as given. The
 * harness grader adds its integrity flags and whether the verdict was tampered with.
 */
export const AttemptGradeSchema = z.looseObject({
  passed: z.boolean(),
  reasons: z.array(z.string()).optional(),
  integrity: z.array(IntegrityFlagSchema).optional(),
  integrityFailed: z.boolean().optional(),
});
export type AttemptGrade = z.infer<typeof AttemptGradeSchema>;

/** One layer of the task environment an attempt ran against (from its `env.json` manifest), in brief. */
export const AttemptEnvironmentLayerSchema = z.object({
  /** `python` or `node` (as the manifest says). */
  kind: z.string(),
  /** The layer's cache key (`python-<hex>`): which build it was. */
  key: z.string(),
  /** Packages taken out of the layer (a release of the project under test pulled in by a dependency), with why. */
  removed: z.array(z.object({ name: z.string(), version: z.string(), path: z.string().optional(), reason: z.string().optional() })),
  /** Choices the build made (a pytest pin the index does not have). */
  notes: z.array(z.string()),
});
export type AttemptEnvironmentLayer = z.infer<typeof AttemptEnvironmentLayerSchema>;

/** The task environment an attempt's commands ran against (`SandboxSession.taskEnvironment`), in brief. */
export const AttemptEnvironmentSchema = z.object({
  /** Stable id of the environment (hash of the recipe and the lockfiles). */
  id: z.string(),
  layers: z.array(AttemptEnvironmentLayerSchema),
});
export type AttemptEnvironment = z.infer<typeof AttemptEnvironmentSchema>;

/** At most this many removed packages and notes are kept per layer; a record stays small. */
const MAX_ENVIRONMENT_ITEMS = 50;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
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
  for (const o of Array.isArray(environment.manifests) ? environment.manifests : []) {
    if (!isObject(o)) continue;
    const removed = Array.isArray(o['removed']) ? o['removed'] : [];
    const notes = Array.isArray(o['notes']) ? o['notes'] : [];
    layers.push({
      kind: str(o['kind']) ?? 'unknown',
      key: str(o['key']) ?? '',
      removed: removed
        .filter(isObject)
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

/** The fields of an attempt record (its keys are `evalKeys.attempt`). */
export const AttemptRecordSchema = z.object({
  kind: z.literal('eval-attempt'),
  runId: z.string(),
  attemptId: z.string(),
  taskId: z.string(),
  suite: z.string(),
  mode: HarnessModeSchema,
  /** 0-based attempt number within (task, mode). */
  n: z.number().int(),
  status: AttemptStatusSchema,
  stopReason: StopReasonSchema.optional(),
  /** Usage of the try that counted (the last one). */
  usage: AttemptUsageSchema,
  /** Usage summed over every try, infrastructure errors included: what the endpoint was billed. */
  usageAllTries: AttemptUsageSchema,
  /** The simulated user's model's tokens in the try that counted (tasks with a simulated user); not in `usage`. */
  userUsage: AttemptUsageSchema.optional(),
  turns: z.number().int(),
  durationMs: z.number(),
  trajectoryKey: z.string().optional(),
  diffKey: z.string().optional(),
  grade: AttemptGradeSchema.optional(),
  /** What the sandbox blocked or saw during the try that counted (integrity evidence). */
  observations: z.array(SandboxObservationSchema).optional(),
  /**
   * The task environment the counted try's commands ran against (its id, and each layer's key, removed packages and
   * notes), when the sandbox says (`SandboxSession.taskEnvironment`).
   */
  environment: AttemptEnvironmentSchema.optional(),
  /** Strict mode: the workspace re-audited after the agent finished, before it was removed. */
  historyReaudit: HistoryReauditSchema.optional(),
  /**
   * Set when the attempt failed for integrity, not for a wrong fix: the re-audit found history brought back (or could
   * not read the workspace's repository), the verdict channel caught tampering, or (strict mode) the diff holds a flag
   * aimed at the verdict. Such an attempt's status is `failed`; reports count these apart (`compare-modes`).
   */
  integrityFailure: z.object({ reasons: z.array(z.string()) }).optional(),
  model: z.string(),
  tries: z.number().int(),
  history: z.array(AttemptTrySchema),
  startedAt: z.string(),
  finishedAt: z.string(),
});

/** An attempt record as written and read: its fields and where it is stored. */
export type AttemptRecord = z.infer<typeof AttemptRecordSchema> & { pk: string; sk: string };

/** A stable, path-safe attempt id (it names blobs): `<runId>.<taskId with / as __>.<mode>.<n>`. */
export function evalAttemptId(runId: string, taskId: string, mode: HarnessMode, n: number): string {
  return `${runId}.${taskId.replaceAll('/', '__')}.${mode}.${n}`;
}
