/**
 * Extracts decision records and stores them: from an eval run's attempts (the harness's events and sandbox
 * observations, the judge's failed criteria, and, for failed attempts, a locator model) and from feedback events (a
 * person's comment on a message of a consented trajectory, read through `readTrajectoryForTraining` only, and only
 * from the CURRENT vote of its feedbackKey: a superseded vote gives nothing, a later vote without consent withdraws it).
 * Every hint goes through the leakage check against the task's secrets; a hint that fails it is stored `rejected`
 * (kept to be seen, never trained on). Extraction is idempotent: a decision's id is a hash of where it is and where it
 * came from (a locator model's: of the trajectory and the model, and the model is not asked again); a stored verdict
 * from another checker version or against other task secrets is checked again and the record rewritten.
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { feedbackEventRecord } from '../../feedback/record-codecs.ts';
import { feedbackKeys } from '../../feedback/record-keys.ts';
import { readTrajectoryForTraining, TrainingConsentRequiredError } from '../../feedback/training-trajectory.ts';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../../harness/attempt/read-attempt-records.ts';
import { MAX_TRAJECTORY_BLOB_BYTES, readTrajectoryBlob } from '../../harness/trajectory/read-trajectory-blob.ts';
import type { Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import { JudgementSchema } from '../../judges/schemas.ts';
import { createModel } from '../../models/create-model.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { suiteRecord } from '../../registry/record-codecs.ts';
import { registryKeys } from '../../registry/record-keys.ts';
import type { SuiteTasksSource } from '../../registry/schemas.ts';
import { storedTask } from '../../registry/task-sources.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { DECISION_SOURCE_KINDS, type DecisionRecord, type TrajectoryRef } from '../schemas.ts';
import { checkHintLeakage, EMPTY_SECRETS, taskSecrets, type HintSecrets } from './check-hint-leakage.ts';
import { readHiddenTestFiles, type ReadTestFile } from './hidden-test-files.ts';
import { decisionIdOf, exactTokenSpan, seenBefore, type DecisionCandidate, type DecodeToken, type ExtractorResult, type SkippedDecision } from './decision-candidate.ts';
import { harnessEventDecisions } from './harness-event-decisions.ts';
import { judgeDecisions } from './judge-decisions.ts';
import { locateDecision } from './locate-decision.ts';
import { currentEventOf, personDecisions, personEventProblem } from './person-decisions.ts';
import { readDecision, storeDecision } from './store-decision.ts';

/** The extractor's name and version, written as each record's `lineage.createdBy`. */
export const DECISION_EXTRACTOR = 'flywheel.decisions/1';
/**
 * Bytes of a trajectory decoded at most. The blobs port reads a whole blob and says nothing of its size first, so the
 * bound is checked after the read and before any parsing.
 */
export const MAX_TRAJECTORY_BYTES = MAX_TRAJECTORY_BLOB_BYTES;

type SourceKind = (typeof DECISION_SOURCE_KINDS)[number];

export const ExtractDecisionsInput = z
  .strictObject({
    /** An eval run (or a sweep shard's run) whose attempts are read. */
    runId: z.string().min(1).max(300).optional(),
    /** Only these attempts of the run (their `attemptId`, or their record key `ATTEMPT#…`). */
    attemptIds: z.array(z.string().min(1).max(400)).min(1).max(1000).optional(),
    /** Feedback events (a person's comment on a message). */
    feedbackEventIds: z.array(z.string().min(1).max(128)).min(1).max(1000).optional(),
    /** The sources to use (default: every one that applies; `locator-model` when a locator model is given). */
    sources: z.array(z.enum(DECISION_SOURCE_KINDS)).min(1).optional(),
    /** A model spec (`openai:<model>@<baseUrl>`, `bedrock:<id>`) that locates the first wrong decision of failed attempts. */
    locatorModel: z.string().min(1).max(500).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.attemptIds !== undefined && v.runId === undefined) ctx.addIssue({ code: 'custom', path: ['runId'], message: 'is required with attemptIds' });
    if (v.runId === undefined && v.feedbackEventIds === undefined) ctx.addIssue({ code: 'custom', path: ['runId'], message: 'give runId or feedbackEventIds' });
    if (Array.isArray(v.sources) && v.sources.includes('locator-model') && v.locatorModel === undefined) ctx.addIssue({ code: 'custom', path: ['locatorModel'], message: "is required when sources has 'locator-model'" });
    // Checked even when other fields failed, so a client sees every problem at once.
  }, { when: (payload) => typeof payload.value === 'object' && payload.value !== null });
export type ExtractDecisionsRequest = z.input<typeof ExtractDecisionsInput>;

const Counts = z.object({ usable: z.number().int(), rejected: z.number().int() });
export const ExtractDecisionsResultSchema = z.object({
  /** Records stored now, and records found stored before (the same decision extracted again). */
  created: z.number().int(),
  existing: z.number().int(),
  /** Of `existing`: records checked again (another leakage checker or other task secrets) and rewritten. */
  rechecked: z.number().int(),
  byStatus: Counts,
  bySource: z.record(z.string(), Counts),
  decisionIds: z.array(z.string()),
  /** What gave no record, and why (no consent, no messageId, a quote in two messages, a locator answer naming no message, …). `byStatus` counts the statuses as stored after this call. */
  skipped: z.array(z.object({ source: z.string(), ref: z.string(), reason: z.string() })),
});
export type ExtractDecisionsResult = z.infer<typeof ExtractDecisionsResultSchema>;

interface Context {
  ports: Pick<Ports, 'records' | 'blobs' | 'now'>;
  createdBy: string;
  decodeToken?: DecodeToken;
  readTestFile?: ReadTestFile;
  result: ExtractDecisionsResult;
}

export interface ExtractDecisionsOptions {
  createdBy?: string;
  /** The policy's tokenizer, token by token: decisions get an exact token span when it finds one. */
  decodeToken?: DecodeToken;
  /** Without `attemptIds`, a run with more attempts than this is refused (a request's bound); default: no bound. */
  maxAttemptsWithoutIds?: number;
  /** Reads a hidden test file of a task whose tests are files (default: from a Harbor task's folder). */
  readTestFile?: ReadTestFile;
}

/**
 * @example
 * const result = await extractDecisions(ports, { runId: 'nightly-1', locatorModel: 'openai:qwen@http://127.0.0.1:8000/v1' });
 * result.byStatus; // { usable: 12, rejected: 1 }
 * await extractDecisions(ports, { feedbackEventIds: ['fb-1'] }); // a person's comment → a 'person-comment' record
 * @throws ValidationError naming the field of a bad request.
 */
export async function extractDecisions(
  ports: Pick<Ports, 'records' | 'blobs' | 'now'>,
  input: Omit<ExtractDecisionsRequest, 'locatorModel'> & { locatorModel?: string | ModelsPort },
  options: ExtractDecisionsOptions = {},
): Promise<ExtractDecisionsResult> {
  const port = typeof input.locatorModel === 'object' ? input.locatorModel : undefined;
  const request = parseInput(ExtractDecisionsInput, { ...input, locatorModel: port ? port.id : input.locatorModel }, 'extraction');
  let locator: ModelsPort | undefined = port;
  if (!locator && request.locatorModel !== undefined) {
    try {
      locator = createModel(request.locatorModel);
    } catch (error) {
      throw new ValidationError(`locatorModel: ${(error as Error).message}`, [{ path: 'locatorModel', message: (error as Error).message }]);
    }
  }
  const sources = new Set<SourceKind>(request.sources ?? (['harness-event', 'judge', 'person', ...(locator ? ['locator-model' as const] : [])] as SourceKind[]));
  const ctx: Context = {
    ports,
    createdBy: options.createdBy ?? DECISION_EXTRACTOR,
    ...(options.decodeToken ? { decodeToken: options.decodeToken } : {}),
    ...(options.readTestFile ? { readTestFile: options.readTestFile } : {}),
    result: { created: 0, existing: 0, rechecked: 0, byStatus: { usable: 0, rejected: 0 }, bySource: {}, decisionIds: [], skipped: [] },
  };
  if (request.runId !== undefined) await fromRun(ctx, request.runId, request.attemptIds, sources, locator, options.maxAttemptsWithoutIds);
  if (request.feedbackEventIds !== undefined && sources.has('person')) for (const id of request.feedbackEventIds) await fromFeedback(ctx, id);
  return ctx.result;
}

async function fromRun(ctx: Context, runId: string, only: readonly string[] | undefined, sources: ReadonlySet<SourceKind>, locator: ModelsPort | undefined, maxWithoutIds: number | undefined): Promise<void> {
  const wanted = only && new Set(only.map((a) => a.replace(/^ATTEMPT#/, '')));
  const all = await listAttemptRecords(ctx.ports.records, runId);
  if (!wanted && maxWithoutIds !== undefined && all.length > maxWithoutIds) {
    throw new ValidationError(`run ${runId} has ${all.length} attempts: name at most ${maxWithoutIds} of them in attemptIds per request`, [
      { path: 'attemptIds', message: `required when the run has more than ${maxWithoutIds} attempts (it has ${all.length})` },
    ]);
  }
  const attempts = all.filter((a) => !wanted || wanted.has(a.attemptId) || wanted.has(a.sk.replace(/^ATTEMPT#/, '')));
  if (attempts.length === 0) ctx.result.skipped.push({ source: 'harness-event', ref: runId, reason: only ? 'none of these attempts is stored under the run' : 'the run has no attempts' });
  const secretsOf = new Map<string, Promise<{ secrets: HintSecrets; criteria: Record<string, string> }>>();
  for (const attempt of attempts) {
    const ref = attempt.attemptId;
    if (attempt.status === 'infrastructure-error') {
      ctx.result.skipped.push({ source: 'harness-event', ref, reason: 'an infrastructure error: not the model’s decisions' });
      continue;
    }
    // The final try's trajectory, as the dataset builder reads it (a decision joins its rollout by this key).
    const trajectoryKey = attempt.history.at(-1)?.trajectoryKey ?? attempt.trajectoryKey;
    if (!trajectoryKey) {
      ctx.result.skipped.push({ source: 'harness-event', ref, reason: 'the attempt has no trajectory' });
      continue;
    }
    const trajectory = await readTrajectory(ctx, trajectoryKey, ref, 'harness-event');
    if (!trajectory) continue;
    const taskKey = `${attempt.suite}\u0000${attempt.taskId}`;
    if (!secretsOf.has(taskKey)) secretsOf.set(taskKey, loadTaskSecrets(ctx, attempt));
    const { secrets, criteria } = await secretsOf.get(taskKey)!;
    const trajRef: TrajectoryRef = {
      blobKey: trajectoryKey,
      attemptId: attempt.attemptId,
      taskId: attempt.taskId,
      suite: attempt.suite,
      runId: attempt.runId,
      ...(trajectory.header.policy ? { checkpoint: trajectory.header.policy.checkpoint } : {}),
    };
    const results: ExtractorResult[] = [];
    if (sources.has('harness-event')) results.push(harnessEventDecisions(trajectory, { ...(attempt.observations ? { observations: attempt.observations } : {}) }));
    if (sources.has('judge')) {
      const judgement = JudgementSchema.safeParse(attempt.grade?.['judgement']);
      if (judgement.success) results.push(judgeDecisions(trajectory, judgement.data, criteria));
    }
    if (sources.has('locator-model') && locator && attempt.status === 'failed') results.push(await locatedOnce(ctx, locator, trajectory, trajRef, ref));
    for (const r of results) await store(ctx, trajectory, trajRef, r, secrets);
  }
}

async function fromFeedback(ctx: Context, eventId: string): Promise<void> {
  const key = feedbackKeys.event(eventId);
  const event = feedbackEventRecord.decodeIfPresent(await ctx.ports.records.get(key.pk, key.sk));
  if (!event) {
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason: 'no such feedback event' });
    return;
  }
  // The vote that counts is the current one of its feedbackKey: a later vote replaces this one, and a later vote without
  // consent withdraws it. Consent is checked on the current event, before the trajectory is touched.
  const current = await currentEventOf(ctx, event);
  if (current.eventId !== event.eventId) {
    const reason = current.trainingConsent !== true ? `training consent withdrawn by the newer vote ${current.eventId}: the trajectory is not read` : `superseded by the newer vote ${current.eventId}`;
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason });
    return;
  }
  const problem = personEventProblem(event);
  if (problem) {
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason: problem });
    return;
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readTrajectoryForTraining(ctx.ports.blobs, event);
  } catch (error) {
    if (!(error instanceof TrainingConsentRequiredError)) throw error;
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason: 'no training consent: the trajectory is not read' });
    return;
  }
  if (!bytes) {
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason: 'the trajectory blob is gone' });
    return;
  }
  const read = readTrajectoryBlob(bytes);
  if ('problem' in read) {
    ctx.result.skipped.push({ source: 'person', ref: eventId, reason: read.problem });
    return;
  }
  const { trajectory } = read;
  const trajRef: TrajectoryRef = {
    blobKey: event.trajectory!.blobKey,
    attemptId: trajectory.header.attemptId,
    ...(trajectory.header.taskId !== undefined ? { taskId: trajectory.header.taskId } : {}),
    ...(trajectory.header.suite !== undefined ? { suite: trajectory.header.suite } : {}),
    feedbackEventId: event.eventId,
    ...(trajectory.header.policy ? { checkpoint: trajectory.header.policy.checkpoint } : {}),
  };
  // A production trajectory has no hidden tests: the hint may say anything the person saw fit, bar nothing.
  await store(ctx, trajectory, trajRef, personDecisions(trajectory, event), EMPTY_SECRETS);
}

async function readTrajectory(ctx: Context, key: string, ref: string, source: SkippedDecision['source']): Promise<Trajectory | undefined> {
  const bytes = await ctx.ports.blobs.get(key);
  if (!bytes) {
    ctx.result.skipped.push({ source, ref, reason: `the trajectory blob ${key} is gone` });
    return undefined;
  }
  const read = readTrajectoryBlob(bytes);
  if ('problem' in read) {
    ctx.result.skipped.push({ source, ref, reason: read.problem });
    return undefined;
  }
  return read.trajectory;
}

/** The locator's decision on a trajectory: the stored one when this model located it before (no second model call). */
async function locatedOnce(ctx: Context, locator: ModelsPort, trajectory: Trajectory, trajRef: TrajectoryRef, ref: string): Promise<ExtractorResult> {
  const id = decisionIdOf(trajRef.blobKey, '', { kind: 'locator-model', model: locator.id, reason: '' });
  const stored = await readDecision(ctx.ports.records, trajRef.attemptId, id);
  if (!stored) return locateDecision(locator, trajectory, ref);
  const candidate: DecisionCandidate = {
    messageId: stored.messageId,
    turn: stored.turn,
    ...(stored.tokenSpan ? { tokenSpan: stored.tokenSpan } : {}),
    ...(stored.charSpan ? { charSpan: stored.charSpan } : {}),
    hintClass: stored.hintClass,
    hint: stored.hint,
    source: stored.source,
  };
  return { candidates: [candidate], skipped: [] };
}

/**
 * The task's secrets and rubric, read as the registry's suites store tasks (`storedTask`: task records, or task JSON
 * under the suite's blob prefix). Hidden tests given as files (Harbor's `tests/`, no test patch) are read by content;
 * when any cannot be read the secrets are `unavailable` (a hint not written by code is then rejected).
 */
async function loadTaskSecrets(ctx: Context, attempt: AttemptRecord): Promise<{ secrets: HintSecrets; criteria: Record<string, string> }> {
  const suiteKey = registryKeys.suite(attempt.suite);
  const suite = suiteRecord.decodeIfPresent(await ctx.ports.records.get(suiteKey.pk, suiteKey.sk));
  const records: SuiteTasksSource = { kind: 'records', sk: 'TASK' };
  const source = suite && suite.tasks.kind !== 'folder' ? suite.tasks : records;
  let task = await storedTask(ctx.ports, attempt.suite, source, attempt.taskId);
  if (!task && source !== records) task = await storedTask(ctx.ports, attempt.suite, records, attempt.taskId);
  if (!task || (task['failToPass'] === undefined && task['instruction'] === undefined)) {
    return { secrets: { ...EMPTY_SECRETS, unavailable: `the task ${attempt.suite}/${attempt.taskId} is not in the registry: its hidden tests cannot be checked against` }, criteria: {} };
  }
  const criteria: Record<string, string> = {};
  if (Array.isArray(task['rubric'])) {
    task['rubric'].forEach((c: unknown, i) => {
      if (typeof c === 'string') criteria[`c${i + 1}`] = c;
      else if (c !== null && typeof c === 'object' && typeof (c as { criterion?: unknown }).criterion === 'string') {
        const id = (c as { id?: unknown }).id;
        criteria[typeof id === 'string' && id !== '' ? id : `c${i + 1}`] = (c as { criterion: string }).criterion;
      }
    });
  }
  const files = await readHiddenTestFiles(task, ctx.readTestFile);
  if ('unavailable' in files) return { secrets: { ...taskSecrets(task), unavailable: files.unavailable }, criteria };
  return { secrets: taskSecrets(task, files.contents), criteria };
}

async function store(ctx: Context, trajectory: Trajectory, ref: TrajectoryRef, extracted: ExtractorResult, secrets: HintSecrets): Promise<void> {
  ctx.result.skipped.push(...extracted.skipped);
  const now = ctx.ports.now();
  for (const c of extracted.candidates) {
    const record = buildRecord(trajectory, ref, withTokenSpan(trajectory, c, ctx.decodeToken), secrets, now, ctx.createdBy);
    const { created, rewritten, stored } = await storeDecision(ctx.ports.records, record);
    if (created) ctx.result.created++;
    else ctx.result.existing++;
    if (rewritten) ctx.result.rechecked++;
    ctx.result.byStatus[stored.status]++;
    const bySource = (ctx.result.bySource[c.source.kind] ??= { usable: 0, rejected: 0 });
    bySource[stored.status]++;
    ctx.result.decisionIds.push(record.decisionId);
  }
}

function withTokenSpan(trajectory: Trajectory, c: DecisionCandidate, decodeToken: DecodeToken | undefined): DecisionCandidate {
  if (!decodeToken || c.tokenSpan) return c;
  const message = trajectory.steps.find((s) => s.type === 'assistant' && s.messageId === c.messageId);
  const tokenSpan = message?.type === 'assistant' ? exactTokenSpan(message, c.charSpan, decodeToken) : undefined;
  return tokenSpan ? { ...c, tokenSpan } : c;
}

/** The record of a candidate: its id, the leakage check against the secrets and what the student saw, lineage. */
export function buildRecord(trajectory: Trajectory, ref: TrajectoryRef, c: DecisionCandidate, secrets: HintSecrets, now: Date, createdBy: string): DecisionRecord {
  const leakage = checkHintLeakage(c.hint.text, { ...secrets, seen: seenBefore(trajectory, c.messageId) }, now, { byRule: c.hint.by === 'rule' });
  return {
    decisionId: decisionIdOf(ref.blobKey, c.messageId, c.source),
    trajectory: ref,
    messageId: c.messageId,
    turn: c.turn,
    ...(c.tokenSpan ? { tokenSpan: c.tokenSpan } : {}),
    ...(c.charSpan ? { charSpan: c.charSpan } : {}),
    hintClass: c.hintClass,
    hint: c.hint,
    insertion: { at: 'before-decision', role: 'user' },
    source: c.source,
    leakage,
    status: leakage.passed ? 'usable' : 'rejected',
    lineage: { createdBy, createdAt: now.toISOString(), datasets: [] },
  };
}
