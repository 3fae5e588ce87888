/**
 * The experiment lifecycle over real HTTP through the local runtime (key check, scopes, tenant ports): checkpoints
 * registered over the API, a bad definition refused naming every field (unknown metric, unknown checkpoint, schema
 * issues, an impossible power design), the planned sample from the power calculation (checked against statsmodels),
 * idempotent create (201, 200, 409), scopes, start, the assignment route (equal to the pure `assignUnit`), stopping an
 * arm (never the control) and the assignments that follow it, the history, listing by status, and stop.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { assignUnit } from '../../lib/experiments/assignment/assign-unit.ts';
import type { Assignment, ExperimentRecord } from '../../lib/experiments/schemas.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';
import { useLocalRuntime } from '../judges/support/http-runtime.ts';

const { start } = useLocalRuntime('flywheel-experiments-lifecycle-');

const definition = (overrides: Record<string, unknown> = {}) => ({
  id: 'exp-1',
  name: 'step-1200 against the incumbent',
  arms: [
    { id: 'control', checkpoint: 'ckpt-a', control: true },
    { id: 'b', checkpoint: 'ckpt-b', config: { temperature: 0.2 } },
    { id: 'c', checkpoint: 'ckpt-c' },
  ],
  metrics: { primary: 'accepted', secondary: ['cost_usd'], guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
  power: { mde: 0.1, baselineMean: 0.3 },
  ...overrides,
});

const paths = (body: Record<string, any>) => (body.issues as Array<{ path: string }>).map((i) => i.path).sort();

describe('experiments over HTTP', () => {
  it(
    'creates, refuses bad definitions naming each field, starts, assigns, stops an arm and the experiment',
    async () => {
      const rt = await start();
      const { call, runtime } = rt;
      for (const id of ['ckpt-a', 'ckpt-b', 'ckpt-c']) {
        const r = await call('POST', '/v1/checkpoints', { id, model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@http://127.0.0.1:9/v1' }, sweep: false });
        expect(r.status).toBe(201);
      }

      // Every issue named at once: an unknown metric, an unknown checkpoint.
      const unknown = await call('POST', '/v1/experiments', definition({
        id: 'exp-bad',
        arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'b', checkpoint: 'nope' }],
        metrics: { primary: 'accepted', secondary: ['no_such_metric'] },
      }));
      expect(unknown.status).toBe(400);
      expect(paths(unknown.body)).toEqual(['arms[1].checkpoint', 'metrics.secondary[0]']);
      // Schema issues: a bad id, no control, a narrowing ramp, an unknown field.
      const malformed = await call('POST', '/v1/experiments', {
        ...definition({ id: 'has space', arms: [{ id: 'x', checkpoint: 'ckpt-a' }, { id: 'y', checkpoint: 'ckpt-b', weight: -1 }], ramp: [{ percent: 50 }, { percent: 10 }] }),
        surprise: true,
      });
      expect(malformed.status).toBe(400);
      expect(paths(malformed.body)).toEqual(['arms', 'arms[1].weight', 'id', 'ramp[1].percent', 'surprise']);
      // A mean primary needs its standard deviation for the power calculation.
      const noSd = await call('POST', '/v1/experiments', definition({ id: 'exp-sd', metrics: { primary: 'cost_usd' }, power: { mde: 0.05, baselineMean: 2 } }));
      expect(noSd.status).toBe(400);
      expect(paths(noSd.body)).toEqual(['power.baselineSd']);
      expect((await call('POST', '/v1/experiments', 'not an object')).status).toBe(400);

      const created = await call('POST', '/v1/experiments', definition());
      expect(created.status).toBe(201);
      const draft = created.body.experiment as ExperimentRecord;
      expect(draft).toMatchObject({ status: 'draft', rampStep: 0, stoppedArms: [], revision: 0, origin: { kind: 'person', by: expect.stringMatching(/^key:[0-9a-f]{16}$/) } });
      // The planned sample is statsmodels' NormalIndPower answer for the same design (binomial: variance from the mean).
      const reference = Number(
        execFileSync('python3', ['-c', [
          'import math',
          'from statsmodels.stats.power import NormalIndPower',
          'p0, p1 = 0.3, 0.3 * 1.1',
          'd = (p1 - p0) / math.sqrt((p0 * (1 - p0) + p1 * (1 - p1)) / 2)',
          'print(math.ceil(NormalIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8, ratio=1.0, alternative="two-sided")))',
        ].join('\n')], { encoding: 'utf8' }),
      );
      expect(Math.abs(draft.plannedUnitsPerArm - reference)).toBeLessThanOrEqual(1);

      const again = await call('POST', '/v1/experiments', definition());
      expect([again.status, again.body.created]).toEqual([200, false]);
      const other = await call('POST', '/v1/experiments', definition({ name: 'another name' }));
      expect(other.status).toBe(409);

      // Scopes: a read key reads but cannot create or start; an ingest key assigns but cannot create.
      const { key: readKey } = await createApiKey(rt.side.records, { tenant: 'default', scopes: 'read' }, new Date());
      const { key: ingestKey } = await createApiKey(rt.side.records, { tenant: 'default', scopes: 'ingest' }, new Date());
      const as = (key: string, method: string, path: string, body?: unknown) =>
        fetch(`${runtime.url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      expect((await as(readKey, 'GET', '/v1/experiments/exp-1')).status).toBe(200);
      expect((await as(readKey, 'POST', '/v1/experiments', definition({ id: 'exp-r' }))).status).toBe(403);
      expect((await as(readKey, 'POST', '/v1/experiments/exp-1/start')).status).toBe(403);
      expect((await as(ingestKey, 'POST', '/v1/experiments', definition({ id: 'exp-i' }))).status).toBe(403);

      // A draft assigns nobody.
      const before = await call('POST', '/v1/assignments', { unitIds: ['u-1'] });
      expect(before.body).toEqual({ assignments: [] });

      const started = await call('POST', '/v1/experiments/exp-1/start');
      expect(started.status).toBe(200);
      expect(started.body).toMatchObject({ changed: true, experiment: { status: 'running', rampStep: 0, revision: 1 } });
      expect(started.body.experiment.rampStepSince).toBe(started.body.experiment.startedAt);
      expect((await call('POST', '/v1/experiments/exp-1/start')).body.changed).toBe(false);
      const running = started.body.experiment as ExperimentRecord;

      // The route answers what the pure function answers (the cache reloads: it last saw no running experiment).
      const unitIds = Array.from({ length: 60 }, (_, i) => `u-${i}`);
      const assigned = await waitFor(async () => {
        const r = await as(ingestKey, 'POST', '/v1/assignments', { unitIds });
        const b = (await r.json()) as { assignments: Assignment[] };
        return b.assignments.length > 0 ? b.assignments : undefined;
      }, { what: 'assignments of the running experiment' });
      expect(assigned).toEqual(unitIds.map((u) => assignUnit(running, u)));
      expect(new Set(assigned.map((a) => a.arm))).toEqual(new Set(['control', 'b', 'c']));
      const bad = await as(ingestKey, 'POST', '/v1/assignments', { unitIds: [], unitType: 'team', extra: 1 });
      expect(bad.status).toBe(400);
      expect(paths((await bad.json()) as Record<string, any>)).toEqual(expect.arrayContaining(['unitIds', 'unitType']));
      expect((await call('POST', '/v1/assignments', { unitIds: ['u-1'], unitType: 'workspace' })).body.assignments).toEqual([]);
      expect((await call('POST', '/v1/assignments', { unitIds: ['u-1'], experiments: ['exp-other'] })).body.assignments).toEqual([]);

      // Stopping an arm: never the control, never an unknown arm; b's units then get the control.
      const stopControl = await call('POST', '/v1/experiments/exp-1/stop', { arm: 'control', reason: 'no' });
      expect([stopControl.status, paths(stopControl.body)]).toEqual([400, ['arm']]);
      expect((await call('POST', '/v1/experiments/exp-1/stop', { arm: 'zz', reason: 'no' })).status).toBe(400);
      expect(paths((await call('POST', '/v1/experiments/exp-1/stop', { arm: 'b' })).body)).toEqual(['reason']);
      const armStopped = await call('POST', '/v1/experiments/exp-1/stop', { arm: 'b', reason: 'users report loops' });
      expect(armStopped.status).toBe(200);
      expect(armStopped.body.experiment).toMatchObject({ status: 'running', stoppedArms: [{ arm: 'b', reason: 'person', detail: 'users report loops' }] });
      expect((await call('POST', '/v1/experiments/exp-1/stop', { arm: 'b', reason: 'again' })).body.changed).toBe(false);
      const afterStop = await waitFor(async () => {
        const b = (await call('POST', '/v1/assignments', { unitIds })).body as { assignments: Assignment[] };
        return b.assignments.some((a) => a.reason === 'arm-stopped') ? b.assignments : undefined;
      }, { what: "the cache to see arm b's stop" });
      afterStop.forEach((a, i) => {
        if (assigned[i]!.arm === 'b') expect([a.arm, a.reason, a.logExposure]).toEqual(['control', 'arm-stopped', false]);
        else expect(a).toEqual(assigned[i]);
      });

      const detail = await call('GET', '/v1/experiments/exp-1');
      expect(detail.status).toBe(200);
      expect(detail.body.changes.map((c: { seq: number; change: string }) => [c.seq, c.change])).toEqual([[0, 'created'], [1, 'started'], [2, 'arm-stopped']]);
      expect(detail.body.changes[2]).toMatchObject({ by: expect.stringMatching(/^key:/), detail: { arm: 'b', detail: 'users report loops' } });
      expect((await call('GET', '/v1/experiments/nope')).status).toBe(404);
      expect((await call('GET', '/v1/experiments/has%20space')).status).toBe(400);

      const second = await call('POST', '/v1/experiments', definition({ id: 'exp-2', plannedUnitsPerArm: 500, power: undefined }));
      expect([second.status, second.body.experiment.plannedUnitsPerArm]).toEqual([201, 500]);
      const ids = async (query: string) => ((await call('GET', `/v1/experiments${query}`)).body.items as ExperimentRecord[]).map((e) => e.definition.id);
      expect(await ids('?status=running')).toEqual(['exp-1']);
      expect(await ids('?status=draft')).toEqual(['exp-2']);
      expect((await ids('')).sort()).toEqual(['exp-1', 'exp-2']);
      const page = await call('GET', '/v1/experiments?limit=1');
      expect(page.body.items).toHaveLength(1);
      expect((await call('GET', `/v1/experiments?limit=1&cursor=${encodeURIComponent(page.body.cursor)}`)).body.items).toHaveLength(1);
      expect((await call('GET', '/v1/experiments?status=paused')).status).toBe(400);

      const stopped = await call('POST', '/v1/experiments/exp-1/stop', { reason: 'wrong metric' });
      expect(stopped.body.experiment).toMatchObject({ status: 'stopped', stopReason: 'wrong metric' });
      expect((await call('POST', '/v1/experiments/exp-1/stop', { reason: 'again' })).body.changed).toBe(false);
      expect((await call('POST', '/v1/experiments/exp-1/start')).status).toBe(409);
      expect((await call('POST', '/v1/experiments/exp-1/stop', { arm: 'c', reason: 'late' })).status).toBe(409);
      expect((await call('POST', '/v1/experiments/nope/start')).status).toBe(404);
      await waitFor(async () => ((await call('POST', '/v1/assignments', { unitIds })).body.assignments.length === 0 ? true : undefined), { what: 'the stopped experiment to leave the assignments' });

      const doc = (await call('GET', '/v1/openapi.json')).body;
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/experiments', '/v1/experiments/{id}', '/v1/experiments/{id}/start', '/v1/experiments/{id}/stop', '/v1/assignments']));
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
