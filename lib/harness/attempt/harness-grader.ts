import { NotFoundError } from '../../errors.ts';
import type { BlobsPort } from '../../ports/blobs.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { resolveJudge } from '../../judges/registry/read-judges.ts';
import { buildAttemptView } from '../../judges/rubric/attempt-view.ts';
import type { JudgeBudget } from '../../judges/judge-conversation.ts';
import { defaultRubricJudge, judgeAttempt, RUBRIC_JUDGE_NAME } from '../../judges/rubric/judge-attempt.ts';
import type { JudgeDefinition } from '../../judges/judge-identity.ts';
import type { Judgement } from '../../judges/schemas.ts';
import { gradeAttempt } from '../grading/grade-attempt.ts';
import { detectIntegrityFlags } from '../integrity/detect-integrity-flags.ts';
import { detectTrajectoryFlags } from '../integrity/detect-trajectory-flags.ts';
import type { IntegrityFlag } from '../integrity/integrity-flag.ts';
import { sandboxTestRunner } from '../grading/sandbox-test-runner.ts';
import type { GradeResult } from '../grading/schemas.ts';
import type { TestRunner } from '../grading/test-runner.ts';
import type { SandboxProvider } from '../sandbox/sandbox.ts';
import { gradedByJudge, gradedByTests, passesGradingRule } from '../task/grading-schema.ts';
import type { Task } from '../task/task-schema.ts';
import type { AttemptGrade } from './attempt-record.ts';
import type { AttemptGrader, GradeRequest } from './run-attempt.ts';

/**
 * Resolves a judge reference (`name` or `name@version`) to its registered definition; throws a `NotFoundError` when
 * the registry has no such judge, version, or promoted version (`registryJudgeResolver` wires `resolveJudge`).
 */
export type JudgeResolver = (ref: string) => Promise<JudgeDefinition>;

/** The judge a grader asks for judge-graded tasks. */
export interface GraderJudge {
  model: ModelsPort;
  /**
   * A fixed definition for every task (tests, benches). Without it: the task's `grading.judge` resolved by `resolve`,
   * else the registry's promoted `rubric-judge`, else `defaultRubricJudge(model.id)`. The task's rubric replaces the
   * definition's (so the judgement's version follows it).
   */
  definition?: JudgeDefinition;
  /** Resolves `grading.judge` and the promoted `rubric-judge` (`registryJudgeResolver(records)`). */
  resolve?: JudgeResolver;
  /**
   * The models port for a registered definition whose `model` is not `model.id` (`createModel`). Without it, or when
   * the ids match, `model` answers, and the definition's `model` is set to `model.id` (so its version says which
   * model answered).
   */
  modelFor?: (spec: string) => ModelsPort;
  budget?: JudgeBudget;
  maxAttempts?: number;
  pricing?: { promptPerMillion: number; completionPerMillion: number };
}

export interface HarnessGraderOptions {
  provider: SandboxProvider;
  blobs?: BlobsPort;
  runTests?: TestRunner;
  /** Without it, a task graded by a judge cannot be graded (`ungradableReason`). */
  judge?: GraderJudge;
  /** The records holding the judge registry: `judge.resolve` defaults to `registryJudgeResolver(records)`. */
  records?: RecordsPort;
}

/**
 * A grader that can say, before an attempt runs, why it cannot grade a task (`runEval` then leaves it ungraded):
 * no judge configured, or a `grading.judge` the registry does not have.
 */
export type HarnessGrader = AttemptGrader & { ungradable(task: Task): string | undefined | Promise<string | undefined> };

/** A reason code (see `REASON_CODES`) and its line when a task needs a judge and none is configured. */
export function judgeNotConfigured(task: Task): string {
  return `judge-not-configured: task ${task.id} is graded by '${task.grading?.by}' and no judge model is configured (--judge-model or FLYWHEEL_JUDGE_MODEL)`;
}

/**
 * Why `grader` cannot grade `task` (a judge-graded task and no judge), or undefined when it can (or when the grader
 * does not say).
 *
 * @example
 * const why = ungradableReason(grade, task); // 'judge-not-configured: …' | undefined
 */
export async function ungradableReason(grader: AttemptGrader | undefined, task: Task): Promise<string | undefined> {
  if (!grader || !('ungradable' in grader) || typeof grader.ungradable !== 'function') return undefined;
  return await (grader as HarnessGrader).ungradable(task);
}

/**
 * A `JudgeResolver` over the judge registry's records (`resolveJudge`: a bare name is its promoted version).
 *
 * @example
 * const grade = harnessGrader({ provider, judge: { model, resolve: registryJudgeResolver(ports.records) } });
 */
export function registryJudgeResolver(records: RecordsPort): JudgeResolver {
  return async (ref) => (await resolveJudge({ records }, ref)).definition;
}

/** A reason code and its line when a task names a judge the registry cannot give (unknown, no promoted version). */
export function judgeNotRegistered(task: Task, ref: string, why: string): string {
  return `judge-not-registered: task ${task.id} names judge '${ref}' (grading.judge): ${why}`;
}

/** A reason code and its line when the judge a task names is not a rubric judge. */
export function judgeNotRubric(task: Task, ref: string, kind: string): string {
  return `judge-not-rubric: task ${task.id} names judge '${ref}' (grading.judge), a ${kind} judge; a rubric judge grades attempts`;
}

type JudgeChoice = { definition: JudgeDefinition } | { unusable: string };

/**
 * The grader an eval uses, by the task's rule (`task.grading`; absent: tests):
 * - tests: `gradeAttempt` (pristine copy + the diff, test files reverted, per-test reports), with the tests run in a
 *   fresh strict sandbox of the same provider — the tests execute the agent's code — and the test log stored in
 *   blobs; in strict mode the diff's flags aimed at the verdict fail the attempt;
 * - judge: the rubric judge (`judgeAttempt`) reads the attempt (instruction, trajectory excerpt, diff, final message,
 *   and the test outcomes when tests ran too). No tests run for a judge-only task (no sandbox is opened for them);
 * - both: the tests, then the judge, who sees their outcomes.
 * The verdict is the task's rule: all tests pass (when tests grade) and score ≥ `grading.minScore` (when a judge
 * grades). The judgement is stored on the grade (`grade.judgement`); a score under the threshold adds the reason
 * `judge-score-below-threshold: 0.5 < 1 (criteria c2 failed)`.
 *
 * What stays a throw (and so an infrastructure error of the try, retried): what `gradeAttempt` throws (a base commit
 * that is gone, a sandbox that will not start), and a judge endpoint that stays down or rejects the request
 * (`ModelUnavailableError`, `ModelRequestError`). A judge that answers but cannot give a valid verdict on a criterion
 * (after its retries, or with its budget spent) is not the agent's failure either, but it is not a pass: the criterion
 * is voided and counts 0 (it could not be shown to pass), the judgement is `complete: false`, and the grade's reasons
 * say `judge-incomplete: …`. A judge-graded task with no judge configured is never passed: `ungradable` names it so
 * `runEval` leaves the attempt `ungraded`; called anyway, the grade fails with `judge-not-configured`.
 *
 * Which judge: `judge.definition` when given; else the task's `grading.judge` (`name` → its promoted version,
 * `name@version`) resolved in the registry (`judge.resolve`, or `records` through `resolveJudge`), else the promoted
 * `rubric-judge`, else `defaultRubricJudge(judge.model.id)`. Each reference is resolved once per grader (one version
 * for a whole run). A name the registry lacks, or one with no promoted version, is `judge-not-registered`, a judge of
 * another kind `judge-not-rubric`: `ungradable` says so before the attempt (so it ends `ungraded`, never passed, not an
 * infrastructure error). The registered `model` answers through `judge.modelFor`; without it, `judge.model` answers
 * and the definition's model becomes its id (the judgement's version then names the model that answered).
 *
 * A judge-only task runs no tests, so its integrity flags (the diff's and the trajectory's) are computed here,
 * recorded on the grade (`integrity`) and listed to the judge; they do not fail it by themselves.
 *
 * @example
 * const grade = harnessGrader({ provider, blobs: ports.blobs, records: ports.records, judge: { model: judgeModel, modelFor: (spec) => createModel(spec) } });
 * await runAttempt({ ...input, grade });
 */
export function harnessGrader(options: HarnessGraderOptions): HarnessGrader {
  const runTests = options.runTests ?? sandboxTestRunner(options.provider);
  // One resolution per reference for the grader's life: every attempt of a run is judged by the same version.
  const resolved = new Map<string, Promise<JudgeDefinition | undefined>>();
  const resolver = options.judge?.resolve ?? (options.records ? registryJudgeResolver(options.records) : undefined);
  const resolveOnce = (resolve: JudgeResolver, ref: string, fallback: boolean): Promise<JudgeDefinition | undefined> => {
    const key = `${fallback ? 'default:' : ''}${ref}`;
    let p = resolved.get(key);
    if (!p) {
      p = resolve(ref).catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
        if (fallback) return undefined;
        throw error;
      });
      // A failure other than not-found (the store down) is not remembered: the next attempt asks again.
      p.catch(() => resolved.delete(key));
      resolved.set(key, p);
    }
    return p;
  };
  /** The definition a judge-graded task is judged with, or why none can be. */
  const choose = async (task: Task): Promise<JudgeChoice> => {
    const judge = options.judge!;
    if (judge.definition) return { definition: judge.definition };
    const ref = task.grading?.judge;
    if (!resolver) {
      // Without a registry a named judge cannot be honoured: saying so beats grading with another judge.
      return ref !== undefined ? { unusable: judgeNotRegistered(task, ref, 'no judge registry is configured for this grader') } : { definition: defaultRubricJudge(judge.model.id) };
    }
    if (ref === undefined) {
      const promoted = await resolveOnce(resolver, RUBRIC_JUDGE_NAME, true);
      return { definition: promoted && promoted.kind === 'rubric' ? promoted : defaultRubricJudge(judge.model.id) };
    }
    let def: JudgeDefinition | undefined;
    try {
      def = await resolveOnce(resolver, ref, false);
    } catch (error) {
      if (error instanceof NotFoundError) return { unusable: judgeNotRegistered(task, ref, error.message) };
      throw error;
    }
    if (!def) return { unusable: judgeNotRegistered(task, ref, 'not found') };
    if (def.kind !== 'rubric') return { unusable: judgeNotRubric(task, ref, def.kind) };
    return { definition: def };
  };
  /** One client per registered model spec for the grader's life, not one per graded attempt. */
  const modelsBySpec = new Map<string, ModelsPort>();
  /** The model that answers for `def`, and `def` as it is then judged (its model is the one that answered). */
  const answering = (def: JudgeDefinition): { model: ModelsPort; definition: JudgeDefinition } => {
    const judge = options.judge!;
    if (def.model === judge.model.id) return { model: judge.model, definition: def };
    if (judge.modelFor) {
      let model = modelsBySpec.get(def.model);
      if (!model) modelsBySpec.set(def.model, (model = judge.modelFor(def.model)));
      return { model, definition: def };
    }
    return { model: judge.model, definition: { ...def, model: judge.model.id } };
  };
  const grade = async (request: GradeRequest): Promise<AttemptGrade> => {
    const { task } = request;
    const byTests = gradedByTests(task.grading);
    const byJudge = gradedByJudge(task.grading);
    if (byJudge && !options.judge) {
      return { passed: false, reasons: [judgeNotConfigured(task)], ungraded: true };
    }
    const choice = byJudge ? await choose(task) : undefined;
    if (choice && 'unusable' in choice) return { passed: false, reasons: [choice.unusable], ungraded: true };
    const tests: GradeResult | undefined = byTests
      ? await gradeAttempt({
          task,
          sourceDir: request.sourceDir,
          ...(request.baseCommit ? { baseCommit: request.baseCommit } : {}),
          diff: request.diff,
          attemptId: request.attemptId,
          runTests,
          ...(options.blobs ? { blobs: options.blobs } : {}),
          ...(request.trajectory ? { trajectory: request.trajectory } : {}),
          // Flags aimed at the verdict fail strict attempts; lenient ones record them (the stream's checks fail both).
          strict: request.mode !== 'lenient',
        })
      : undefined;
    if (!byJudge) return tests!;
    const judge = options.judge!;
    // A judge-only task runs no tests, so `gradeAttempt` computes no flags: the diff's (and the trajectory's) are
    // computed here and recorded on the grade. They do not fail the attempt (no test verdict to tamper with).
    const integrity: IntegrityFlag[] | undefined = tests
      ? undefined
      : [
          ...detectIntegrityFlags({ diff: request.diff, taskTestFiles: task.testFiles }),
          ...(request.trajectory ? detectTrajectoryFlags(request.trajectory, { taskTestFiles: task.testFiles }) : []),
        ];
    const view = buildAttemptView({
      task,
      ...(request.trajectory ? { trajectory: request.trajectory } : {}),
      diff: request.diff,
      ...(tests ? { tests: { passed: tests.passed, reasons: tests.reasons, perTest: tests.perTest } } : {}),
      ...(integrity && integrity.length > 0 ? { integrity } : {}),
    });
    const chosen = answering((choice as { definition: JudgeDefinition }).definition);
    const judgement = await judgeAttempt(chosen.model, view, {
      judge: chosen.definition,
      ...(judge.budget ? { budget: judge.budget } : {}),
      ...(judge.maxAttempts !== undefined ? { maxAttempts: judge.maxAttempts } : {}),
      ...(judge.pricing ? { pricing: judge.pricing } : {}),
    });
    const reasons = [...(tests?.reasons ?? []), ...judgeReasons(judgement, task.grading!.minScore)];
    const passed = passesGradingRule(task.grading, { ...(tests ? { testsPassed: tests.passed } : {}), score: judgement.score });
    return { ...(tests ?? {}), passed, reasons, judgement, ...(tests ? { testsPassed: tests.passed } : { integrity: integrity ?? [] }) };
  };
  return Object.assign(grade, {
    ungradable: async (task: Task) => {
      if (!gradedByJudge(task.grading)) return undefined;
      if (!options.judge) return judgeNotConfigured(task);
      const choice = await choose(task);
      return 'unusable' in choice ? choice.unusable : undefined;
    },
  });
}

/** The reasons a judgement adds to a grade: the score under the threshold, and voided criteria. */
export function judgeReasons(judgement: Judgement, minScore: number): string[] {
  const reasons: string[] = [];
  if (judgement.score < minScore) {
    const failed = judgement.criteria.filter((c) => c.verdict === 'fail' || c.voided !== undefined).map((c) => c.id);
    reasons.push(`judge-score-below-threshold: ${round(judgement.score)} < ${minScore}${failed.length > 0 ? ` (criteria ${failed.join(', ')} failed)` : ''}`);
  }
  const voided = judgement.criteria.filter((c) => c.voided !== undefined);
  if (voided.length > 0) reasons.push(`judge-incomplete: ${voided.map((c) => `${c.id} voided (${c.voided})`).join('; ')}`);
  return reasons;
}

function round(x: number): string {
  return String(Math.round(x * 1000) / 1000);
}
