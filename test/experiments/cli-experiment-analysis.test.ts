/**
 * `flywheel experiment analyze|status|decide` as child processes against the local runtime, over an archive written
 * through the archive writer (exposures from the assignment rule, `accepted` and `latency_ms` events): the analysis as
 * tables and as JSON that passes the analysis schema, every metric's lift chart saved as a PNG that decodes, the
 * status page with the last analysis and its recommendation, and a decision (extend) recorded.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { writeExposureRows, writeMetricRows } from '../../lib/experiments/archive/write-archive-rows.ts';
import { assignUnit } from '../../lib/experiments/assignment/assign-unit.ts';
import { archiveKeys } from '../../lib/experiments/record-keys.ts';
import { ExperimentAnalysisSchema, type ExperimentRecord, type ExposureRow, type MetricRow } from '../../lib/experiments/schemas.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';
import { useLocalRuntime } from '../judges/support/http-runtime.ts';

const exec = promisify(execFile);
const { tempDir, start } = useLocalRuntime('flywheel-experiments-cli-analysis-');

describe('flywheel experiment analyze, status and decide', () => {
  it(
    'prints the analysis, saves the lift charts, shows the last analysis and records a decision',
    async () => {
      const rt = await start();
      for (const id of ['ckpt-a', 'ckpt-b']) {
        expect((await rt.call('POST', '/v1/checkpoints', { id, model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@http://127.0.0.1:9/v1' }, sweep: false })).status).toBe(201);
      }
      const created = await rt.call('POST', '/v1/experiments', {
        id: 'exp-an',
        name: 'analysed from the CLI',
        arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'b', checkpoint: 'ckpt-b' }],
        metrics: { primary: 'accepted', guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.1 }] },
        plannedUnitsPerArm: 150,
      });
      expect(created.status).toBe(201);
      const running = (await rt.call('POST', '/v1/experiments/exp-an/start')).body.experiment as ExperimentRecord;

      // 300 users exposed a millisecond after the start, in the arm the assignment rule gives them; then their events.
      const t0 = Date.parse(running.startedAt!);
      const at = (ms: number) => new Date(t0 + ms).toISOString();
      const exposures: ExposureRow[] = [];
      const metrics: MetricRow[] = [];
      for (let i = 0; i < 300; i++) {
        const a = assignUnit(running, `user-${i}`);
        exposures.push({ id: `x-${i}`, experiment: 'exp-an', arm: a.arm, checkpoint: a.checkpoint, unit_type: 'user', unit_id: `user-${i}`, session_id: null, turn_id: null, occurred_at: at(1), received_at: at(1) });
        const row = (metric: string, value: number, n: number): MetricRow => ({ id: `m-${metric}-${i}-${n}`, metric, value, scope: 'turn', user_id: `user-${i}`, workspace_id: null, model: a.checkpoint, experiment: 'exp-an', arm: a.arm, session_id: null, turn_id: null, occurred_at: at(2), received_at: at(2) });
        if (i % 3 === 0 || (a.arm === 'b' && i % 5 === 0)) metrics.push(row('accepted', 1, 0));
        metrics.push(row('latency_ms', 900 + (i % 7) * 40, 0), row('latency_ms', 1100 + (i % 5) * 30, 1));
      }
      const day = at(1).slice(0, 10);
      await writeExposureRows(rt.side.blobs, 'default', archiveKeys.exposures('default', day, 'seed-1'), exposures);
      await writeMetricRows(rt.side.blobs, 'default', archiveKeys.metrics('default', at(2).slice(0, 10), 'seed-1'), metrics);

      const cli = async (...args: string[]) => (await exec('npx', ['node', 'bin/flywheel.ts', 'experiment', ...args, '--data-dir', rt.dataDir], { cwd: process.cwd() })).stdout;
      const charts = join(tempDir(), 'charts');
      const text = await cli('analyze', 'exp-an', '--png', charts);
      const lines = text.split('\n');
      expect(lines[0]).toMatch(/^analysis \S+ of exp-an at \S+ \(duckdb, [\d.]+ ms\)$/);
      const primary = lines.indexOf('accepted (primary, binomial, increase is better)');
      expect(primary).toBeGreaterThan(0);
      expect(lines[primary + 1]).toMatch(/^arm\s+units\s+value\s+lift\s+CI\s+sequential CI\s+p\s+adjusted p\s+chance to win\s+verdict$/);
      expect(lines[primary + 3]).toMatch(/^control\s+\d+\s+[\d.]+\s+control$/);
      expect(lines[primary + 4]).toMatch(/^b\s+\d+\s+[\d.]+\s+[+-][\d.]+%\s+\[.+\]\s+\[.+\]\s+[\d.<]+\s+[\d.<]+\s+[\d.]+%\s+(better|worse|inconclusive|too-few-units)$/);
      expect(text).toMatch(/\nlatency_ms_per_turn \(guardrail, ratio, decrease is better\)/);
      expect(text).toMatch(/\nSRM: chi-squared [\d.]+, p [\d.]+ \(control \d+, b \d+\): ok\n/);
      expect(text).toMatch(/\nrecommendation: \S+/);
      expect(readdirSync(charts).sort()).toEqual(['lift-accepted.png', 'lift-latency_ms_per_turn.png']);
      for (const f of readdirSync(charts)) expect(PNG.sync.read(readFileSync(join(charts, f))).width).toBeGreaterThan(0);

      const json = ExperimentAnalysisSchema.parse(JSON.parse(await cli('analyze', 'exp-an', '--json')));
      expect(Object.values(json.unitsPerArm).reduce((a, b) => a + b, 0)).toBe(300);

      const status = await cli('status', 'exp-an');
      expect(status).toContain(`last analysis ${json.analysisId} at ${json.at}`);
      expect(status).toMatch(/\ncontrol\s+ckpt-a\s+1\s+yes\s+\d+\s+[\d.]+%/);
      expect(status).toContain(`recommendation: ${json.recommendation.action}`);

      const decided = await cli('decide', 'exp-an', '--kind', 'extend', '--extend-days', '7', '--reason', 'too few units yet');
      expect(decided.trim()).toMatch(/^exp-an \w+: extend$/);
      const detail = (await rt.call('GET', '/v1/experiments/exp-an')).body;
      expect(detail.changes.map((c: { change: string }) => c.change)).toContain('extended');
      await expect(cli('decide', 'exp-an', '--kind', 'extend', '--extend-days', 'soon', '--reason', 'x')).rejects.toThrow(/--extend-days takes a number/);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
