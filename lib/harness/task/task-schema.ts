import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { TaskBehaviourSchema } from './behaviour-schema.ts';
import { gradedByJudge, gradedByTests, TaskGradingSchema } from './grading-schema.ts';

/**
 * The task format, version 1: what an attempt needs to start (repo, instruction, setup) and to be graded
 * (test command, failToPass / passToPass ids, test files to revert). Validated on load; every offending field is
 * named. Bump `schemaVersion` on any incompatible change and keep a reader for the old one.
 */
export const TASK_SCHEMA_VERSION = 1 as const;

export const RepoSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local'), path: z.string().min(1) }),
  z.object({ kind: z.literal('git'), url: z.string().min(1), commit: z.string().regex(/^[0-9a-f]{7,64}$/, 'a hex commit id') }),
  z.object({ kind: z.literal('blob'), key: z.string().min(1), baseCommit: z.string().optional() }),
]);

/**
 * The environment a task's commands run against, when the task names one (otherwise the harness builds a cached
 * environment from the base tree's lockfiles: `lib/harness/environment/`, `docs/environments.md`).
 * - `image`: a container image holding the task's toolchain and dependencies (SWE-bench's per-instance images). On
 *   AWS the task's shard runs under a Batch job definition for that image.
 * - `dockerfile`: the Dockerfile the image is built from (Harbor's `environment/Dockerfile`), a path relative to the
 *   task file's folder (or absolute).
 */
export const TaskEnvironmentSchema = z
  .object({
    image: z.string().regex(/^[a-z0-9][a-z0-9._\-/:@]*$/i, 'an image reference (registry/name:tag or @sha256:…)').max(512).optional(),
    dockerfile: z.string().min(1).optional(),
  })
  .refine((e) => e.image !== undefined || e.dockerfile !== undefined, { message: 'an image, a dockerfile, or both' });
export type TaskEnvironment = z.infer<typeof TaskEnvironmentSchema>;

/** One limit taxonomy for the whole harness: the agent loop, the sandbox and the reports all speak it. */
export const LIMIT_KINDS = ['turns', 'tokens', 'time', 'output', 'cost'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

export const LimitsSchema = z.object({
  /** Wall clock for the whole attempt (agent loop), in seconds. */
  wallClockSeconds: z.number().positive().default(1800),
  /** Model turns (assistant messages). */
  turns: z.number().int().positive().default(50),
  /** Prompt + completion tokens over the attempt. */
  tokens: z.number().int().positive().default(2_000_000),
  /** Bytes of tool output returned to the model over the attempt. */
  outputBytes: z.number().int().positive().default(10_000_000),
  /** Dollars, when the model has a price. */
  costUsd: z.number().positive().optional(),
  /** Wall clock of one tool command, in seconds. */
  commandSeconds: z.number().positive().default(300),
});
export type TaskLimits = z.infer<typeof LimitsSchema>;

/** A rubric criterion of a task: its `id` is stable (`c1`…`cn` in order when the task leaves it out). */
export const TaskCriterionSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, _ and -').optional(),
  criterion: z.string().min(1).max(2000),
  weight: z.number().positive().default(1),
});

export const TaskSchema = z.object({
  schemaVersion: z.literal(TASK_SCHEMA_VERSION),
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._\-/]*$/, 'letters, digits, . _ - / only'),
  suite: z.string().min(1),
  split: z.enum(['train', 'held-out']),
  visibility: z.enum(['public', 'private']),
  repo: RepoSourceSchema,
  instruction: z.string().min(1),
  /** Run once in the sandbox before the agent starts (install deps, build). */
  setupCommand: z.string().optional(),
  /** Runs the tests at grading; its reports give per-test outcomes. Optional only when `grading.by` is `judge`. */
  testCommand: z.string().min(1).optional(),
  failToPass: z.array(z.string().min(1)),
  passToPass: z.array(z.string().min(1)).default([]),
  /** Test and runner-config files reverted to the task's version before grading. */
  testFiles: z.array(z.string().min(1)).default([]),
  /** A patch that adds/changes the test files (SWE-bench `test_patch`), applied at grading. */
  testPatch: z.string().optional(),
  /** A reference solution patch, for validating the task. */
  goldPatch: z.string().optional(),
  limits: LimitsSchema.default(LimitsSchema.parse({})),
  networkAllowList: z.array(z.string().min(1)).default([]),
  /** A container image (and its Dockerfile) the task runs in; absent: the cached environment of its lockfiles. */
  environment: TaskEnvironmentSchema.optional(),
  /** Where the task came from (`harbor`, `swe-bench`, `forge`, `report`). */
  origin: z.object({ kind: z.string(), ref: z.string().optional() }).optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
  /**
   * For judge-graded cases (eval cases drafted from failure-mode reports and clusters): the criteria a judge scores the
   * attempt on, beside or instead of tests. Optional; tasks graded by tests alone leave it out.
   */
  rubric: z
    .array(TaskCriterionSchema)
    .min(1)
    .max(20)
    .transform((cs) => cs.map((c, i) => ({ ...c, id: c.id ?? `c${i + 1}` })))
    .refine((cs) => new Set(cs.map((c) => c.id)).size === cs.length, { message: 'criterion ids must be unique' })
    .optional(),
  /** How the task is graded (tests, judge, both; `lib/harness/task/grading-schema.ts`); absent: by tests. */
  grading: TaskGradingSchema.optional(),
  /** User turns, a simulated user, changing tools, fake services (`lib/harness/task/behaviour-schema.ts`). */
  behaviour: TaskBehaviourSchema.optional(),
}).superRefine((task, ctx) => {
  // Tests grade unless the task says a judge alone does; a judge needs a rubric to score.
  if (gradedByTests(task.grading) && task.testCommand === undefined) {
    ctx.addIssue({ code: 'custom', path: ['testCommand'], message: `required unless grading.by is 'judge' (grading.by is '${task.grading?.by ?? 'tests'}')` });
  }
  if (gradedByJudge(task.grading) && task.rubric === undefined) {
    ctx.addIssue({ code: 'custom', path: ['rubric'], message: `required when grading.by is '${task.grading!.by}'` });
  }
  // Checked even when other fields failed (every offending field is named at once): the value may be partly invalid.
}, { when: (payload) => typeof payload.value === 'object' && payload.value !== null });

export type Task = z.infer<typeof TaskSchema>;
export type TaskInput = z.input<typeof TaskSchema>;
export type RepoSource = z.infer<typeof RepoSourceSchema>;

/**
 * Validates a task; throws `Flywheel.ValidationError` listing every offending field (`limits.turns: …`).
 *
 * @example
 * const task = parseTask(JSON.parse(await readFile('task.json', 'utf8')));
 */
export function parseTask(input: unknown, source = 'task'): Task {
  const result = TaskSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  throw new ValidationError(`${source} is not a valid task: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}
