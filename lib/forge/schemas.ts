/**
 * The forge's input (a repository, how to set it up and test it, limits) and the shapes it records: the baseline,
 * one record per candidate (certified, rejected with its reason, skipped, duplicate) and the forged task.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';

/** Runners whose per-test filter the forge knows (to run only the tests that touch the deleted code first). */
export const RUNNER_KINDS = ['pytest', 'node-test', 'vitest', 'jest', 'go', 'other'] as const;
export type RunnerKind = (typeof RUNNER_KINDS)[number];

export const ForgeRepoSchema = z.union([
  z.object({ kind: z.literal('local'), path: z.string().min(1), commit: z.string().optional() }),
  z.object({ kind: z.literal('git'), url: z.string().min(1), commit: z.string().regex(/^[0-9a-f]{7,64}$/, 'a hex commit id').optional() }),
]);
export type ForgeRepo = z.infer<typeof ForgeRepoSchema>;

export const ForgeSpecSchema = z.object({
  /** A local path (git checkout or plain files) or a git URL with an optional commit. */
  repo: ForgeRepoSchema,
  /** The repository's name in task ids (default: the folder or URL's last part). */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only').optional(),
  /** Runs once per sandbox before the tests (install dependencies, build). */
  setupCommand: z.string().min(1).optional(),
  /**
   * Runs the whole suite and leaves per-test reports (see `lib/harness/grading/test-runner.ts`). Absent: derived from
   * the repository (`runner/resolve-runner.ts`: pytest, vitest, jest, node's runner, go test).
   */
  testCommand: z.string().min(1).optional(),
  runner: z
    .object({
      kind: z.enum(RUNNER_KINDS).default('other'),
      /**
       * The test command for some test files only, `{files}` standing for them (space-separated, shell-quoted; `{dirs}`
       * for their folders, as go takes packages); used for the fast first pass. Absent: derived from the test command
       * (`runner/derive-filter.ts`), so it keeps the command's environment and working directory.
       */
      filterCommand: z.string().refine((s) => s.includes('{files}') || s.includes('{dirs}'), 'holds {files} or {dirs}').optional(),
    })
    .default({ kind: 'other' }),
  /** Extra report globs relative to the repository, beyond `$FLYWHEEL_REPORT_DIR/*`. */
  reportGlobs: z.array(z.string().min(1)).default([]),
  /** Baseline and oracle runs (tests that ever fail across them are flaky). */
  k: z.number().int().min(1).max(20).default(3),
  maxTasks: z.number().int().positive().default(10),
  /** Candidates tried at most (certified or not); default 20 × maxTasks. */
  maxCandidates: z.number().int().positive().optional(),
  languages: z.array(z.string().min(1)).optional(),
  includePaths: z.array(z.string().min(1)).default([]),
  excludePaths: z.array(z.string().min(1)).default([]),
  suite: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only').default('forge'),
  split: z.enum(['train', 'held-out']).default('train'),
  visibility: z.enum(['public', 'private']).default('private'),
  /** Also emit a canary task per certified task (tests that contradict the statement). */
  canaries: z.boolean().default(false),
  /** Hosts the sandbox may reach (package indexes for the setup command). */
  networkAllowList: z.array(z.string().min(1)).default([]),
  /** Skip, without a run, a candidate whose static pre-filter found no test file referencing it. */
  staticSkip: z.boolean().default(true),
  /** Candidates certified at once. */
  concurrency: z.number().int().positive().default(1),
  /** Wall clock of one suite run, in seconds. */
  testTimeoutSeconds: z.number().positive().default(600),
  /** Environment for every sandboxed command (e.g. `PYTHONPATH`). */
  env: z.record(z.string(), z.string()).default({}),
  /**
   * A deletion that fails more than this share of the stable tests breaks the suite (a near import error), not a
   * feature: refused as `breaks-suite`. Applied when the suite has at least `SHARE_CAP_MIN_TESTS` stable tests.
   */
  maxFailingShare: z.number().gt(0).max(1).default(0.35),
  /** Runs of the broken tree's failing tests: only tests failing in every run become fail-to-pass. */
  brokenRuns: z.number().int().min(1).max(10).default(3),
  /** Deletions removing fewer statements than this are one-liners, refused. */
  minRemovedLines: z.number().int().min(1).default(2),
  /** Seed of the spread sampling over the repository (same seed, same order). */
  seed: z.number().int().min(0).default(0),
});
/** Suites smaller than this are not judged by the share of tests a deletion fails. */
export const SHARE_CAP_MIN_TESTS = 20;
export type ForgeSpec = z.infer<typeof ForgeSpecSchema>;
export type ForgeSpecInput = z.input<typeof ForgeSpecSchema>;
/** A spec whose test command is known (given, or derived from the repository by `resolveRunner`). */
export type RunnableForgeSpec = ForgeSpec & { testCommand: string };

/**
 * Validates a forge spec; throws `Flywheel.ValidationError` naming every offending field.
 *
 * @example
 * const spec = parseForgeSpec({ repo: { kind: 'local', path: '.' }, testCommand: 'pytest -q' });
 */
export function parseForgeSpec(input: unknown): ForgeSpec {
  const r = ForgeSpecSchema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  throw new ValidationError(`forge spec is not valid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

/** Outcome of one test in one run, keyed by the harness's test id. */
export const RunOutcomeSchema = z.enum(['passed', 'failed', 'skipped', 'error', 'missing']);
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

export const BaselineSchema = z.object({
  runs: z.number().int(),
  /** Every test any run reported, with its outcome in each run (missing where a run did not report it). */
  outcomes: z.record(z.string(), z.array(RunOutcomeSchema)),
  /** Passed in every run: the tests certification uses. */
  stable: z.array(z.string()),
  /** Failed, went missing or changed outcome in some run: excluded from certification. */
  flaky: z.array(z.string()),
  /** Skipped in every run (neither stable nor flaky). */
  skipped: z.array(z.string()),
  /** Tests the runs collect (the most any run reported). */
  collected: z.number().int(),
  durationsMs: z.array(z.number()),
  logKeys: z.array(z.string()),
  /** Test-id key → test file, where the reports tell (for filtered runs). */
  testFiles: z.record(z.string(), z.string()).default({}),
  /** The test files the runner itself collected (reported tests from), sorted: what the first pass may run. */
  collectedFiles: z.array(z.string()).default([]),
});
export type Baseline = z.infer<typeof BaselineSchema>;

/** Why a candidate did not become a task. */
export const REJECTION_CODES = [
  'not-exercised',
  'no-test-fails',
  'only-flaky-tests-fail',
  'suite-does-not-run',
  'collection-crash',
  'oracle-failed',
  'do-nothing-passes',
  'leak-found',
  'statement-leaks',
  'duplicate',
  'max-tasks-reached',
  'apply-failed',
  'infrastructure-error',
  'breaks-suite',
  'one-liner',
  'near-duplicate',
  'answer-reachable',
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

export const CandidateStatusSchema = z.enum(['certified', 'rejected', 'skipped', 'duplicate']);
export type CandidateStatus = z.infer<typeof CandidateStatusSchema>;

/** One record per candidate tried: so a team sees why a repository yields few tasks. */
export const CandidateRecordSchema = z.object({
  kind: z.literal('forge-candidate'),
  runId: z.string(),
  candidateId: z.string(),
  strategy: z.string(),
  files: z.array(z.string()),
  symbols: z.array(z.string()),
  status: CandidateStatusSchema,
  /** `certified`, or `rejected:<code>` / `skipped:<code>` / `duplicate:<taskId>`. */
  verdict: z.string(),
  reason: z.enum(REJECTION_CODES).optional(),
  detail: z.string().optional(),
  taskId: z.string().optional(),
  failToPass: z.array(z.string()).optional(),
  durationMs: z.number(),
  /** The public symbol a user calls that the deletion takes away (what the task id names). */
  entryPoint: z.string().optional(),
  /** How the ranking saw it before it was tried (`rank/rank-candidates.ts`). */
  rank: z
    .object({ position: z.number().int(), score: z.number(), isPublic: z.boolean(), removedLines: z.number().int(), difficulty: z.number(), relatedTests: z.number().int().optional() })
    .optional(),
  /** Share of the stable tests the broken tree failed. */
  failingShare: z.number().optional(),
  /** Tests that failed on the broken tree in some runs only: dropped, neither fail-to-pass nor pass-to-pass. */
  flakyDropped: z.array(z.string()).optional(),
  /** Milliseconds of the first pass, the full run on the broken tree, its reruns and the oracle runs. */
  timings: z.object({ firstPassMs: z.number(), fullRunMs: z.number(), oracleMs: z.number(), rerunMs: z.number().optional() }).optional(),
  logKey: z.string().optional(),
  at: z.string(),
});
export type CandidateRecordBody = z.infer<typeof CandidateRecordSchema>;

export const FORGE_TASK_STATUSES = ['active', 'retired'] as const;
export type ForgeTaskStatus = (typeof FORGE_TASK_STATUSES)[number];
