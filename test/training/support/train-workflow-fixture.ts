/**
 * The training workflow on the local drivers, as the runtime runs it, with a FAKE policy trainer (a Node script with
 * the policy job's contract, `fake-policy-trainer.ts`), a fake dataset builder (writes a manifest) and the sweep the
 * `checkpoint.registered` trigger would run played by the test (`finishSweep`: a sweep record and its comparisons).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import type { Notice } from '../../../lib/people/notify.ts';
import type { WorkflowsPort } from '../../../lib/ports/workflows.ts';
import { comparisonRecord, sweepRecord } from '../../../lib/sweeps/record-codecs.ts';
import { startLocalTraining, type LocalTraining } from '../../../lib/training/local/local-training.ts';
import { getTrainingRun } from '../../../lib/training/runs/training-runs.ts';
import { datasetKeys, type DatasetManifest, type TrainingRun, type TrainingRunStatus } from '../../../lib/training/schemas.ts';
import type { BuildDataset, TrainStepSettings } from '../../../lib/training/workflow/train-steps.ts';
import { waitFor } from '../../support/wait-for.ts';

export const FAKE_TRAINER = 'fake-trainer';

export interface TrainFixture {
  ports: LocalPorts & { workflows: WorkflowsPort };
  training: LocalTraining;
  notices: Notice[];
  datasetsBuilt: string[];
  /** What the fake trainer does for a run (`fake-policy-trainer.ts`). */
  control(runId: string, control: { exitCode?: number; stepMs?: number; holdAtStep?: number }): Promise<void>;
  release(runId: string): Promise<void>;
  /** Plays the checkpoint's sweep: its record (succeeded) and one comparison per suite with `verdict`. */
  finishSweep(sweepId: string, checkpointId: string, verdict: 'better' | 'worse' | 'no-difference'): Promise<void>;
  waitStatus(runId: string, status: TrainingRunStatus, timeoutMs?: number): Promise<TrainingRun>;
  close(): Promise<void>;
}

export const fakeBuildDataset = (built: string[]): BuildDataset => async (ports, { datasetId }) => {
  built.push(datasetId);
  const manifest: DatasetManifest = {
    datasetId,
    createdAt: ports.now().toISOString(),
    format: 'flywheel.training-shards/1',
    shards: [],
    rows: 0,
    tokens: 0,
    tokenRows: 0,
    textOnlyRows: 0,
    decisionSpans: 1,
    rewardSpecs: { 'suite-a': { kind: 'tests' } },
    decisions: ['dec-00000000000000000001'],
    sources: [],
    excluded: [],
  };
  await ports.blobs.put(datasetKeys(datasetId).manifest, JSON.stringify(manifest));
  return manifest;
};

export function openTrainFixture(dataDir: string, settings: Partial<TrainStepSettings> = {}): TrainFixture {
  const local = openLocalPorts(dataDir, {
    jobs: { definitions: { [FAKE_TRAINER]: { command: ['node', 'test/training/support/fake-policy-trainer.ts'] } }, pollMs: 50, killGraceMs: 1000 },
  });
  const notices: Notice[] = [];
  const datasetsBuilt: string[] = [];
  const training = startLocalTraining({
    dataDir,
    ports: local,
    jobs: local.jobs!,
    logger: new Logger({ serviceName: 'train-test', logLevel: 'SILENT' }),
    jobDefinition: FAKE_TRAINER,
    pollMs: 50,
    stallCheckMs: 0,
    steps: { buildDataset: fakeBuildDataset(datasetsBuilt), settings: { sweepPollSeconds: 1, codeVersion: 'test-sha-1', ...settings }, notify: async (n) => notices.push(n) },
    workflows: { heartbeatMs: 200 },
  });
  const ports = Object.assign(local, { workflows: training.route() });
  return {
    ports,
    training,
    notices,
    datasetsBuilt,
    control: (runId, control) => local.blobs.put(`fake-trainer/${runId}.json`, JSON.stringify(control)),
    release: (runId) => local.blobs.put(`fake-trainer/${runId}.release`, 'go'),
    async finishSweep(sweepId, checkpointId, verdict) {
      const now = new Date().toISOString();
      await local.records.put(
        comparisonRecord.encode({ kind: 'sweep-comparison', sweepId, checkpoint: checkpointId, suite: 'suite-a', mode: 'strict', incumbent: 'coder:incumbent', score: 0.6, incumbentScore: 0.4, difference: 0.2, ci: { low: 0.1, high: 0.3 }, paired: true, n: 50, verdict }),
      );
      await local.records.put(
        sweepRecord.encode({ kind: 'sweep', sweepId, trigger: 'checkpoint', requestedAt: now, checkpoints: [checkpointId], suites: [], modes: ['strict'], attemptsPerTask: 1, status: 'succeeded', validatedAt: now, finishedAt: now }),
      );
    },
    waitStatus: (runId, status, timeoutMs = 60_000) =>
      waitFor(
        async () => {
          const run = await getTrainingRun(local, runId);
          return run.status === status ? run : undefined;
        },
        { what: () => `run ${runId} to be ${status}`, timeoutMs },
      ),
    async close() {
      await training.close();
      await local.jobs?.close();
      local.close();
    },
  };
}
