/**
 * The dataset builder: rollouts, rewards and decision records → Parquet training shards and a manifest, in blobs under
 * `datasetKeys(datasetId)`.
 *
 * - **Rollouts.** The attempts of the selected runs and sweeps (`listDatasetSources`): each attempt's final try's
 *   trajectory. Infrastructure errors (the attempt's status, its last try, or the trajectory's stop reason), attempts
 *   without a trajectory or with a malformed one are left out and listed in `excluded` with the reason.
 * - **Held out.** Evals never become training data: an attempt of a private suite (`private-suite`), of a held-out
 *   task (`held-out`), of a public suite whose task's split cannot be read (`split-unknown`), or of a suite the
 *   registry does not know unless its stored task says `split: 'train'` (`suite-unknown`) is listed in `excluded` and
 *   its trajectory is never read (`heldOutCheck`, lib/training/datasets/held-out.ts; lookups cached per build).
 * - **Consent.** Harness attempts are ours (`consent: 'harness'`). A production trajectory comes from a stored feedback
 *   event and is read only through `readTrajectoryForTraining`, and only when the CURRENT vote of the event's
 *   feedbackKey says `trainingConsent: true` (a later vote replaces an earlier one; a later vote without consent
 *   withdraws it); an event without it is listed in `excluded` (`no training consent`) and its trajectory is never
 *   read. A superseded vote is excluded too. Each source used is listed in `sources` with its consent.
 * - **Rewards.** A harness attempt's reward is `rewardOf(spec, attempt)` under its suite's stored reward specification
 *   (tests, the judgement the harness stored on the grade, integrity penalties); without a spec, tests alone (1 passed,
 *   0 failed). An attempt nothing scored (ungraded, no judged criterion) is left out. A feedback trajectory's reward is
 *   1 for a thumbs-up or an accepted change in its current vote, else 0; it is its own GRPO group (`feedback#<eventId>`: no outcome
 *   advantage), so it teaches through its decisions.
 * - **Decisions.** Only records of that very trajectory (`trajectory.blobKey`; for a feedback trajectory, a person's
 *   record only from a current, consenting event on it): attempts that share an id do not share decisions. Each record
 *   used gets the dataset appended to its `lineage.datasets`.
 * - **Rows.** `trajectoryRows`: exact token ids, turns merged while each prompt extends the row, loss mask on the
 *   model's tokens, behaviour log-probs, decision spans; a text-only rollout is one marked row without tokens.
 *   `group_id` is `<runId>#<taskId>` (the attempts of one task in one run).
 * - **Shards.** Rows sorted by group, attempt and sample, cut into shards of at most `rowsPerShard` (512) rows; the
 *   manifest is written last and validated by `DatasetManifestSchema`. Building the same id again overwrites it with
 *   the same bytes (the manifest keeps its `createdAt` when nothing else changed) and deletes shards it no longer has.
 *
 * @example
 * const manifest = await buildDataset(ports, { datasetId: 'calc-rl-1', selection: { runs: ['nightly-1'], decisions: 'all' } });
 * manifest.shards; // [{ key: 'training/datasets/calc-rl-1/shard-00000.parquet', rows: 24, tokens: 18_431 }]
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import { readTrajectoryBlob } from '../../harness/trajectory/read-trajectory-blob.ts';
import type { Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import { readTrajectoryForTraining, TrainingConsentRequiredError } from '../../feedback/training-trajectory.ts';
import type { StoredFeedbackEvent } from '../../feedback/record-codecs.ts';
import { getRewardSpec, rewardOf, type RewardSpec } from '../../judges/reward-spec.ts';
import type { Ports } from '../../ports/ports.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { currentEventOf } from '../decisions/person-decisions.ts';
import { listUsableDecisions } from '../decisions/list-decisions.ts';
import { addDatasetToDecision } from '../decisions/store-decision.ts';
import { DatasetManifestSchema, DatasetSelectionSchema, datasetKeys, type DatasetManifest } from '../schemas.ts';
import { listDatasetSources } from './dataset-sources.ts';
import { cached, heldOutCheck, type HeldOutReason } from './held-out.ts';
import { encodeShard, rowTokens } from './parquet-shard.ts';
import { trajectoryRows, type DatasetDecision, type ShardRow } from './trajectory-rows.ts';

export type BuildDatasetPorts = Pick<Ports, 'records' | 'blobs' | 'now'>;

export const BuildDatasetInputSchema = z.strictObject({
  datasetId: DatasetManifestSchema.shape.datasetId,
  selection: DatasetSelectionSchema,
  /** The tokenizer the rollouts' token ids belong to (recorded in the manifest). */
  tokenizer: z.string().min(1).max(300).optional(),
});
export type BuildDatasetInput = z.input<typeof BuildDatasetInputSchema>;

export interface BuildDatasetOptions {
  /** Most rows per shard (default 512). */
  rowsPerShard?: number;
  /** Trajectories read at once (default 16). */
  concurrency?: number;
  /** The usable decision records of an attempt (default: the stored ones, `listUsableDecisions`). */
  decisionsOf?: (attemptId: string) => Promise<DatasetDecision[]>;
}

const DEFAULT_ROWS_PER_SHARD = 512;
const PARQUET = 'application/vnd.apache.parquet';

interface Rollout {
  ref: string;
  source: DatasetManifest['sources'][number];
  trajectory: Trajectory;
  groupId: string;
  taskId?: string;
  reward: number;
  attemptId: string;
  trajectoryKey: string;
  /** A feedback trajectory's current, consenting events (whose person decisions it may carry). */
  feedbackEventIds?: ReadonlySet<string>;
}

type Excluded = DatasetManifest['excluded'][number];

/**
 * Builds (or rebuilds) a dataset; returns its manifest. Throws `Flywheel.ValidationError` naming the field of bad
 * input (an unknown run or sweep included).
 *
 * @example
 * await buildDataset(ports, { datasetId: 'd1', selection: { runs: ['r1'], feedback: { since: '2026-12-01T00:00:00Z' } } }, { decisionsOf });
 */
export async function buildDataset(ports: BuildDatasetPorts, rawInput: BuildDatasetInput, options: BuildDatasetOptions = {}): Promise<DatasetManifest> {
  const parsed = BuildDatasetInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    const issues = toFieldIssues(parsed.error.issues);
    throw new ValidationError(`Invalid dataset input: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const input = parsed.data;
  const rowsPerShard = options.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD;
  if (!Number.isInteger(rowsPerShard) || rowsPerShard < 1) throw new ValidationError('Invalid rowsPerShard', [{ path: 'rowsPerShard', message: 'a whole number of at least 1' }]);
  const { selection } = input;
  if (selection.runs.length === 0 && selection.sweeps.length === 0 && !selection.feedback) {
    throw new ValidationError('Invalid dataset selection: nothing selected', [{ path: 'selection', message: 'select at least one run, sweep or feedback window' }]);
  }

  const sources = await listDatasetSources(ports, selection);
  const excluded: Excluded[] = [];
  const slots: Array<Rollout | undefined> = [];
  const excludedAt: Array<Excluded | undefined> = [];
  const concurrency = options.concurrency ?? 16;
  // Held out first: an excluded attempt's trajectory is never read, and its suite's reward spec never listed.
  const check = heldOutCheck(ports);
  const heldOut: Array<HeldOutReason | undefined> = [];
  await forEachLimited(sources.attempts, concurrency, async ({ attempt }, i) => {
    heldOut[i] = await check.reasonOf(attempt);
    if (heldOut[i]) excludedAt[i] = { ref: `attempt:${attempt.attemptId}`, reason: heldOut[i] };
  });
  const specs = new Map<string, RewardSpec | undefined>();
  for (const [i, { attempt }] of sources.attempts.entries()) {
    if (!heldOut[i] && !specs.has(attempt.suite)) specs.set(attempt.suite, await getRewardSpec(ports, attempt.suite));
  }

  await forEachLimited(sources.attempts, concurrency, async ({ runId, attempt }, i) => {
    if (heldOut[i]) return;
    const r = await attemptRollout(ports, runId, attempt, specs.get(attempt.suite));
    if ('reason' in r) excludedAt[i] = r;
    else slots[i] = r;
  });
  const offset = sources.attempts.length;
  // The vote that counts is each feedbackKey's current one; consent is asked of it.
  const currentOf = new Map<string, Promise<StoredFeedbackEvent>>();
  const current = new Map<string, StoredFeedbackEvent>();
  await forEachLimited(sources.feedback, concurrency, async (e) => {
    current.set(e.feedbackKey, await cached(currentOf, e.feedbackKey, () => currentEventOf({ ports }, e)));
  });
  const consentingOn = new Map<string, Set<string>>();
  const chosen: StoredFeedbackEvent[] = [];
  const listed = new Set<string>();
  for (const e of sources.feedback) {
    const now = current.get(e.feedbackKey) ?? e;
    if (now.eventId !== e.eventId) {
      excluded.push({ ref: `feedback:${e.eventId}`, reason: now.trainingConsent !== true ? `no training consent: withdrawn by the newer vote ${now.eventId}` : `superseded by the newer vote ${now.eventId}` });
    }
    if (listed.has(now.eventId)) continue;
    listed.add(now.eventId);
    const key = now.trajectory?.blobKey;
    if (key === undefined || now.trainingConsent !== true) {
      chosen.push(now);
      continue;
    }
    const on = consentingOn.get(key);
    if (on) on.add(now.eventId); // several votes on one trajectory: one rollout, the first listed
    else {
      consentingOn.set(key, new Set([now.eventId]));
      chosen.push(now);
    }
  }
  await forEachLimited(chosen, concurrency, async (event, i) => {
    const r = await feedbackRollout(ports, event);
    if ('reason' in r) excludedAt[offset + i] = r;
    else slots[offset + i] = { ...r, feedbackEventIds: consentingOn.get(r.trajectoryKey) ?? new Set([event.eventId]) };
  });
  excluded.push(...excludedAt.filter((e): e is Excluded => e !== undefined));
  const rollouts = slots.filter((r): r is Rollout => r !== undefined);

  const decisionsOf = options.decisionsOf ?? ((attemptId: string) => listUsableDecisions(ports, attemptId));
  const rows: ShardRow[] = [];
  const usedDecisions = new Set<string>();
  const decisionAttempt = new Map<string, string>();
  const used: DatasetManifest['sources'] = [];
  for (const rollout of rollouts) {
    const decisions = selection.decisions === 'none' ? [] : (await decisionsOf(rollout.attemptId)).filter((d) => d.status === 'usable' && d.leakage.passed && ofRollout(d, rollout));
    const out = trajectoryRows(rollout.trajectory, { groupId: rollout.groupId, reward: rollout.reward, ...(rollout.taskId !== undefined ? { taskId: rollout.taskId } : {}) }, decisions);
    if (out.rows.length === 0) {
      excluded.push({ ref: rollout.ref, reason: 'the trajectory has no assistant turn' });
      continue;
    }
    rows.push(...out.rows);
    used.push(rollout.source);
    const byId = new Map(decisions.map((d) => [d.decisionId, d]));
    for (const id of out.usedDecisions) {
      usedDecisions.add(id);
      decisionAttempt.set(id, byId.get(id)!.trajectory.attemptId);
    }
    for (const s of out.skippedDecisions) excluded.push({ ref: `decision:${s.decisionId}`, reason: s.reason });
  }
  rows.sort((a, b) => cmp(a.groupId, b.groupId) || cmp(a.attemptId, b.attemptId) || cmp(a.sampleId, b.sampleId));

  const keys = datasetKeys(input.datasetId);
  const shards: DatasetManifest['shards'] = [];
  for (let n = 0; n * rowsPerShard < rows.length; n++) {
    const part = rows.slice(n * rowsPerShard, (n + 1) * rowsPerShard);
    const key = keys.shard(n);
    await ports.blobs.put(key, encodeShard(part), { contentType: PARQUET });
    shards.push({ key, rows: part.length, tokens: part.reduce((a, r) => a + rowTokens(r), 0) });
  }
  await deleteStaleShards(ports, keys.root, new Set(shards.map((s) => s.key)));

  const rewardSpecs: Record<string, unknown> = {};
  for (const [suite, spec] of [...specs.entries()].sort(([a], [b]) => cmp(a, b))) if (spec) rewardSpecs[suite] = spec;
  const body = {
    datasetId: input.datasetId,
    format: 'flywheel.training-shards/1' as const,
    shards,
    rows: rows.length,
    tokens: shards.reduce((a, s) => a + s.tokens, 0),
    tokenRows: rows.filter((r) => r.hasTokenIds).length,
    textOnlyRows: rows.filter((r) => !r.hasTokenIds).length,
    decisionSpans: rows.reduce((a, r) => a + r.spans.length, 0),
    rewardSpecs,
    decisions: [...usedDecisions].sort(),
    sources: used.sort((a, b) => cmp(a.attemptId, b.attemptId) || cmp(a.trajectoryKey, b.trajectoryKey)),
    excluded: excluded.sort((a, b) => cmp(a.ref, b.ref) || cmp(a.reason, b.reason)),
    ...(input.tokenizer ? { tokenizer: input.tokenizer } : {}),
  };
  const previous = await readManifest(ports, keys.manifest);
  const createdAt = previous && sameContent(previous, body) ? previous.createdAt : ports.now().toISOString();
  const manifest = DatasetManifestSchema.parse({ createdAt, ...body });
  await ports.blobs.put(keys.manifest, JSON.stringify(manifest, null, 2), { contentType: 'application/json' });
  // Lineage both ways: the manifest lists the decisions, each decision lists the datasets (a record not stored, as a
  // caller's `decisionsOf` may give, is skipped).
  await forEachLimited([...decisionAttempt.entries()], concurrency, ([decisionId, attemptId]) => addDatasetToDecision(ports.records, attemptId, decisionId, input.datasetId));
  return manifest;
}

/** Whether a decision record belongs to this very rollout: its trajectory, and for feedback its current consenting event. */
function ofRollout(d: DatasetDecision, rollout: Rollout): boolean {
  if (d.trajectory.blobKey !== rollout.trajectoryKey) return false;
  if (!rollout.feedbackEventIds) return d.trajectory.feedbackEventId === undefined;
  const eventId = d.source.kind === 'person' ? d.source.feedbackEventId : d.trajectory.feedbackEventId;
  return eventId !== undefined && rollout.feedbackEventIds.has(eventId);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function attemptRollout(ports: BuildDatasetPorts, runId: string, attempt: AttemptRecord, spec: RewardSpec | undefined): Promise<Rollout | Excluded> {
  const ref = `attempt:${attempt.attemptId}`;
  const last = attempt.history.at(-1);
  if (attempt.status === 'infrastructure-error' || last?.outcome === 'infrastructure-error') {
    const why = last?.infrastructureError ? `: ${last.infrastructureError.phase} ${last.infrastructureError.error}` : '';
    return { ref, reason: `infrastructure error${why}` };
  }
  const trajectoryKey = last?.trajectoryKey ?? attempt.trajectoryKey;
  if (!trajectoryKey) return { ref, reason: 'no trajectory' };
  let reward: number;
  if (spec) {
    const r = rewardOf(spec, attempt);
    if (r.components.every((c) => c.score === undefined)) return { ref, reason: `no reward: ${r.components.map((c) => `${c.id} ${c.note ?? 'missing'}`).join(', ') || 'nothing scored'}` };
    reward = r.reward;
  } else if (attempt.status === 'passed' || attempt.status === 'failed') {
    reward = attempt.status === 'passed' ? 1 : 0;
  } else {
    return { ref, reason: 'no reward: ungraded, and the suite has no reward specification' };
  }
  const bytes = await ports.blobs.get(trajectoryKey);
  if (!bytes) return { ref, reason: `trajectory blob ${trajectoryKey} is missing` };
  const read = readTrajectoryBlob(bytes);
  if ('problem' in read) return { ref, reason: read.problem };
  const { trajectory } = read;
  const stop = trajectory.steps.findLast((s) => s.type === 'outcome');
  if (stop?.type === 'outcome' && stop.stopReason.kind === 'infrastructure-error') return { ref, reason: `infrastructure error: ${stop.stopReason.error}` };
  return {
    ref,
    source: { attemptId: attempt.attemptId, trajectoryKey, runId, consent: 'harness' },
    trajectory,
    groupId: `${runId}#${attempt.taskId}`,
    taskId: attempt.taskId,
    reward,
    attemptId: attempt.attemptId,
    trajectoryKey,
  };
}

async function feedbackRollout(ports: BuildDatasetPorts, event: StoredFeedbackEvent): Promise<Rollout | Excluded> {
  const ref = `feedback:${event.eventId}`;
  // Consent first, before anything of the trajectory is touched (readTrajectoryForTraining refuses it anyway).
  if (event.trainingConsent !== true) return { ref, reason: 'no training consent' };
  if (!event.trajectory) return { ref, reason: 'no trajectory' };
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readTrajectoryForTraining(ports.blobs, event);
  } catch (error) {
    if (error instanceof TrainingConsentRequiredError) return { ref, reason: 'no training consent' };
    throw error;
  }
  if (!bytes) return { ref, reason: `trajectory blob ${event.trajectory.blobKey} is missing` };
  const read = readTrajectoryBlob(bytes);
  if ('problem' in read) return { ref, reason: read.problem };
  const { trajectory } = read;
  const good = event.rating === 'up' || event.outcome === 'accepted';
  return {
    ref,
    source: { attemptId: trajectory.header.attemptId, trajectoryKey: event.trajectory.blobKey, feedbackEventId: event.eventId, consent: 'feedback-consent' },
    trajectory,
    groupId: `feedback#${event.eventId}`,
    reward: good ? 1 : 0,
    attemptId: trajectory.header.attemptId,
    trajectoryKey: event.trajectory.blobKey,
  };
}

async function readManifest(ports: BuildDatasetPorts, key: string): Promise<DatasetManifest | undefined> {
  const bytes = await ports.blobs.get(key);
  if (!bytes) return undefined;
  try {
    return DatasetManifestSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return undefined; // unreadable: rebuilt from scratch
  }
}

function sameContent(previous: DatasetManifest, body: Omit<DatasetManifest, 'createdAt'>): boolean {
  const { createdAt: _createdAt, ...rest } = previous;
  return JSON.stringify(rest) === JSON.stringify(DatasetManifestSchema.omit({ createdAt: true }).parse(body));
}

async function deleteStaleShards(ports: BuildDatasetPorts, root: string, keep: Set<string>): Promise<void> {
  let cursor: string | undefined;
  const stale: string[] = [];
  do {
    const page = await ports.blobs.list(`${root}/shard-`, cursor ? { cursor } : {});
    stale.push(...page.keys.filter((k) => !keep.has(k)));
    cursor = page.cursor;
  } while (cursor);
  for (const key of stale) await ports.blobs.delete(key);
}
