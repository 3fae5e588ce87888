/**
 * The grading result as stored on an attempt record (version 1). Large things (the test log) are blobs; the
 * record keeps their keys.
 */
import { z } from 'zod';
import { IntegrityFlagSchema } from '../integrity/integrity-flag.ts';

export const GRADE_RESULT_VERSION = 1 as const;

export const GradedOutcomeSchema = z.enum(['passed', 'failed', 'skipped', 'error', 'missing']);

export const GradeResultSchema = z.object({
  version: z.literal(GRADE_RESULT_VERSION),
  attemptId: z.string(),
  taskId: z.string(),
  passed: z.boolean(),
  /** Why it failed: `code` or `code: detail` (codes in `REASON_CODES`); empty when passed. */
  reasons: z.array(z.string()),
  /** Outcome of every failToPass and passToPass id, keyed by the task's id. */
  perTest: z.record(z.string(), GradedOutcomeSchema),
  collected: z.number().int(),
  expectedCollected: z.number().int(),
  counts: z.object({ passed: z.number().int(), failed: z.number().int(), skipped: z.number().int(), error: z.number().int() }),
  /** Blob key of the test log (`grading/<attemptId>/test.log`), when blobs were given. */
  logKey: z.string().optional(),
  baseCommit: z.string().optional(),
  applyMode: z.enum(['empty', 'exact', 'whitespace-tolerant', 'failed']),
  /** Files the diff touched that grading put back (test files, runner configs). */
  reverted: z.array(z.object({ path: z.string(), kind: z.enum(['task-test-file', 'test-file', 'runner-config', 'dependency-manifest']), action: z.enum(['restored', 'removed']) })),
  reportFormats: z.array(z.string()),
  /** Report files that could not be read. */
  reportProblems: z.array(z.string()),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  integrity: z.array(IntegrityFlagSchema),
  /**
   * True when the attempt failed for tampering with the verdict (reasons `verdict-integrity` / `integrity-flag`):
   * an integrity failure, which reports count apart from wrong fixes.
   */
  integrityFailed: z.boolean().optional(),
  /**
   * Compiled bytecode and caches of the diff that grading did not apply (`*.pyc`, `__pycache__/`, `.pytest_cache/`,
   * an extension module beside a `.py` of the same name; see `compiled-files.ts`), at most 200, those that would
   * have shadowed a source module (`shadowing`, also a `runner-shadowing` flag) first.
   */
  dropped: z
    .array(
      z.object({
        path: z.string(),
        kind: z.enum(['bytecode', 'cache', 'extension-module']),
        shadows: z.string().optional(),
        pyc: z.enum(['timestamp', 'checked-hash', 'unchecked-hash', 'unreadable']).optional(),
        shadowing: z.boolean().optional(),
      }),
    )
    .optional(),
  /** How many files were dropped in all, when more than `dropped` lists. */
  droppedTotal: z.number().int().optional(),
  /** New test files the agent added: kept out of the verdict's run (not flagged, not tampering), listed here. */
  agentTests: z.array(z.string()).optional(),
  /**
   * Where the outcomes came from: `pytest-stream` (the isolated launcher's stream, cross-checked with the JUnit files
   * and pytest's summary; `runners` are the pytest modules that ran) or `reports` (report files and output only).
   */
  channel: z.object({ kind: z.enum(['pytest-stream', 'reports']), sessions: z.number().int(), runners: z.array(z.string()) }).optional(),
});
export type GradeResult = z.infer<typeof GradeResultSchema>;
