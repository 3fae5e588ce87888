/**
 * The steps of a training run (`train.asl.ts`): plain functions of ports, one Lambda on AWS
 * (`functions/training/train-step.ts` → `dispatchTrainStep`) and one local handler under `npm start`. States carry
 * the run id; each step reads the run record and writes it through `updateRun` (optimistic, so a person's stop is
 * never overwritten), and a step run again (a retry, a resumed execution) finds what it did and does it once.
 *
 * - build-dataset: the dataset of the request's selection (`buildDataset`), once per run: a resume reuses it. A run
 *   resumed after its checkpoint was registered answers `registered: true` and the workflow skips to its sweep.
 * - prepare-train: the run is `training` (its heartbeat starts now); the policy job's name, nodes and environment
 *   (`TRAINER_JOB_ENV`): the base as `tiny:<n>` or `blob:<checkpoint folder>`, the trainer config, the output,
 *   metrics and state keys. The trainer resumes from the state blobs when a resumed run finds them.
 * - register-checkpoint: the checkpoint folder the job wrote is registered (`registerCheckpoint`, served by vLLM from
 *   its artifact) with its lineage in metadata: base, dataset, decision ids, reward specifications, code version, run;
 *   the `checkpoint.registered` trigger starts its sweep (`checkpoint-<id>-<hash>`, the trigger's own id).
 * - check-sweep: whether that sweep ended (succeeded, partial or failed; or its execution ended without a record);
 *   `waitSeconds` until the next look. Past `sweepWaitSeconds` the run fails (`Flywheel.SweepWaitExceeded`). With
 *   neither a sweep record nor an execution `sweepMissingSeconds` after registration (the trigger refused it or never
 *   fired) the wait ends: the run succeeds "not compared" with the reason on `comparison`, and finish-run's notice
 *   says so (a checkpoint is registered and usable; only its comparison is missing).
 * - compare-incumbent: the sweep's comparisons of the checkpoint, only from a sweep that succeeded with no cell
 *   `not-scored`; better = better somewhere and worse nowhere. Anything else is "not compared" (`compared: false`).
 * - propose-experiment: the proposal on the run record, `experiment.proposed`, a notice to people.
 * - finish-run: `succeeded`, a notice. record-failure: `failed` (unless stopped), the job cancelled, a notice.
 *
 * @example
 * await dispatchTrainStep(ports, { step: 'prepare-train', input: { runId: 'rl-42' } });
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { Notice } from '../../people/notify.ts';
import { noticeNotifier } from '../../people/notices/notice-notifier.ts';
import { resolveOpenNotice } from '../../people/notices/notice-store.ts';
import { trainingStallKey } from '../runs/check-stalled-runs.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { registerCheckpoint } from '../../registry/register-checkpoint.ts';
import { executionNameFor } from '../../shared/execution-name.ts';
import { getSweepReport } from '../../sweeps/get-sweep-report.ts';
import { buildDataset } from '../datasets/build-dataset.ts';
import { findSweep } from '../../sweeps/sweep-record.ts';
import { DatasetManifestSchema, datasetKeys, trainingRunKeys, type DatasetManifest, type DatasetSelection, type TrainingRun } from '../schemas.ts';
import { EXPERIMENT_PROPOSED, TRAINING_RUN_FINISHED, type ExperimentProposedDetail, type ProposalEvidence } from '../runs/events.ts';
import { SweepWaitExceededError, TrainingOutputMissingError, TrainingRunStoppedError } from '../runs/run-errors.ts';
import { cancelRunJobs } from '../runs/run-job.ts';
import { policyJobName } from '../runs/run-names.ts';
import { heartbeatOf, lastMetricsLine } from '../runs/read-training-curves.ts';
import { requireRun, SAME, updateRun } from '../runs/run-store.ts';
import { resolveBase, type ResolvedBase } from '../runs/resolve-base.ts';
import { TRAIN_STEP_NAMES, type TrainStepName } from './train-step-names.ts';

/** Builds a dataset (`lib/training/datasets/build-dataset.ts`): writes its shards and `datasetKeys(id).manifest`. */
export type BuildDataset = (ports: Pick<Ports, 'records' | 'blobs' | 'now'>, input: { datasetId: string; selection: DatasetSelection }) => Promise<DatasetManifest>;

export interface TrainStepSettings {
  /**
   * Between looks at the checkpoint's sweep; default 300 s. A Standard execution keeps at most 25,000 history events
   * and one look (Wait, Task, Choice) writes about 10: 48 h / 300 s = 576 looks ≈ 5,800 events, well inside; at 60 s
   * a sweep of two days would pass the limit (2,880 looks ≈ 29,000).
   */
  sweepPollSeconds: number;
  /** How long the run waits for its sweep before it fails; default 48 h. */
  sweepWaitSeconds: number;
  /** Whether the deployment runs multi-node parallel jobs (AWS); locally a run of `nodes > 1` runs on one node. */
  multiNode: boolean;
  /** The code that trained (a git sha or the package version), for the checkpoint's lineage. */
  codeVersion: string;
  /** The trainer image the policy job ran (`FLYWHEEL_TRAINER_IMAGE`: repository URI and tag), for the lineage. */
  trainerImage?: string;
  /**
   * How long a registered checkpoint may have neither a sweep record nor a sweep execution before the run stops
   * waiting (the trigger refused or never fired); default 15 min. The run then succeeds "not compared" (below).
   */
  sweepMissingSeconds: number;
}

export const DEFAULT_TRAIN_STEP_SETTINGS: TrainStepSettings = {
  sweepPollSeconds: 300,
  sweepWaitSeconds: 48 * 3600,
  multiNode: true,
  codeVersion: codeVersionFromEnv(),
  ...(process.env.FLYWHEEL_TRAINER_IMAGE ? { trainerImage: process.env.FLYWHEEL_TRAINER_IMAGE } : {}),
  sweepMissingSeconds: 15 * 60,
};

/** Per GPU of a node the policy job asks Batch for this many vCPUs and MiB (the smallest GPU instance's share). */
export const POLICY_JOB_VCPUS_PER_GPU = 4;
export const POLICY_JOB_MEMORY_MIB_PER_GPU = 14 * 1024;

export interface TrainStepPorts extends Pick<Ports, 'records' | 'blobs' | 'events' | 'now'> {
  /** record-failure cancels the run's job when it can. */
  jobs?: JobsPort;
  /** check-sweep sees a sweep whose execution ended without a record (refused). */
  workflows?: WorkflowsPort;
  /** Default: `buildDataset` of `lib/training/datasets/build-dataset.ts`; tests pass their own. */
  buildDataset?: BuildDataset;
  settings?: Partial<TrainStepSettings>;
  /** Telling people; default `raiseNotice` (stored, deduplicated by the notice's id; Slack and the bus from the environment). */
  notify?: (notice: Notice) => Promise<unknown>;
}

interface RunInput {
  runId: string;
}

/** Input and output of each step (the definition selects fields of these). */
export interface TrainStepIo {
  'build-dataset': [RunInput, { datasetId: string; datasetKey: string; registered: boolean; sweep: boolean }];
  'prepare-train': [RunInput, { jobName: string; nodes: number; env: PolicyJobEnv; resources: BatchResourceRequirement[] }];
  'register-checkpoint': [RunInput & { jobId?: string }, { checkpointId: string; sweep: boolean }];
  'check-sweep': [RunInput, { done: boolean; waitSeconds: number }];
  'compare-incumbent': [RunInput, { better: boolean; propose: boolean }];
  'propose-experiment': [RunInput, { proposalId: string }];
  'finish-run': [RunInput, { runId: string; status: string }];
  'record-failure': [RunInput & { error?: { Error?: string; Cause?: string } }, { runId: string; status: string }];
}

/** One of Batch's `ResourceRequirements` (the Step Functions integration's PascalCase; values are strings). */
export interface BatchResourceRequirement {
  Type: 'GPU' | 'VCPU' | 'MEMORY';
  Value: string;
}

/** What the policy job asks Batch for per node: `trainer.gpus` GPUs (none when 0) with their share of vCPUs and memory. */
export function policyJobResources(gpus: number): BatchResourceRequirement[] {
  const per = Math.max(1, gpus);
  return [
    ...(gpus > 0 ? [{ Type: 'GPU' as const, Value: String(gpus) }] : []),
    { Type: 'VCPU', Value: String(POLICY_JOB_VCPUS_PER_GPU * per) },
    { Type: 'MEMORY', Value: String(POLICY_JOB_MEMORY_MIB_PER_GPU * per) },
  ];
}

/** The policy job's environment by `TRAINER_JOB_ENV` field (strings: Batch's environment values). */
export interface PolicyJobEnv {
  runId: string;
  datasetKey: string;
  base: string;
  config: string;
  outputKey: string;
  metricsKey: string;
  stateKey: string;
}

export type TrainSteps = { [K in TrainStepName]: (ports: TrainStepPorts, input: TrainStepIo[K][0]) => Promise<TrainStepIo[K][1]> };

/** The code version from `FLYWHEEL_CODE_VERSION`, else the package's version. */
export function codeVersionFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLYWHEEL_CODE_VERSION) return env.FLYWHEEL_CODE_VERSION;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string };
    return `${pkg.name ?? 'flywheel'}@${pkg.version ?? '0.0.0'}`;
  } catch {
    // A bundle without the package file (a Lambda): the deployment sets FLYWHEEL_CODE_VERSION.
    return 'unknown';
  }
}

/** The sweep the `checkpoint.registered` trigger starts for a checkpoint (the trigger's `checkpointSweepId`). */
export function checkpointSweepIdOf(checkpointId: string): string {
  return executionNameFor('checkpoint', checkpointId, 56);
}

function settingsOf(ports: TrainStepPorts): TrainStepSettings {
  return { ...DEFAULT_TRAIN_STEP_SETTINGS, ...ports.settings };
}

/** The run, refusing one a person stopped (the execution ends; it was being stopped anyway). */
async function activeRun(ports: TrainStepPorts, runId: string): Promise<TrainingRun> {
  const run = await requireRun(ports, runId);
  if (run.status === 'stopped') throw new TrainingRunStoppedError(runId);
  return run;
}

/** Updates a run that is not stopped; a stop that lands first wins (the step throws `Flywheel.TrainingRunStopped`). */
async function updateActive(ports: TrainStepPorts, runId: string, change: (run: TrainingRun) => TrainingRun | typeof SAME): Promise<TrainingRun> {
  let stopped = false;
  const run = await updateRun(ports, runId, (r) => {
    stopped = r.status === 'stopped';
    return stopped ? SAME : change(r);
  });
  if (stopped) throw new TrainingRunStoppedError(runId);
  return run;
}

function notifier(ports: TrainStepPorts): (notice: Notice) => Promise<unknown> {
  return ports.notify ?? noticeNotifier(ports, 'training');
}

async function readManifest(ports: TrainStepPorts, key: string): Promise<DatasetManifest | undefined> {
  const bytes = await ports.blobs.get(key);
  if (!bytes) return undefined;
  const parsed = DatasetManifestSchema.safeParse(JSON.parse(Buffer.from(bytes).toString('utf8')));
  if (!parsed.success) throw new ValidationError(`dataset manifest ${key} is malformed`, [{ path: 'datasetKey', message: parsed.error.issues[0]?.message ?? 'malformed' }]);
  return parsed.data;
}

async function buildDatasetStep(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['build-dataset'][1]> {
  const run = await activeRun(ports, input.runId);
  const sweep = run.request.sweep;
  // A run resumed after its checkpoint was registered skips training and registration (SkipToSweep).
  if (run.checkpointId) {
    await updateActive(ports, run.runId, (r) => (sweep && r.status !== 'evaluating' ? { ...r, status: 'evaluating' } : SAME));
    return { datasetId: run.datasetId ?? '', datasetKey: run.datasetKey ?? '', registered: true, sweep };
  }
  // A resumed run (or a retry after the build) keeps the dataset it trained on.
  if (run.datasetId && run.datasetKey && (await ports.blobs.get(run.datasetKey))) return { datasetId: run.datasetId, datasetKey: run.datasetKey, registered: false, sweep };
  await updateActive(ports, run.runId, (r) => ({ ...r, status: 'building-dataset' }));
  const datasetId = run.runId;
  const manifest = await (ports.buildDataset ?? buildDataset)(ports, { datasetId, selection: run.request.dataset });
  const datasetKey = datasetKeys(manifest.datasetId).manifest;
  await updateActive(ports, run.runId, (r) => ({ ...r, datasetId: manifest.datasetId, datasetKey }));
  return { datasetId: manifest.datasetId, datasetKey, registered: false, sweep };
}

async function prepareTrain(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['prepare-train'][1]> {
  const run = await activeRun(ports, input.runId);
  if (!run.datasetKey) throw new ValidationError(`training run ${run.runId} has no dataset`, [{ path: 'datasetKey', message: 'build the dataset first' }]);
  const base = await baseOf(ports, run);
  const now = ports.now().toISOString();
  // The heartbeat starts now: the stall check measures from here until the trainer's first metrics line.
  await updateActive(ports, run.runId, ({ stallNotifiedAt: _stall, ...r }) => ({ ...r, status: 'training', lastHeartbeatAt: now }));
  const keys = trainingRunKeys(run.runId);
  const trainer = run.request.trainer;
  return {
    jobName: policyJobName(run.runId),
    nodes: settingsOf(ports).multiNode ? trainer.nodes : 1,
    resources: policyJobResources(trainer.gpus),
    env: {
      runId: run.runId,
      datasetKey: run.datasetKey,
      base: base.trainerBase,
      config: JSON.stringify(trainer),
      outputKey: keys.checkpoint,
      metricsKey: keys.metrics,
      stateKey: keys.state,
    },
  };
}

/** The base as resolved when the run was requested; a run stored before that was kept is resolved now. */
async function baseOf(ports: TrainStepPorts, run: TrainingRun): Promise<ResolvedBase> {
  if (run.resolvedBase) return { trainerBase: run.resolvedBase.trainerBase, model: run.resolvedBase.model, ...(run.resolvedBase.parent ? { parent: run.resolvedBase.parent } : {}) };
  return resolveBase(ports, run.request.base);
}

/** Bytes of lineage lists kept in the checkpoint's metadata (it is bounded at 32 KiB); past it a hash stands in. */
const LINEAGE_LIST_BYTES = 8 * 1024;

function bounded(value: unknown): unknown {
  const text = JSON.stringify(value);
  if (text.length <= LINEAGE_LIST_BYTES) return value;
  return { sha256: createHash('sha256').update(text).digest('hex'), bytes: text.length };
}

async function registerCheckpointStep(ports: TrainStepPorts, input: TrainStepIo['register-checkpoint'][0]): Promise<TrainStepIo['register-checkpoint'][1]> {
  const run = await activeRun(ports, input.runId);
  const keys = trainingRunKeys(run.runId);
  if (!(await ports.blobs.get(`${keys.checkpoint}/config.json`))) {
    throw new TrainingOutputMissingError(`training run ${run.runId}: the policy job ended without a checkpoint folder under ${keys.checkpoint}/`);
  }
  await updateActive(ports, run.runId, (r) => ({ ...r, status: 'registering', ...(input.jobId ? { jobId: input.jobId } : {}) }));
  const base = await baseOf(ports, run);
  const manifest = run.datasetKey ? await readManifest(ports, run.datasetKey) : undefined;
  const last = await lastMetricsLine(ports, run.runId);
  const checkpointId = run.request.checkpointId ?? `${base.model}:${run.runId}`;
  const settings = settingsOf(ports);
  const lineage = {
    trainingRun: run.runId,
    base: run.request.base,
    ...(run.datasetId ? { datasetId: run.datasetId, datasetKey: run.datasetKey } : {}),
    decisions: bounded(manifest?.decisions ?? []),
    decisionCount: manifest?.decisions.length ?? 0,
    rewardSpecs: bounded(manifest?.rewardSpecs ?? {}),
    codeVersion: settings.codeVersion,
    ...(settings.trainerImage ? { trainerImage: settings.trainerImage } : {}),
    trainer: run.request.trainer,
    // The trainer's `step` counts the optimiser steps done.
    ...(last ? { steps: last.step } : {}),
  };
  const { checkpoint } = await registerCheckpoint(ports, {
    id: checkpointId,
    model: base.model,
    ...(base.parent ? { parent: base.parent } : {}),
    trainingRun: run.runId,
    artifactKey: keys.checkpoint,
    serving: { kind: 'vllm', servedModelName: checkpointId.replace(/[^A-Za-z0-9._-]/g, '-') },
    sweep: run.request.sweep,
    metadata: { lineage },
  });
  const sweepId = run.request.sweep ? checkpointSweepIdOf(checkpoint.id) : undefined;
  await updateActive(ports, run.runId, (r) => ({
    ...r,
    status: run.request.sweep ? 'evaluating' : 'registering',
    checkpointId: checkpoint.id,
    artifactKey: keys.checkpoint,
    ...(sweepId ? { sweepId } : {}),
    ...(last ? { step: last.step, ...heartbeatOf(last) } : {}),
  }));
  return { checkpointId: checkpoint.id, sweep: run.request.sweep };
}

const SWEEP_ENDED = new Set(['succeeded', 'partial', 'failed']);

async function checkSweep(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['check-sweep'][1]> {
  const run = await activeRun(ports, input.runId);
  const settings = settingsOf(ports);
  if (!run.sweepId) throw new ValidationError(`training run ${run.runId} has no sweep`, [{ path: 'sweepId', message: 'register the checkpoint first' }]);
  const sweep = await findSweep(ports.records, run.sweepId);
  if (sweep && SWEEP_ENDED.has(sweep.status)) return { done: true, waitSeconds: 0 };
  // `updatedAt` is the register step's (or a resume's) write: nothing else writes an evaluating run but a stop.
  const waitedSeconds = (ports.now().getTime() - Date.parse(run.updatedAt)) / 1000;
  let execution: { status: string } | undefined;
  if (ports.workflows) {
    try {
      execution = (await getSweepReport({ records: ports.records, workflows: ports.workflows }, run.sweepId)).execution;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    // A sweep refused by validation ends its execution without a sweep record: nothing more will come.
    if (execution && execution.status !== 'RUNNING') return { done: true, waitSeconds: 0 };
  }
  if (!sweep && !execution && waitedSeconds > settings.sweepMissingSeconds) {
    // The trigger refused the sweep or never fired: stop waiting; the run succeeds "not compared" (compare-incumbent).
    const reason = `no sweep ${run.sweepId} (neither a record nor an execution) ${Math.floor(waitedSeconds / 60)} min after registration`;
    await updateActive(ports, run.runId, (r) => ({ ...r, comparison: { sweepId: run.sweepId ?? null, sweepStatus: 'missing', better: false, compared: false, reason } }));
    return { done: true, waitSeconds: 0 };
  }
  if (waitedSeconds > settings.sweepWaitSeconds) {
    throw new SweepWaitExceededError(`training run ${run.runId}: sweep ${run.sweepId} did not end within ${settings.sweepWaitSeconds} s`);
  }
  return { done: false, waitSeconds: settings.sweepPollSeconds };
}

/**
 * The comparison is read only from a sweep that succeeded with every cell of the checkpoint scored: a partial or
 * failed sweep, or a `not-scored` comparison, is recorded as not compared (no proposal on half the evidence).
 */
async function compareIncumbent(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['compare-incumbent'][1]> {
  const run = await activeRun(ports, input.runId);
  let report: Awaited<ReturnType<typeof getSweepReport>> | undefined;
  if (run.sweepId) {
    try {
      report = await getSweepReport({ records: ports.records, ...(ports.workflows ? { workflows: ports.workflows } : {}) }, run.sweepId);
    } catch (error) {
      // Only a sweep that does not exist is "missing"; a store error is retried by the state machine.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  const rows = (report?.comparisons ?? []).filter((c) => c.checkpoint === run.checkpointId);
  const improvements = rows.filter((c) => c.verdict === 'better').length;
  const regressions = rows.filter((c) => c.verdict === 'worse').length;
  const notScored = rows.filter((c) => c.verdict === 'not-scored').length;
  const sweepStatus = report?.sweep.status ?? 'missing';
  const reason =
    sweepStatus === 'missing'
      ? (typeof run.comparison?.reason === 'string' ? run.comparison.reason : `no sweep ${run.sweepId ?? '(none)'}`)
      : sweepStatus !== 'succeeded'
        ? `sweep ${run.sweepId} is ${sweepStatus}`
        : notScored > 0
          ? `${notScored} of the checkpoint's cells were not scored`
          : rows.length === 0
            ? 'the sweep has no comparison of the checkpoint'
            : undefined;
  const compared = reason === undefined;
  const better = compared && improvements > 0 && regressions === 0;
  const comparison = {
    sweepId: run.sweepId ?? null,
    sweepStatus,
    compared,
    ...(reason ? { reason } : {}),
    better,
    improvements,
    regressions,
    notScored,
    rows: rows.slice(0, 50).map((c) => ({ suite: c.suite, mode: c.mode, incumbent: c.incumbent, verdict: c.verdict, score: c.score, incumbentScore: c.incumbentScore, difference: c.difference, n: c.n })),
  };
  await updateActive(ports, run.runId, (r) => ({ ...r, comparison }));
  return { better, propose: better && run.request.proposeExperiment };
}

async function proposeExperiment(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['propose-experiment'][1]> {
  const run = await activeRun(ports, input.runId);
  if (!run.checkpointId || !run.sweepId) throw new ValidationError(`training run ${run.runId} has no checkpoint to propose`, [{ path: 'checkpointId', message: 'register it first' }]);
  const report = await getSweepReport({ records: ports.records }, run.sweepId);
  const evidence: ProposalEvidence[] = report.comparisons
    .filter((c) => c.checkpoint === run.checkpointId && c.verdict === 'better')
    .slice(0, 50)
    .map((c) => ({ suite: c.suite, mode: c.mode, incumbent: c.incumbent, score: c.score, incumbentScore: c.incumbentScore, difference: c.difference, ci: c.ci, n: c.n }));
  const incumbents = [...new Set(evidence.flatMap((e) => (e.incumbent ? [e.incumbent] : [])))].sort();
  const proposalId = executionNameFor('exp', run.runId, 50);
  const detail: ExperimentProposedDetail = { runId: run.runId, proposalId, checkpointId: run.checkpointId, incumbents, sweepId: run.sweepId, evidence };
  const proposedAt = ports.now().toISOString();
  await updateActive(ports, run.runId, (r) => (r.proposal ? SAME : { ...r, proposal: { ...detail, kind: 'ab-test', status: 'proposed', proposedAt } }));
  await ports.events.publish([{ type: EXPERIMENT_PROPOSED, id: `${EXPERIMENT_PROPOSED}:${run.runId}`, detail: { ...detail } }]);
  await notifier(ports)({
    id: `${EXPERIMENT_PROPOSED}:${run.runId}`,
    kind: 'info',
    severity: 'info',
    link: `/training/${encodeURIComponent(run.runId)}`,
    source: { capability: 'training', runKind: 'training', runId: run.runId },
    title: `A/B test proposed: ${run.checkpointId} against ${incumbents.join(', ') || 'the incumbent'}`,
    text: evidence.map((e) => `• ${e.suite} (${e.mode}): ${fmt(e.score)} vs ${fmt(e.incumbentScore)} (${e.incumbent ?? 'none'}), difference ${fmt(e.difference)}${e.ci ? ` [${fmt(e.ci.low)}, ${fmt(e.ci.high)}]` : ''}, n=${e.n}`).join('\n') || 'Better than the incumbent.',
    fields: { run: run.runId, checkpoint: run.checkpointId, sweep: run.sweepId, proposal: proposalId },
  });
  return { proposalId };
}

const fmt = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);

async function finishRun(ports: TrainStepPorts, input: RunInput): Promise<TrainStepIo['finish-run'][1]> {
  const run = await updateActive(ports, input.runId, (r) => (r.status === 'succeeded' ? SAME : { ...r, status: 'succeeded', endedAt: ports.now().toISOString() }));
  // A stall reported earlier has cleared: the run is over.
  await resolveOpenNotice(ports.records, trainingStallKey(run.runId), { by: 'training', outcome: 'The run succeeded.' }, ports.now());
  const better = run.comparison?.better === true;
  await ports.events.publish([
    { type: TRAINING_RUN_FINISHED, id: `${TRAINING_RUN_FINISHED}:${run.runId}:succeeded:${run.resumes ?? 0}`, detail: { runId: run.runId, status: 'succeeded', ...(run.checkpointId ? { checkpointId: run.checkpointId } : {}), better } },
  ]);
  await notifier(ports)({
    id: `${TRAINING_RUN_FINISHED}:${run.runId}:succeeded:${run.resumes ?? 0}`,
    kind: 'info',
    severity: 'info',
    link: `/training/${encodeURIComponent(run.runId)}`,
    source: { capability: 'training', runKind: 'training', runId: run.runId },
    title: `Training run ${run.runId} succeeded: ${run.checkpointId ?? 'no checkpoint'}`,
    text: !run.sweepId
      ? 'Registered without a sweep.'
      : run.comparison?.compared === false
        ? `Not compared with the incumbent: ${String(run.comparison.reason ?? 'no usable sweep')}. Sweep it again (\`flywheel sweep start\`) to compare.`
        : `Swept by ${run.sweepId}: ${better ? 'better than the incumbent' : 'not better than the incumbent'}${run.proposal ? '; an A/B test is proposed' : ''}.`,
    fields: { run: run.runId, ...(run.step !== undefined ? { steps: run.step } : {}), ...(run.checkpointId ? { checkpoint: run.checkpointId } : {}) },
  });
  return { runId: run.runId, status: run.status };
}

async function recordFailure(ports: TrainStepPorts, input: TrainStepIo['record-failure'][0]): Promise<TrainStepIo['record-failure'][1]> {
  const error = { error: input.error?.Error ?? 'Error', cause: (input.error?.Cause ?? '').slice(0, 2000) };
  let recorded = false;
  const run = await updateRun(ports, input.runId, (r) => {
    recorded = !(r.status === 'stopped' || r.status === 'failed');
    return recorded ? { ...r, status: 'failed', error, endedAt: ports.now().toISOString() } : SAME;
  });
  // A stop ends its run itself (the stop cancelled the job); a failure recorded before (a replay) is not told twice.
  if (!recorded) return { runId: run.runId, status: run.status };
  if (ports.jobs) await cancelRunJobs(ports.jobs, run, `training run ${run.runId} failed: ${error.error}`).catch(() => undefined);
  const id = `${TRAINING_RUN_FINISHED}:${run.runId}:failed:${run.resumes ?? 0}`;
  await ports.events.publish([{ type: TRAINING_RUN_FINISHED, id, detail: { runId: run.runId, status: 'failed', error: error.error } }]);
  await resolveOpenNotice(ports.records, trainingStallKey(run.runId), { by: 'training', outcome: `The run failed: ${error.error}.` }, ports.now());
  await notifier(ports)({
    id,
    kind: 'failure',
    severity: 'alert',
    title: `Training run ${run.runId} failed: ${error.error}`,
    text: `${error.cause.slice(0, 1000) || 'No cause given.'}\nResume it with \`flywheel train resume ${run.runId}\` (the trainer continues from its last saved state).`,
    fields: { run: run.runId, ...(run.step !== undefined ? { step: run.step } : {}), ...(run.jobId ? { job: run.jobId } : {}) },
    link: `/training/${encodeURIComponent(run.runId)}`,
    source: { capability: 'training', runKind: 'training', runId: run.runId },
    actions: [{ id: 'resume', label: 'Resume the run', style: 'primary', operation: { kind: 'resume-training-run', runId: run.runId } }],
  });
  return { runId: run.runId, status: 'failed' };
}

/** The steps by name (what the Lambda and the local workflow dispatch to). */
export const trainSteps: TrainSteps = {
  'build-dataset': buildDatasetStep,
  'prepare-train': prepareTrain,
  'register-checkpoint': registerCheckpointStep,
  'check-sweep': checkSweep,
  'compare-incumbent': compareIncumbent,
  'propose-experiment': proposeExperiment,
  'finish-run': finishRun,
  'record-failure': recordFailure,
};

/**
 * The one step Lambda's payload, `{ step, input }`, run by the step it names (`functions/training/train-step.ts`, and
 * the local workflow's handler). An unknown step, or an input without a run id, is a `ValidationError` naming it.
 *
 * @example
 * await dispatchTrainStep(ports, { step: 'check-sweep', input: { runId: 'rl-42' } });
 */
export async function dispatchTrainStep(ports: TrainStepPorts, payload: unknown): Promise<unknown> {
  const { step, input } = (payload ?? {}) as { step?: string; input?: { runId?: unknown } };
  if (!TRAIN_STEP_NAMES.includes(step as TrainStepName)) throw new ValidationError(`unknown training step ${String(step)}`, [{ path: 'step', message: `one of ${TRAIN_STEP_NAMES.join(', ')}` }]);
  if (typeof input?.runId !== 'string' || input.runId === '') throw new ValidationError(`training step ${String(step)} without a run id`, [{ path: 'input.runId', message: 'required' }]);
  return trainSteps[step as TrainStepName](ports, input as never);
}
