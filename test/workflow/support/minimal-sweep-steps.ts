/**
 * Small but real implementations of the sweep steps (`SweepSteps`), for testing the state machine and the local
 * workflows driver on their own: the sweep record, one shard spec blob per checkpoint × suite × mode, a result record
 * per shard aggregated from the attempt records its job wrote, failures recorded, saturation as a conditional put,
 * events published. Every write is idempotent (natural keys; overwrite or put-if-absent), as the contract requires.
 * Suites are records `SUITE#<id>` / `META` with `tasks: string[]`; the registry's own steps replace these in the app.
 */
import { ValidationError } from '../../../lib/errors.ts';
import type { RecordItem } from '../../../lib/ports/records.ts';
import type {
  IncumbentComparison,
  SaturationCheck,
  ShardOutcome,
  ShardPlan,
  ShardRef,
  SweepExecutionInput,
  SweepNotice,
  SweepStepPorts,
  SweepSteps,
  ValidatedSweep,
} from '../../../lib/sweeps/workflow/sweep-steps.ts';

export interface TestShardSpec {
  sweepId: string;
  shardId: string;
  runId: string;
  checkpoint: string;
  suite: string;
  mode: string;
  attemptsPerTask: number;
  arraySize: number;
  tasks: string[];
}

export interface TestSweepRecord extends RecordItem {
  checkpoints: string[];
  suites: string[];
  modes: string[];
  attemptsPerTask: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function putTestSuite(ports: SweepStepPorts, suite: string, tasks: string[]): Promise<void> {
  await ports.records.put({ pk: `SUITE#${suite}`, sk: 'META', tasks });
}

export function runIdOf(sweepId: string, shardId: string): string {
  return `${sweepId}.${shardId}`;
}

export async function listAll(ports: SweepStepPorts, partition: string, beginsWith?: string): Promise<RecordItem[]> {
  const items: RecordItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ partition, ...(beginsWith ? { sort: { beginsWith } } : {}), ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

export function minimalSweepSteps(options: { saturationThreshold?: number } = {}): SweepSteps {
  const threshold = options.saturationThreshold ?? 0.9;
  return {
    async 'validate-sweep'(ports, input: SweepExecutionInput): Promise<ValidatedSweep> {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(input.sweepId ?? '')) throw new ValidationError('sweepId: 1–64 letters, digits, - or _', [{ path: 'sweepId', message: 'pattern' }]);
      if (!input.checkpoints?.length || !input.suites?.length) throw new ValidationError('checkpoints and suites are required here', [{ path: 'checkpoints', message: 'required' }]);
      const modes = input.modes ?? ['strict', 'lenient'];
      for (const suite of input.suites) {
        if (!(await ports.records.get(`SUITE#${suite}`, 'META'))) throw new ValidationError(`no suite ${suite}`, [{ path: 'suites', message: suite }]);
      }
      const record: TestSweepRecord = { pk: `SWEEP#${input.sweepId}`, sk: 'META', checkpoints: input.checkpoints, suites: input.suites, modes, attemptsPerTask: input.attemptsPerTask ?? 1 };
      await ports.records.put(record, { condition: { kind: 'absent' } });
      return { sweepId: input.sweepId, sweepKey: `SWEEP#${input.sweepId}/META`, checkpoints: input.checkpoints.length, suites: input.suites.length, modes: modes.length };
    },

    async 'plan-shards'(ports, { sweepId }): Promise<ShardPlan> {
      const sweep = (await ports.records.get(`SWEEP#${sweepId}`, 'META')) as TestSweepRecord | undefined;
      if (!sweep) throw new ValidationError(`no sweep ${sweepId}`);
      const shards: ShardRef[] = [];
      for (const [ci, checkpoint] of sweep.checkpoints.entries()) {
        for (const [si, suite] of sweep.suites.entries()) {
          const tasks = ((await ports.records.get(`SUITE#${suite}`, 'META'))?.tasks ?? []) as string[];
          for (const mode of sweep.modes) {
            const shardId = `c${ci}-s${si}-${mode}`;
            const shardKey = `sweeps/${sweepId}/shards/${shardId}.json`;
            const spec: TestShardSpec = { sweepId, shardId, runId: runIdOf(sweepId, shardId), checkpoint, suite, mode, attemptsPerTask: sweep.attemptsPerTask, arraySize: 2, tasks };
            await ports.blobs.put(shardKey, encoder.encode(JSON.stringify(spec)));
            shards.push({ shardId, shardKey, checkpoint, suite, mode: mode as ShardRef['mode'], arraySize: 2, gpus: 1 });
          }
        }
      }
      await ports.blobs.put(`sweeps/${sweepId}/plan.json`, encoder.encode(JSON.stringify(shards)));
      return { sweepId, planKey: `sweeps/${sweepId}/plan.json`, shardCount: shards.length, shards };
    },

    async 'aggregate-shard'(ports, { sweepId, shard, job }): Promise<ShardOutcome> {
      const spec = JSON.parse(decoder.decode(await ports.blobs.get(shard.shardKey))) as TestShardSpec;
      const attempts = await listAll(ports, `EVAL#${spec.runId}`, 'ATTEMPT#');
      const passed = attempts.filter((a) => a.status === 'passed').length;
      const resultKey = `RESULT#${shard.suite}#${shard.mode}`;
      // Natural key (suite × mode, checkpoint × sweep): a second aggregation overwrites, never adds a point.
      await ports.records.put({ pk: resultKey, sk: `${shard.checkpoint}#${sweepId}`, sweepId, checkpoint: shard.checkpoint, suite: shard.suite, mode: shard.mode, jobId: job.jobId, attempts: attempts.length, passed, score: attempts.length ? passed / attempts.length : 0 });
      await ports.records.put({ pk: `SWEEP#${sweepId}`, sk: `SHARD#${shard.shardId}`, status: 'succeeded', resultKey });
      return { shardId: shard.shardId, status: 'succeeded', resultKey: `${resultKey}/${shard.checkpoint}#${sweepId}` };
    },

    async 'record-shard-failure'(ports, { sweepId, shard, error }): Promise<ShardOutcome> {
      const causeKey = `sweeps/${sweepId}/failures/${shard.shardId}.txt`;
      await ports.blobs.put(causeKey, encoder.encode(error.Cause ?? ''));
      await ports.records.put({ pk: `SWEEP#${sweepId}`, sk: `SHARD#${shard.shardId}`, status: 'failed', error: error.Error, causeKey });
      return { shardId: shard.shardId, status: 'failed', error: error.Error };
    },

    async 'compare-incumbent'(ports, { sweepId }): Promise<IncumbentComparison> {
      const sweep = (await ports.records.get(`SWEEP#${sweepId}`, 'META')) as TestSweepRecord;
      let comparisons = 0;
      let regressions = 0;
      let improvements = 0;
      for (const suite of sweep.suites) {
        for (const mode of sweep.modes) {
          const results = await listAll(ports, `RESULT#${suite}#${mode}`);
          const incumbent = (await ports.records.get(`INCUMBENT#${suite}#${mode}`, 'META'))?.score as number | undefined;
          for (const r of results.filter((x) => x.sweepId === sweepId)) {
            if (incumbent === undefined) continue;
            comparisons++;
            if ((r.score as number) < incumbent) regressions++;
            if ((r.score as number) > incumbent) improvements++;
          }
        }
      }
      await ports.records.put({ pk: `SWEEP#${sweepId}`, sk: 'COMPARISON', comparisons, regressions, improvements });
      return { comparisonKey: `SWEEP#${sweepId}/COMPARISON`, comparisons, regressions, improvements };
    },

    async 'check-saturation'(ports, { sweepId }): Promise<SaturationCheck> {
      const sweep = (await ports.records.get(`SWEEP#${sweepId}`, 'META')) as TestSweepRecord;
      const newlySaturated: string[] = [];
      for (const suite of sweep.suites) {
        const best = Math.max(0, ...(await listAll(ports, `RESULT#${suite}#strict`)).map((r) => r.score as number));
        if (best < threshold) continue;
        const { written } = await ports.records.put({ pk: `SUITE#${suite}`, sk: 'SATURATED', best, sweepId, at: ports.now().toISOString() }, { condition: { kind: 'absent' } });
        if (written) newlySaturated.push(suite);
      }
      return { newlySaturated, threshold };
    },

    async notify(ports, { sweepId, shards, saturation }): Promise<SweepNotice> {
      const failed = shards.filter((s) => s.status === 'failed').length;
      const notice: SweepNotice = {
        sweepId,
        status: failed === 0 ? 'succeeded' : failed === shards.length ? 'failed' : 'partial',
        succeededShards: shards.length - failed,
        failedShards: failed,
      };
      await ports.events.publish([
        { type: 'sweep.finished', id: `sweep.finished:${sweepId}`, detail: { ...notice, failed: shards.filter((s) => s.status === 'failed').map((s) => s.shardId) } },
        ...saturation.newlySaturated.map((suite) => ({ type: 'suite.saturated', id: `suite.saturated:${suite}`, detail: { suite, sweepId, threshold: saturation.threshold } })),
      ]);
      return notice;
    },
  };
}
