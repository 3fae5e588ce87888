/**
 * The suite lifecycle through the API (real dispatcher and route table over the local drivers): register a version,
 * re-register with changed tasks (the next version), retire, read one suite with its useful life and best-score
 * series; and what sweeps do with saturated and retired suites.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routes } from '../../lib/api/routes.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';
import { getSuite } from '../../lib/registry/get-suite.ts';
import { retireSuite } from '../../lib/registry/retire-suite.ts';
import { updateSuite } from '../../lib/registry/update-suite.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { resolveSweepSelection } from '../../lib/sweeps/resolve-sweep-selection.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { waitFor } from '../support/wait-for.ts';
import { apiEvent } from '../support/lambda-events.ts';

let fx: SweepFixture;
let workflows: LocalWorkflows | undefined;
afterEach(async () => {
  await workflows?.close();
  workflows = undefined;
  fx?.close();
});

const DAY_MS = 24 * 3600 * 1000;
const suiteBody = (overrides: Record<string, unknown> = {}) => ({
  id: 'forge-py',
  visibility: 'private',
  owner: 'evals',
  description: 'forged Python tasks',
  tasks: { kind: 'records' },
  taskIds: ['t1', 't2'],
  ...overrides,
});

describe('POST /v1/suites', () => {
  it('registers v1, answers an unchanged retry 200, gives changed tasks the next version (a new life)', async () => {
    fx = openSweepFixture();
    const created = await fx.request('POST', '/v1/suites', { body: suiteBody() });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      created: true,
      suite: { id: 'forge-py', version: 1, visibility: 'private', status: 'active', owner: 'evals', description: 'forged Python tasks', tasks: { kind: 'records', sk: 'TASK' }, taskCount: 2, createdAt: '2026-12-02T10:00:00.000Z' },
    });
    fx.tick(1000);
    const retry = await fx.request('POST', '/v1/suites', { body: suiteBody() });
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({ created: false, suite: { version: 1, createdAt: '2026-12-02T10:00:00.000Z' } });
    expect(retry.json.previousVersion).toBeUndefined();

    fx.tick(DAY_MS);
    const v2 = await fx.request('POST', '/v1/suites', { body: suiteBody({ taskIds: ['t1', 't2', 't3'] }) });
    expect(v2.status).toBe(201);
    expect(v2.json).toMatchObject({ created: true, previousVersion: 1, suite: { version: 2, taskCount: 3, status: 'active', createdAt: '2026-12-03T10:00:01.000Z' } });
    expect(v2.json.suite.taskIds).toBeUndefined();
    expect((await getSuite(fx.ports.records, 'forge-py')).taskIds).toEqual(['t1', 't2', 't3']);
    // The same file again: v2, unchanged.
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody({ taskIds: ['t1', 't2', 't3'] }) })).json).toMatchObject({ created: false, suite: { version: 2 } });
    // An explicit version keeps its rules: lower is refused, the same with other content too, higher is taken as given.
    const lower = await fx.request('POST', '/v1/suites', { body: suiteBody({ version: 1 }) });
    expect(lower.status).toBe(400);
    expect(lower.json.issues).toEqual([{ path: 'version', message: 'must be > 2' }]);
    const same = await fx.request('POST', '/v1/suites', { body: suiteBody({ version: 2, owner: 'someone-else' }) });
    expect(same.json.issues).toEqual([{ path: 'version', message: 'already registered with other content' }]);
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody({ version: 5 }) })).json).toMatchObject({ created: true, previousVersion: 2, suite: { version: 5 } });

    const list = await fx.request('GET', '/v1/suites');
    expect(list.json.items.map((s: { id: string; version: number }) => [s.id, s.version])).toEqual([['forge-py', 5]]);
  });

  it('answers 400 naming each bad field, and 415 without JSON', async () => {
    fx = openSweepFixture();
    const bad = await fx.request('POST', '/v1/suites', {
      body: { id: 'has#hash', visibility: 'secret', tasks: { kind: 'blobs', prefix: 'no-slash' }, taskIds: [], saturationThreshold: 2, colour: 'red' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('Flywheel.ValidationError');
    expect(bad.json.issues.map((i: { path: string }) => i.path).sort()).toEqual(['colour', 'id', 'owner', 'saturationThreshold', 'taskIds', 'tasks.prefix', 'visibility']);
    expect(bad.json.issues).toEqual(expect.arrayContaining([{ path: 'colour', message: 'is not a known field' }, { path: 'tasks.prefix', message: 'ends with /' }]));
    expect(bad.json.message).toMatch(/^Invalid suite: /);
    expect(bad.json.message).toContain('visibility: ');
    const dupes = await fx.request('POST', '/v1/suites', { body: suiteBody({ taskIds: ['a', 'b', 'a'] }) });
    expect(dupes.json.issues).toEqual([{ path: 'taskIds', message: 'duplicate ids' }]);
    expect(dupes.json.message).toContain('task ids appear twice: a');
    // A folder suite names a folder of the server: never registered through the API (the CLI registers it into the
    // local data folder directly); blobs only under the suite's own prefix.
    for (const path of ['/no/such/suite-folder', 'tasks', '/etc']) {
      const away = await fx.request('POST', '/v1/suites', { body: suiteBody({ tasks: { kind: 'folder', path } }) });
      expect(away.status).toBe(400);
      expect(away.json.issues).toEqual([{ path: 'tasks.kind', message: expect.stringContaining('never a suite through the API') }]);
    }
    const elsewhere = await fx.request('POST', '/v1/suites', { body: suiteBody({ tasks: { kind: 'blobs', prefix: 'trajectories/feedback/' } }) });
    expect(elsewhere.json.issues).toEqual([{ path: 'tasks.prefix', message: "must be under the suite's own prefix suites/forge-py/" }]);
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody({ tasks: { kind: 'blobs', prefix: 'suites/forge-py/../x/' } }) })).status).toBe(400);
    const noJson = await makeDispatcher(routes, fx.ports)(apiEvent('POST', '/v1/suites', 'id=x', { 'Content-Type': 'text/plain' }));
    expect(noJson.statusCode).toBe(415);
    expect((await fx.request('GET', '/v1/suites')).json.items).toEqual([]);
  });
});

/** The records port, with `meanwhile` run once just before the first put: another writer between a read and a write. */
function racingRecords(records: RecordsPort, meanwhile: () => Promise<void>): RecordsPort {
  let raced = false;
  return {
    get: (pk, sk) => records.get(pk, sk),
    query: (q) => records.query(q),
    putMany: (items) => records.putMany(items),
    delete: (pk, sk) => records.delete(pk, sk),
    put: async (item, options) => {
      if (!raced) {
        raced = true;
        await meanwhile();
      }
      return records.put(item, options);
    },
  };
}

describe('updateSuite: a sweep and a person writing one suite at once', () => {
  it('the write that lost reads again and decides on the winner: a retirement is never undone by a saturation mark', async () => {
    fx = openSweepFixture();
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody() })).status).toBe(201);
    const records = fx.ports.records;
    // Between the sweep step's read and its write, a person retires the suite (through the real use case).
    const racing = racingRecords(records, async () => void (await retireSuite(fx.ports, 'forge-py', { reason: 'superseded' })));
    const seen: string[] = [];
    const written = await updateSuite(racing, 'forge-py', (current) => {
      seen.push(current.status);
      return current.status === 'retired' ? undefined : { ...current, status: 'saturated', saturatedAt: '2026-12-03T00:00:00.000Z' };
    });
    expect(seen).toEqual(['active', 'retired']);
    expect(written).toBeUndefined();
    const suite = await getSuite(records, 'forge-py');
    expect(suite).toMatchObject({ status: 'retired', retiredReason: 'superseded' });
    expect(suite).not.toHaveProperty('saturatedAt');
    expect(suite).not.toHaveProperty('revision');
  });

  it('a write that read the version before a new registration loses to it, and decides again on the new version', async () => {
    fx = openSweepFixture();
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody() })).status).toBe(201);
    const records = fx.ports.records;
    // Between the read of v1 and the write, the owner registers v2 (other tasks: the next version).
    const racing = racingRecords(records, async () => {
      expect((await fx.request('POST', '/v1/suites', { body: suiteBody({ taskIds: ['t1', 't2', 't3'] }) })).json.suite.version).toBe(2);
    });
    const seen: number[] = [];
    await updateSuite(racing, 'forge-py', (current) => {
      seen.push(current.version);
      // As check-saturation decides: only the version it scored.
      return current.version === 1 ? { ...current, status: 'saturated' } : undefined;
    });
    expect(seen).toEqual([1, 2]);
    expect(await getSuite(records, 'forge-py')).toMatchObject({ version: 2, status: 'active', taskIds: ['t1', 't2', 't3'] });
  });
});

describe('POST /v1/suites/{id}/retire', () => {
  it('marks a suite retired with time, reason and who; idempotent; publishes suite.retired; 400 without a reason, 404 if unknown', async () => {
    fx = openSweepFixture();
    await fx.request('POST', '/v1/suites', { body: suiteBody() });
    const missing = await fx.request('POST', '/v1/suites/nope/retire', { body: { reason: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('No suite nope');
    const noReason = await fx.request('POST', '/v1/suites/forge-py/retire', { body: { reason: '  ', extra: true } });
    expect(noReason.status).toBe(400);
    expect(noReason.json.issues).toEqual([
      { path: 'reason', message: 'say why the suite is retired' },
      { path: 'extra', message: 'is not a known field' },
    ]);
    expect((await getSuite(fx.ports.records, 'forge-py')).status).toBe('active');

    fx.tick(10 * DAY_MS);
    const retired = await fx.request('POST', '/v1/suites/forge-py/retire', { body: { reason: 'superseded by forge-py-hard', by: 'ana' } });
    expect(retired.status).toBe(200);
    expect(retired.json).toMatchObject({ changed: true, suite: { id: 'forge-py', status: 'retired', retiredAt: '2026-12-12T10:00:00.000Z', retiredReason: 'superseded by forge-py-hard', retiredBy: 'ana' } });
    fx.tick(1000);
    const again = await fx.request('POST', '/v1/suites/forge-py/retire', { body: { reason: 'another reason' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ changed: false, suite: { retiredAt: '2026-12-12T10:00:00.000Z', retiredReason: 'superseded by forge-py-hard' } });
    // Subscribers are called after the publish returns: wait for the fixture's to have seen both retirements.
    await waitFor(() => (fx.events.filter((e) => e.type === 'suite.retired').length >= 2 ? true : undefined), { what: 'two suite.retired events to be delivered', everyMs: 5 });
    const events = fx.events.filter((e) => e.type === 'suite.retired');
    expect(events.map((e) => e.id)).toEqual(['suite.retired:forge-py:v1', 'suite.retired:forge-py:v1']);
    expect(events[0]!.detail).toEqual({ suite: 'forge-py', version: 1, retiredAt: '2026-12-12T10:00:00.000Z', reason: 'superseded by forge-py-hard', by: 'ana' });

    expect((await fx.request('GET', '/v1/suites', { query: { status: 'retired' } })).json.items.map((s: { id: string }) => s.id)).toEqual(['forge-py']);
    const detail = await fx.request('GET', '/v1/suites/forge-py');
    expect(detail.json.usefulLife).toEqual({ startedAt: '2026-12-02T10:00:00.000Z', endedAt: '2026-12-12T10:00:00.000Z', endedBy: 'retirement', days: 10 });
    // Registering changed content starts a new, active life as the next version.
    const v2 = await fx.request('POST', '/v1/suites', { body: suiteBody({ taskIds: ['t1', 't2', 't9'] }) });
    expect(v2.json.suite).toMatchObject({ version: 2, status: 'active' });
    expect(v2.json.suite.retiredAt).toBeUndefined();
  });

  it('sweeps: the default selection leaves saturated and retired suites out; a saturated one may be named, a retired one is refused by name', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 3, tasks: 2 });
    await fx.ports.records.put({ ...(await fx.ports.records.get('SUITE#suite-1', 'SUITE'))!, status: 'saturated' });
    expect((await fx.request('POST', '/v1/suites/suite-2/retire', { body: { reason: 'flaky tasks' } })).status).toBe(200);

    const byDefault = await resolveSweepSelection(fx.ports.records, {}, fx.settings);
    expect(byDefault.suites.map((s) => s.id)).toEqual(['suite-0']);
    const named = await resolveSweepSelection(fx.ports.records, { suites: ['suite-1'] }, fx.settings);
    expect(named.suites.map((s) => [s.id, s.status])).toEqual([['suite-1', 'saturated']]);
    // A real workflows driver with no state machine: the refusal comes before any start.
    workflows = new LocalWorkflows(openDatabase(join(fx.dir, 'workflows.sqlite')), {});
    fx.ports.workflows = workflows;
    const refused = await fx.request('POST', '/v1/sweeps', { body: { suites: ['suite-0', 'suite-2'], modes: ['strict'] } });
    expect(refused.status).toBe(400);
    expect(refused.json.issues).toEqual([{ path: 'suites[1]', message: 'suite suite-2 is retired' }]);
  });
});

describe('GET /v1/suites/{id}', () => {
  it('shows the status, the useful life (creation → saturation) and the best strict score per sweep, oldest first', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const sweep = async (sweepId: string, rate: (ck: string) => number) =>
      driveSweep(steps, fx.ports, { sweepId, trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script: rateScript((ck) => rate(ck)) });

    fx.tick(DAY_MS);
    await sweep('s1', (ck) => (ck === 'ck-0' ? 0.5 : 0.3));
    const active = await fx.request('GET', '/v1/suites/suite-0');
    expect(active.status).toBe(200);
    expect(active.json).toMatchObject({ id: 'suite-0', version: 1, status: 'active', taskCount: 20, best: { score: 0.5, checkpoint: 'ck-0', sweepId: 's1' } });
    expect(active.json.usefulLife).toEqual({ startedAt: '2026-12-02T10:00:02.000Z', days: 1 });
    expect(active.json.taskIds).toBeUndefined();

    fx.tick(DAY_MS);
    await sweep('s2', (ck) => (ck === 'ck-0' ? 0.4 : 0.7));
    fx.tick(DAY_MS);
    await sweep('s3', (ck) => (ck === 'ck-1' ? 0.9 : 0.5));
    const saturated = await fx.request('GET', '/v1/suites/suite-0');
    expect(saturated.json).toMatchObject({ status: 'saturated', usefulLifeDays: 3, best: { score: 0.9, checkpoint: 'ck-1', sweepId: 's3' } });
    expect(saturated.json.usefulLife).toEqual({ startedAt: '2026-12-02T10:00:02.000Z', endedAt: '2026-12-05T10:00:02.000Z', endedBy: 'saturation', days: 3 });
    expect(saturated.json.bestScores).toEqual([
      { at: '2026-12-03T10:00:02.000Z', sweepId: 's1', checkpoint: 'ck-0', score: 0.5, suiteVersion: 1 },
      { at: '2026-12-04T10:00:02.000Z', sweepId: 's2', checkpoint: 'ck-1', score: 0.7, suiteVersion: 1 },
      { at: '2026-12-05T10:00:02.000Z', sweepId: 's3', checkpoint: 'ck-1', score: 0.9, suiteVersion: 1 },
    ]);
    // The newest points only; useful life stays what saturation recorded, however late one asks.
    fx.tick(30 * DAY_MS);
    const newest = await fx.request('GET', '/v1/suites/suite-0', { query: { points: '2' } });
    expect(newest.json.bestScores.map((p: { sweepId: string }) => p.sweepId)).toEqual(['s2', 's3']);
    expect(newest.json.usefulLife.days).toBe(3);
    expect((await fx.request('GET', '/v1/suites/suite-0', { query: { points: '0' } })).json.issues[0].path).toBe('points');
    expect((await fx.request('GET', '/v1/suites/ghost')).status).toBe(404);
  });

  it('reads an id holding a slash, percent-encoded in the path', async () => {
    fx = openSweepFixture();
    expect((await fx.request('POST', '/v1/suites', { body: suiteBody({ id: 'org/swe-lite' }) })).status).toBe(201);
    const got = await fx.request('GET', `/v1/suites/${encodeURIComponent('org/swe-lite')}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id: 'org/swe-lite', bestScores: [] });
    expect((await fx.request('POST', `/v1/suites/${encodeURIComponent('org/swe-lite')}/retire`, { body: { reason: 'test' } })).json.suite.status).toBe('retired');
  });
});
