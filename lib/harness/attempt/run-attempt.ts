import type { BlobsPort } from '../../ports/blobs.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { backoffDelayMs, sleep } from '../../models/retry.ts';
import { runAgent, type RunAgentResult } from '../agent/run-agent.ts';
import type { HistoryReaudit, SandboxObservation, SandboxProvider, SandboxSession } from '../sandbox/sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';
import type { Task } from '../task/task-schema.ts';
import { InfrastructureErrorNames } from '../trajectory/infrastructure-errors.ts';
import { storeTrajectory } from '../trajectory/store-trajectory.ts';
import type { Trajectory } from '../trajectory/trajectory-schema.ts';
import {
  environmentFacts,
  type AttemptEnvironment,
  type AttemptGrade,
  type AttemptRecord,
  type AttemptTry,
  type AttemptUsage,
  type InfrastructurePhase,
} from './attempt-record.ts';
import { attemptRecord } from './record-codecs.ts';
import { evalKeys } from './record-keys.ts';

/**
 * Runs one attempt of a task end to end: sandbox, setup command, agent loop, trajectory, diff, grading, record.
 *
 * Failures are sorted by whose they are. A sandbox that does not start, a setup command that fails, a model endpoint
 * that stays down, a grader that cannot set up: each is an infrastructure error of that try — the try is kept in the
 * record's `history`, the attempt is tried again (up to `retry.maxTries`, with exponential backoff and jitter), and if
 * every try breaks the attempt ends as `infrastructure-error`, which reports count apart and never score. Anything
 * the model did (a wrong fix, a limit hit, a rejected request) is graded as usual.
 *
 * @example
 * const record = await runAttempt({
 *   runId: 'r1', n: 0, task, sourceDir: '/srv/repos/calc', mode: 'strict', model, provider: new NamespaceSandboxProvider(),
 *   ports, attemptId: evalAttemptId('r1', task.id, 'strict', 0), grade: myGrader,
 * });
 * console.log(record.status); // 'passed' | 'failed' | 'infrastructure-error' | 'ungraded'
 */
export interface AttemptRetryPolicy {
  /** Tries in all, the first included. Default 3. */
  maxTries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_ATTEMPT_RETRY: AttemptRetryPolicy = { maxTries: 3, baseDelayMs: 2_000, maxDelayMs: 60_000 };

export interface GradeRequest {
  task: Task;
  /** The attempt's harness mode: strict grading fails the diff's flags aimed at the verdict. */
  mode?: HarnessMode;
  sourceDir: string;
  baseCommit?: string;
  diff: string;
  attemptId: string;
  /** The try's trajectory, for integrity flags from its tool calls. */
  trajectory?: Pick<Trajectory, 'steps'>;
}

/**
 * Grades a diff (gradeAttempt behind an adapter). Throwing means grading could not run — an infrastructure error of
 * the try, retried — never that the model failed.
 */
export type AttemptGrader = (request: GradeRequest) => Promise<AttemptGrade>;

export interface RunAttemptInput {
  runId: string;
  /** 0-based attempt number within (task, mode). */
  n: number;
  task: Task;
  /** The task's repository on this machine. */
  sourceDir: string;
  mode: HarnessMode;
  model: ModelsPort;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  attemptId: string;
  /** The checkpoint under test, recorded on every assistant message. */
  policy?: { checkpoint: string; weightVersion?: string | number };
  /**
   * The simulated user's model, for tasks whose `behaviour` has a simulated user (`lib/harness/agent/simulated-user.ts`).
   * Never defaulted to `model`: the policy under test would write its own user's lines.
   */
  userModel?: ModelsPort;
  /** The price of `model` and of `userModel` (dollars per million tokens), for the task's cost limit. */
  pricing?: { promptPerMillion: number; completionPerMillion: number };
  userPricing?: { promptPerMillion: number; completionPerMillion: number };
  /** Without a grader the attempt ends `ungraded` (its diff is stored for later grading). */
  grade?: AttemptGrader;
  retry?: Partial<AttemptRetryPolicy>;
  /** Wall clock of the task's setup command; default 10 minutes. */
  setupTimeoutMs?: number;
  /** Bytes of output kept per sandbox command; default 1 MiB. */
  commandOutputBytes?: number;
  /** The tries an earlier run made (a resumed infrastructure error): kept, and counted on from. */
  priorHistory?: AttemptTry[];
  /** When the attempt first started (an earlier run's), for the record. */
  firstStartedAt?: string;
  /** Told about each try that broke, before the next one. */
  onTryFailed?: (attempt: AttemptTry) => void;
  now?: () => Date;
  random?: () => number;
}

class InfrastructureFailure extends Error {
  readonly phase: InfrastructurePhase;
  readonly errorName: string;
  constructor(phase: InfrastructurePhase, errorName: string, message: string) {
    super(message);
    this.phase = phase;
    this.errorName = errorName;
  }
}

/** The name and message of whatever was thrown (an Error, an SDK's error-like object, or anything else). */
function errorFacts(error: unknown): { name: string; message: string } {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error) };
  const name = 'name' in error && typeof error.name === 'string' ? error.name : 'Error';
  const message = 'message' in error && typeof error.message === 'string' ? error.message : String(error);
  return { name, message };
}

/** What was thrown, as an infrastructure failure of `phase` (its message after `prefix`). */
function infrastructureFailure(phase: InfrastructurePhase, error: unknown, prefix = ''): InfrastructureFailure {
  const { name, message } = errorFacts(error);
  return new InfrastructureFailure(phase, name, `${prefix}${message}`);
}

/** Observations kept on the record (blocked requests, git commands that needed history); a record stays small. */
const MAX_OBSERVATIONS = 100;

const ZERO: AttemptUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };

function addUsage(a: AttemptUsage, b: AttemptUsage): AttemptUsage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, cachedTokens: a.cachedTokens + b.cachedTokens };
}

/** The commit an attempt starts from, when the task names one. */
export function taskBaseCommit(task: Task): string | undefined {
  if (task.repo.kind === 'git') return task.repo.commit;
  if (task.repo.kind === 'blob') return task.repo.baseCommit;
  return undefined;
}

/** The blob key of an attempt's diff (kept so an ungraded attempt can be graded later). */
export function attemptDiffKey(runId: string, attemptId: string): string {
  return `evals/${runId}/diffs/${attemptId}.patch`;
}

interface TryResult {
  agent: RunAgentResult;
  trajectoryKey: string;
  diff: string;
  observations: SandboxObservation[];
  historyReaudit?: HistoryReaudit;
  environment?: AttemptEnvironment;
}

export async function runAttempt(input: RunAttemptInput): Promise<AttemptRecord> {
  const now = input.now ?? (() => new Date());
  const merged = { ...DEFAULT_ATTEMPT_RETRY, ...input.retry };
  const retry: AttemptRetryPolicy = { ...merged, maxTries: Math.max(1, Math.floor(merged.maxTries)) };
  const baseCommit = taskBaseCommit(input.task);
  const prior = input.priorHistory ?? [];
  const history: AttemptTry[] = [...prior];
  const startedAt = now();
  let usageAllTries = prior.reduce((sum, t) => addUsage(sum, t.usage), ZERO);

  let final: { result: TryResult; grade?: AttemptGrade } | undefined;
  for (let t = prior.length + 1; t <= prior.length + retry.maxTries && !final; t++) {
    const tryStarted = now();
    const tryAttemptId = t === 1 ? input.attemptId : `${input.attemptId}.try${t}`;
    let partial: { usage: AttemptUsage; stopReason?: RunAgentResult['stopReason']; trajectoryKey?: string } = { usage: ZERO };
    try {
      const result = await runOneTry(input, tryAttemptId, baseCommit, (p) => (partial = p));
      const grade = input.grade ? await gradeOrThrow(input, result, baseCommit) : undefined;
      final = { result, ...(grade ? { grade } : {}) };
      usageAllTries = addUsage(usageAllTries, result.agent.usage);
      history.push({
        try: t,
        startedAt: tryStarted.toISOString(),
        durationMs: now().getTime() - tryStarted.getTime(),
        outcome: 'completed',
        stopReason: result.agent.stopReason,
        usage: result.agent.usage,
        trajectoryKey: result.trajectoryKey,
      });
    } catch (error) {
      const failure = error instanceof InfrastructureFailure ? error : infrastructureFailure('storage', error);
      usageAllTries = addUsage(usageAllTries, partial.usage);
      const entry: AttemptTry = {
        try: t,
        startedAt: tryStarted.toISOString(),
        durationMs: now().getTime() - tryStarted.getTime(),
        outcome: 'infrastructure-error',
        ...(partial.stopReason ? { stopReason: partial.stopReason } : {}),
        usage: partial.usage,
        ...(partial.trajectoryKey ? { trajectoryKey: partial.trajectoryKey } : {}),
        infrastructureError: { phase: failure.phase, error: failure.errorName, message: failure.message },
      };
      history.push(entry);
      input.onTryFailed?.(entry);
      if (t < prior.length + retry.maxTries) await sleep(backoffDelayMs({ maxAttempts: retry.maxTries, baseDelayMs: retry.baseDelayMs, maxDelayMs: retry.maxDelayMs, maxRetryAfterMs: retry.maxDelayMs }, t - prior.length - 1, null, input.random));
    }
  }

  const last = history.at(-1)!;
  const integrity = final ? integrityFailureOf(final.result, final.grade) : undefined;
  const status: AttemptRecord['status'] = !final ? 'infrastructure-error' : integrity ? 'failed' : !final.grade ? 'ungraded' : final.grade.passed ? 'passed' : 'failed';
  let diffKey: string | undefined;
  if (final) {
    diffKey = attemptDiffKey(input.runId, input.attemptId);
    await input.ports.blobs.put(diffKey, final.result.diff, { contentType: 'text/x-diff' });
  }
  const finishedAt = now();
  const record: AttemptRecord = {
    ...evalKeys.attempt(input.runId, input.task.id, input.mode, input.n),
    kind: 'eval-attempt',
    runId: input.runId,
    attemptId: input.attemptId,
    taskId: input.task.id,
    suite: input.task.suite,
    mode: input.mode,
    n: input.n,
    status,
    ...(last.stopReason ? { stopReason: last.stopReason } : {}),
    usage: last.usage,
    usageAllTries,
    ...(final?.result.agent.userUsage ? { userUsage: final.result.agent.userUsage } : {}),
    turns: final?.result.agent.turns ?? 0,
    durationMs: prior.reduce((sum, t) => sum + t.durationMs, 0) + finishedAt.getTime() - startedAt.getTime(),
    ...(last.trajectoryKey ? { trajectoryKey: last.trajectoryKey } : {}),
    ...(diffKey ? { diffKey } : {}),
    ...(final?.grade ? { grade: final.grade } : {}),
    ...(final?.result.environment ? { environment: final.result.environment } : {}),
    ...(final ? { observations: final.result.observations } : {}),
    ...(final?.result.historyReaudit ? { historyReaudit: final.result.historyReaudit } : {}),
    ...(integrity ? { integrityFailure: integrity } : {}),
    model: input.model.id,
    tries: history.length,
    history,
    startedAt: input.firstStartedAt ?? startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
  };
  // Idempotent overwrite: the (task, mode, n) key is natural, so a retried write lands on the same item.
  await input.ports.records.put(attemptRecord.encode(record));
  return record;
}

async function runOneTry(
  input: RunAttemptInput,
  tryAttemptId: string,
  baseCommit: string | undefined,
  report: (partial: { usage: AttemptUsage; stopReason?: RunAgentResult['stopReason']; trajectoryKey?: string }) => void,
): Promise<TryResult> {
  const { task } = input;
  let session: SandboxSession;
  try {
    session = await input.provider.open({
      sourceDir: input.sourceDir,
      ...(baseCommit ? { baseCommit } : {}),
      mode: input.mode,
      networkAllowList: task.networkAllowList,
      limits: { commandTimeoutMs: task.limits.commandSeconds * 1000, outputBytes: input.commandOutputBytes ?? 1 << 20 },
    });
  } catch (error) {
    throw infrastructureFailure('sandbox', error);
  }
  try {
    if (task.setupCommand) {
      let setup;
      try {
        setup = await session.exec(task.setupCommand, { timeoutMs: input.setupTimeoutMs ?? 600_000 });
      } catch (error) {
        throw infrastructureFailure('setup-failed', error);
      }
      if (setup.exitCode !== 0) {
        const tail = `${setup.stdout}\n${setup.stderr}`.trim().slice(-2000);
        throw new InfrastructureFailure('setup-failed', InfrastructureErrorNames.setupFailed, `setup command exited ${setup.exitCode ?? setup.signal}${setup.limit ? ` (${setup.limit} limit)` : ''}: ${tail}`);
      }
    }
    const agent = await runAgent({
      attemptId: tryAttemptId,
      instruction: task.instruction,
      model: input.model,
      sandbox: session,
      limits: task.limits,
      taskId: task.id,
      suite: task.suite,
      ...(input.policy ? { policy: input.policy } : {}),
      ...(input.now ? { now: input.now } : {}),
      ...(task.behaviour ? { behaviour: task.behaviour } : {}),
      ...(input.userModel ? { userModel: input.userModel } : {}),
      ...(input.pricing ? { pricing: input.pricing } : {}),
      ...(input.userPricing ? { userPricing: input.userPricing } : {}),
    });
    let trajectoryKey: string;
    try {
      trajectoryKey = await storeTrajectory(input.ports.blobs, agent.trajectory);
    } catch (error) {
      report({ usage: agent.usage, stopReason: agent.stopReason });
      throw infrastructureFailure('storage', error, 'storing the trajectory failed: ');
    }
    report({ usage: agent.usage, stopReason: agent.stopReason, trajectoryKey });
    if (agent.infrastructureError) {
      const reason = agent.stopReason.kind === 'infrastructure-error' ? agent.stopReason : { error: InfrastructureErrorNames.infrastructure, message: 'agent loop reported an infrastructure error' };
      throw new InfrastructureFailure('agent', reason.error, reason.message);
    }
    // The environment the commands ran against, as the sandbox says (never re-derived here).
    const environment = sessionEnvironment(session);
    // After the agent, before the copy goes: did anything it could reach bring history back? A failed re-audit fails
    // the attempt as an integrity failure (see `integrityFailureOf`).
    const historyReaudit = await reauditSession(session);
    const result: TryResult = {
      agent,
      trajectoryKey,
      diff: agent.diff ?? '',
      observations: session.observations().slice(0, MAX_OBSERVATIONS),
      ...(historyReaudit ? { historyReaudit } : {}),
      ...(environment ? { environment } : {}),
    };
    await closeSession(session);
    return result;
  } catch (error) {
    await session.close().catch(() => undefined);
    throw error;
  }
}

/** The key facts of the session's task environment, when it exposes one; one it exposes oddly is left out. */
function sessionEnvironment(session: SandboxSession): AttemptEnvironment | undefined {
  try {
    const env = session.taskEnvironment;
    return env && typeof env.id === 'string' ? environmentFacts(env) : undefined;
  } catch {
    return undefined;
  }
}

/** The session's post-attempt history re-audit; one that cannot run is recorded as not ok, naming why. */
async function reauditSession(session: SandboxSession): Promise<HistoryReaudit | undefined> {
  if (!session.reaudit) return undefined;
  const started = Date.now();
  try {
    return await session.reaudit();
  } catch (error) {
    return {
      ok: false,
      newObjects: 0,
      recoveredHistory: [],
      matchingLaterContent: 0,
      problems: [`re-audit failed: ${errorFacts(error).message}`],
      method: 'full-listing',
      durationMs: Date.now() - started,
    };
  }
}

/** A sandbox that cannot be closed (history not restored, copy not removed) breaks the try: not the model's doing. */
async function closeSession(session: SandboxSession): Promise<void> {
  try {
    await session.close();
  } catch (error) {
    throw infrastructureFailure('sandbox', error, 'closing the sandbox failed: ');
  }
}

/**
 * Why a completed try is an integrity failure, if it is: a re-audit that is not ok (history came back, or the
 * workspace's repository could not be read — which the agent can cause, so it fails closed), or a grade that says its
 * verdict was tampered with (`integrityFailed`).
 */
function integrityFailureOf(result: TryResult, grade: AttemptGrade | undefined): { reasons: string[] } | undefined {
  const reasons: string[] = [];
  if (result.historyReaudit && !result.historyReaudit.ok) {
    reasons.push(`history-reaudit-failed: ${result.historyReaudit.problems.join('; ') || 'not ok'}`);
  }
  if (grade?.['integrityFailed'] === true) {
    reasons.push(...(grade.reasons ?? []).filter((r) => r.startsWith('verdict-integrity') || r.startsWith('integrity-flag')));
  }
  return reasons.length > 0 ? { reasons } : undefined;
}

async function gradeOrThrow(input: RunAttemptInput, result: TryResult, baseCommit: string | undefined): Promise<AttemptGrade> {
  try {
    return await input.grade!({
      task: input.task,
      mode: input.mode,
      sourceDir: input.sourceDir,
      ...(baseCommit ? { baseCommit } : {}),
      diff: result.diff,
      attemptId: input.attemptId,
      trajectory: result.agent.trajectory,
    });
  } catch (error) {
    throw infrastructureFailure('grading', error);
  }
}
