/**
 * Training runs over HTTP through the local runtime (`startLocalRuntime`: real HTTP with the key check and scopes),
 * with runs seeded in its records and their metrics in its blobs: list (and by status), one run, 404s, the curves as
 * JSON and as a PNG that decodes with a panel per metric, a bad start request (400 naming the field), scopes (a read
 * key cannot start or stop), and stop. Then the CLI as a child process against the same server: `train status`,
 * `train status RUN`, `train curves RUN` and `--png`, `train stop`; `train run` (its flags become the request), stop and
 * resume of the run it started.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { ErrorNames } from '../../lib/errors.ts';
import { formatRunDetail } from '../../lib/cli/train.ts';
import { curvePanels } from '../../lib/training/render-training-curves.ts';
import { createRun } from '../../lib/training/runs/run-store.ts';
import { TERMINAL_TRAINING_RUN_STATUSES, TrainingRunInputSchema, trainingRunKeys, type TrainingMetricsLine, type TrainingRun, type TrainingRunStatus } from '../../lib/training/schemas.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';
import { useLocalRuntime, type StartedRuntime } from '../judges/support/http-runtime.ts';

const exec = promisify(execFile);
const { tempDir, start } = useLocalRuntime('flywheel-training-http-');

const T0 = Date.parse('2026-12-01T10:00:00Z');

function seededRun(runId: string, status: TrainingRunStatus, minute: number, extra: Partial<TrainingRun> = {}): TrainingRun {
  const at = new Date(T0 + minute * 60_000).toISOString();
  return {
    runId,
    request: TrainingRunInputSchema.parse({ runId, base: 'tiny:0', dataset: { runs: ['eval-1'] }, trainer: { steps: 12 } }),
    status,
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

function metrics(n: number): TrainingMetricsLine[] {
  return Array.from({ length: n }, (_, step) => ({
    step,
    at: new Date(T0 + step * 1000).toISOString(),
    loss: 3 / (step + 1),
    tokens: 512,
    stepSeconds: 0.25,
    outcomeLoss: 1 / (step + 1),
    decisionLoss: 2 - step * 0.1,
    klSpans: 0.01 * step,
    localityKl: 0.001 * step,
    mismatch: 0.003,
  }));
}

async function seed(rt: StartedRuntime): Promise<void> {
  await createRun(rt.side, seededRun('run-a', 'succeeded', 0, { step: 9, checkpointId: 'tiny:run-a', endedAt: new Date(T0 + 60_000).toISOString() }));
  await createRun(rt.side, seededRun('run-b', 'training', 5, { step: 9, lastHeartbeatAt: new Date(T0 + 9000).toISOString() }));
  const body = `${metrics(10)
    .map((l) => JSON.stringify(l))
    .join('\n')}\n`;
  await rt.side.blobs.put(trainingRunKeys('run-b').metrics, Buffer.from(body));
}

describe('training runs over HTTP', () => {
  it(
    'lists, reads, draws the curves, refuses bad or unauthorised requests and stops a run',
    async () => {
      const rt = await start();
      await seed(rt);
      const { call, runtime } = rt;

      const all = await call('GET', '/v1/training-runs');
      expect(all.status).toBe(200);
      expect(all.body.items.map((r: TrainingRun) => r.runId)).toEqual(['run-b', 'run-a']);
      const training = await call('GET', '/v1/training-runs?status=training');
      expect(training.body.items.map((r: TrainingRun) => r.runId)).toEqual(['run-b']);
      expect((await call('GET', '/v1/training-runs?status=nope')).status).toBe(400);

      const one = await call('GET', '/v1/training-runs/run-a');
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ runId: 'run-a', status: 'succeeded', checkpointId: 'tiny:run-a' });
      const missing = await call('GET', '/v1/training-runs/nope');
      expect(missing.status).toBe(404);

      const curves = await call('GET', '/v1/training-runs/run-b/curves');
      expect(curves.status).toBe(200);
      expect(curves.body.lines).toHaveLength(10);
      expect(curves.body.lines[3]).toMatchObject({ step: 3, loss: 0.75 });
      expect((await call('GET', '/v1/training-runs/run-a/curves')).body.lines).toEqual([]);
      expect((await call('GET', '/v1/training-runs/nope/curves')).status).toBe(404);
      expect((await call('GET', '/v1/training-runs/run-b/curves?format=gif')).status).toBe(400);

      const res = await fetch(`${runtime.url}/v1/training-runs/run-b/curves?format=png`, { headers: { 'x-api-key': runtime.apiKey, accept: 'image/png' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      const layout = curvePanels(metrics(10));
      expect([png.width, png.height]).toEqual([layout.width, layout.height]);
      expect(layout.panels.map((p) => p.metric)).toEqual(['loss', 'outcomeLoss', 'decisionLoss', 'klSpans', 'localityKl', 'mismatch', 'tokens/s']);
      const pngMissing = await fetch(`${runtime.url}/v1/training-runs/nope/curves?format=png`, { headers: { 'x-api-key': runtime.apiKey } });
      expect(pngMissing.status).toBe(404);
      expect(((await pngMissing.json()) as { error: string }).error).toBe(ErrorNames.notFound);

      const bad = await call('POST', '/v1/training-runs', { dataset: {}, trainer: { steps: 0 } });
      expect(bad.status).toBe(400);
      expect(bad.body.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['base', 'trainer.steps']));
      // A dataset that selects nothing trains on nothing: refused at the door, naming it.
      const empty = await call('POST', '/v1/training-runs', { base: 'tiny:0', dataset: {} });
      expect(empty.status).toBe(400);
      expect(empty.body.issues).toEqual([expect.objectContaining({ path: 'dataset' })]);

      const { key: readKey } = await createApiKey(rt.side.records, { tenant: 'default', scopes: 'read' }, new Date());
      const asReader = (method: string, path: string) => fetch(`${runtime.url}${path}`, { method, headers: { 'x-api-key': readKey } });
      expect((await asReader('GET', '/v1/training-runs/run-b')).status).toBe(200);
      expect((await asReader('POST', '/v1/training-runs/run-b/stop')).status).toBe(403);

      const stopped = await call('POST', '/v1/training-runs/run-b/stop');
      expect(stopped.status).toBe(200);
      expect(stopped.body).toMatchObject({ runId: 'run-b', status: 'stopped', stoppedBy: expect.stringMatching(/^key:[0-9a-f]{16}$/) });
      const again = await call('POST', '/v1/training-runs/run-a/stop');
      expect(again.body.status).toBe('succeeded');
      expect((await call('POST', '/v1/training-runs/nope/stop')).status).toBe(404);

      // Started over HTTP: 201, then 200 for the same run; a succeeded run is not resumed (400 naming its status).
      const request = { runId: 'http-run', base: 'tiny:0', dataset: { runs: ['no-such-eval'] }, sweep: false };
      const created = await call('POST', '/v1/training-runs', request);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ created: true, run: { runId: 'http-run', createdBy: expect.stringMatching(/^key:/) } });
      const existed = await call('POST', '/v1/training-runs', request);
      expect(existed.status).toBe(200);
      expect(existed.body.created).toBe(false);
      const notResumed = await call('POST', '/v1/training-runs/run-a/resume');
      expect(notResumed.status).toBe(400);
      expect(notResumed.body.issues).toEqual([{ path: 'status', message: 'is succeeded' }]);
      // Its rollouts do not exist: the run fails at its dataset, and people are told why.
      const failed = await waitFor(async () => {
        const r = (await call('GET', '/v1/training-runs/http-run')).body;
        return TERMINAL_TRAINING_RUN_STATUSES.includes(r.status) ? r : undefined;
      }, { what: 'http-run to end' });
      expect(failed).toMatchObject({ status: 'failed', error: { error: ErrorNames.validation } });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'answers the CLI: status as a table and one run, curves as a table and as a PNG file, stop',
    async () => {
      const rt = await start();
      await seed(rt);
      const out = tempDir();
      const cli = async (...args: string[]) => (await exec('npx', ['node', 'bin/flywheel.ts', 'train', ...args, '--data-dir', rt.dataDir], { cwd: process.cwd() })).stdout;

      const table = await cli('status');
      const rows = table.trim().split('\n');
      expect(rows[0]).toMatch(/^run\s+status\s+step\s+heartbeat\s+base\s+checkpoint\s+updated$/);
      expect(rows[2]).toMatch(/^run-b\s+training\s+9\/12\s+\d+d\s+tiny:0/);
      expect(rows[3]).toMatch(/^run-a\s+succeeded\s+9\/12\s+tiny:0\s+tiny:run-a/);

      const detail = await cli('status', 'run-a');
      expect(detail).toContain('training run run-a');
      expect(detail).toMatch(/status\s+succeeded/);
      expect(detail).toMatch(/checkpoint\s+tiny:run-a/);

      const curves = await cli('curves', 'run-b');
      expect(curves.split('\n')[0]).toMatch(/^step\s+loss\s+tokens\s+stepSeconds\s+outcomeLoss/);
      expect(curves.trim().split('\n')).toHaveLength(12);

      const file = join(out, 'curves.png');
      expect(await cli('curves', 'run-b', '--png', file)).toContain(file);
      const png = PNG.sync.read(readFileSync(file));
      expect(png.width).toBe(curvePanels(metrics(10)).width);

      expect((await cli('stop', 'run-b')).trim()).toBe('run-b stopped');
      await expect(cli('status', 'nope')).rejects.toThrow(/Flywheel.NotFoundError/);

      // A run started from the CLI: its flags make the request; the same request again finds the run.
      const args = ['run', '--base', 'tiny:0', '--run', 'no-such-eval', '--sweep', 'sw-1', '--run-id', 'cli-run', '--steps', '3', '--decision-weight', '2', '--outcome-weight', '0.5', '--lora-rank', '4', '--no-sweep'];
      expect((await cli(...args)).trim()).toMatch(/^cli-run [a-z-]+$/);
      const made = (await rt.call('GET', '/v1/training-runs/cli-run')).body;
      expect(made.request).toMatchObject({
        base: 'tiny:0',
        sweep: false,
        proposeExperiment: false,
        dataset: { runs: ['no-such-eval'], sweeps: ['sw-1'] },
        trainer: { steps: 3, decisionWeight: 2, outcomeWeight: 0.5, lora: { rank: 4 } },
      });
      expect((await cli(...args)).trim()).toMatch(/^cli-run [a-z-]+ \(existed\)$/);
      await expect(cli('run', '--base', 'tiny:0', '--steps', 'many')).rejects.toThrow(/--steps takes an integer/);
      const ended = async () => {
        let status = '';
        await waitFor(async () => (TERMINAL_TRAINING_RUN_STATUSES.includes((status = (await rt.call('GET', '/v1/training-runs/cli-run')).body.status)) ? true : undefined), {
          what: () => `run cli-run to end (now ${status})`,
        });
        return status;
      };
      expect((await cli('stop', 'cli-run')).trim()).toMatch(/^cli-run (stopped|failed)$/);
      expect(['stopped', 'failed']).toContain(await ended());
      expect((await cli('resume', 'cli-run')).trim()).toMatch(/^cli-run [a-z-]+$/);
      expect((await rt.call('GET', '/v1/training-runs/cli-run')).body.resumes).toBe(1);
      await ended();
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('formatRunDetail', () => {
  it("shows the record's own fields: execution, resumes, who stopped it, the comparison in brief, the proposal", () => {
    const run = seededRun('run-d', 'stopped', 0, {
      executionId: 'arn:exec:train-policy:run-d-r1',
      resumes: 1,
      stoppedBy: 'bob',
      endedAt: '2026-12-01T11:00:00.000Z',
      stallNotifiedAt: '2026-12-01T10:40:00.000Z',
      comparison: { compared: false, reason: 'sweep sw-1 is partial' },
      proposal: { proposalId: 'exp-1', status: 'proposed' },
    });
    const text = formatRunDetail(run as unknown as Record<string, unknown>, Date.parse('2026-12-01T12:00:00Z'));
    expect(text).toMatch(/execution\s+arn:exec:train-policy:run-d-r1/);
    expect(text).toMatch(/resumes\s+1/);
    expect(text).toMatch(/ended\s+2026-12-01T11:00:00.000Z \(stopped by bob\)/);
    expect(text).toMatch(/stall told\s+2026-12-01T10:40:00.000Z/);
    expect(text).toMatch(/comparison\s+not compared: sweep sw-1 is partial/);
    expect(text).toMatch(/proposal\s+exp-1 \(proposed\)/);
    expect(formatRunDetail({ ...run, comparison: { compared: true, better: true, improvements: 2, regressions: 0, sweepStatus: 'succeeded' } } as unknown as Record<string, unknown>)).toMatch(
      /comparison\s+better \(2 better, 0 worse; sweep succeeded\)/,
    );
  });
});
