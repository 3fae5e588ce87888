import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { routes } from '../../lib/api/routes.ts';
import { API_FUNCTION_ACCESS } from '../../lib/stacks/api-stack.ts';
import { registerSuite, registerSuiteFromFolder } from '../../lib/registry/register-suite.ts';
import { ValidationError } from '../../lib/errors.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';

let fx: SweepFixture;
const tempDir = tempDirs('flywheel-suite-');
afterEach(() => fx?.close());

const checkpoint = (overrides: Record<string, unknown> = {}) => ({
  id: 'coder-7b:step-1200',
  model: 'coder-7b',
  trainingRun: 'rl-42',
  serving: { kind: 'endpoint', model: 'openai:coder-7b@http://10.0.0.5:8000/v1' },
  ...overrides,
});

describe('POST /v1/checkpoints, GET /v1/checkpoints (through the dispatcher, local ports)', () => {
  it('registers a checkpoint, publishes checkpoint.registered, and treats an identical retry as idempotent', async () => {
    fx = openSweepFixture();
    const created = await fx.request('POST', '/v1/checkpoints', { body: checkpoint() });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      created: true,
      checkpoint: {
        id: 'coder-7b:step-1200',
        model: 'coder-7b',
        trainingRun: 'rl-42',
        serving: { kind: 'endpoint', model: 'openai:coder-7b@http://10.0.0.5:8000/v1' },
        status: 'active',
        metadata: {},
        registeredAt: '2026-12-02T10:00:00.000Z',
      },
      // No suite is active yet: the trigger will refuse the sweep, so the answer names none.
      sweeps: [],
    });
    // Subscribers are called after the publish returns: wait for the fixture's to have seen the event.
    await waitFor(() => (fx.events.some((e) => e.type === 'checkpoint.registered') ? true : undefined), { what: 'checkpoint.registered to be delivered', everyMs: 5 });
    expect(fx.events.filter((e) => e.type === 'checkpoint.registered')).toEqual([
      expect.objectContaining({ id: 'checkpoint.registered:coder-7b:step-1200', detail: { checkpointId: 'coder-7b:step-1200', model: 'coder-7b', registeredAt: '2026-12-02T10:00:00.000Z', sweep: true } }),
    ]);
    fx.tick(5000);
    const retry = await fx.request('POST', '/v1/checkpoints', { body: checkpoint() });
    expect(retry.status).toBe(200);
    expect(retry.json.created).toBe(false);
    expect(retry.json.checkpoint.registeredAt).toBe('2026-12-02T10:00:00.000Z');
    const conflict = await fx.request('POST', '/v1/checkpoints', { body: checkpoint({ trainingRun: 'other' }) });
    expect(conflict.status).toBe(400);
    expect(conflict.json.issues).toEqual([{ path: 'id', message: 'already registered with other fields' }]);
  });

  it('answers 400 naming every offending field, 415 without JSON', async () => {
    fx = openSweepFixture();
    const bad = await fx.request('POST', '/v1/checkpoints', { body: { id: 'has#hash', model: 'm', serving: { kind: 'vllm' }, extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('Flywheel.ValidationError');
    const paths = bad.json.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['id', 'extra']));
    const vllm = await fx.request('POST', '/v1/checkpoints', { body: checkpoint({ serving: { kind: 'vllm' } }) });
    expect(vllm.json.issues).toEqual([{ path: 'artifactKey', message: 'a vllm-served checkpoint needs the artifactKey of its weights' }]);
    const endpoint = await fx.request('POST', '/v1/checkpoints', { body: checkpoint({ serving: { kind: 'endpoint', model: 'coder-7b' } }) });
    expect(endpoint.json.issues[0].path).toBe('serving.model');
    const orphan = await fx.request('POST', '/v1/checkpoints', { body: checkpoint({ parent: 'ghost' }) });
    expect(orphan.json.issues).toEqual([{ path: 'parent', message: 'no checkpoint ghost' }]);
  });

  it('lists newest first, by model, with a cursor', async () => {
    fx = openSweepFixture();
    for (const [i, model] of ['a', 'b', 'a', 'a'].entries()) {
      fx.tick(1000);
      expect((await fx.request('POST', '/v1/checkpoints', { body: checkpoint({ id: `${model}-${i}`, model, sweep: false }) })).status).toBe(201);
    }
    const all = await fx.request('GET', '/v1/checkpoints');
    expect(all.json.items.map((c: { id: string }) => c.id)).toEqual(['a-3', 'a-2', 'b-1', 'a-0']);
    const page1 = await fx.request('GET', '/v1/checkpoints', { query: { model: 'a', limit: '2' } });
    expect(page1.json.items.map((c: { id: string }) => c.id)).toEqual(['a-3', 'a-2']);
    const page2 = await fx.request('GET', '/v1/checkpoints', { query: { model: 'a', limit: '2', cursor: page1.json.cursor } });
    expect(page2.json.items.map((c: { id: string }) => c.id)).toEqual(['a-0']);
    expect(page2.json.cursor).toBeUndefined();
    expect((await fx.request('GET', '/v1/checkpoints', { query: { limit: '0' } })).status).toBe(400);
  });
});

describe('suites', () => {
  it('registers versions (a higher version starts a new life, the same one is idempotent), lists by status', async () => {
    fx = openSweepFixture();
    const s = { id: 'forge-py', version: 1, visibility: 'private', owner: 'evals', tasks: { kind: 'records' }, taskIds: ['t1', 't2'] };
    expect((await registerSuite(fx.ports, s)).created).toBe(true);
    expect((await registerSuite(fx.ports, s)).created).toBe(false);
    await expect(registerSuite(fx.ports, { ...s, taskIds: ['t1'] })).rejects.toThrow(/already registered with other content/);
    fx.tick(1000);
    const v2 = await registerSuite(fx.ports, { ...s, version: 2, taskIds: ['t1', 't2', 't3'] });
    expect(v2.suite).toMatchObject({ version: 2, taskCount: 3, status: 'active', createdAt: '2026-12-02T10:00:01.000Z' });
    await expect(registerSuite(fx.ports, s)).rejects.toThrow(/version 2; register a higher version/);
    await expect(registerSuite(fx.ports, { ...s, version: 3, taskIds: ['t1', 't1'] })).rejects.toBeInstanceOf(ValidationError);
    await registerSuite(fx.ports, { id: 'swe-lite', visibility: 'public', owner: 'evals', tasks: { kind: 'blobs', prefix: 'suites/swe-lite/v1/' }, taskIds: ['a'] });
    const list = await fx.request('GET', '/v1/suites');
    expect(list.status).toBe(200);
    expect(list.json.items.map((x: { id: string; version: number; visibility: string }) => [x.id, x.version, x.visibility])).toEqual([['forge-py', 2, 'private'], ['swe-lite', 1, 'public']]);
    expect(list.json.items[0].taskIds).toBeUndefined();
    expect((await fx.request('GET', '/v1/suites', { query: { status: 'saturated' } })).json.items).toEqual([]);
    expect((await fx.request('GET', '/v1/suites', { query: { status: 'bogus' } })).status).toBe(400);
  });

  it('registers a folder of task files as eval run loads it', async () => {
    fx = openSweepFixture();
    const dir = tempDir();
    mkdirSync(join(dir, 'repo'));
    for (const id of ['calc/add', 'calc/sub']) {
      const task = { schemaVersion: 1, id, suite: 'smoke', split: 'held-out', visibility: 'public', repo: { kind: 'local', path: 'repo' }, instruction: 'fix it', testCommand: 'true', failToPass: ['t'] };
      writeFileSync(join(dir, `${id.replace('/', '-')}.json`), JSON.stringify(task));
    }
    const { suite } = await registerSuiteFromFolder(fx.ports, dir, { id: 'smoke', visibility: 'public', owner: 'evals' });
    expect(suite.taskIds).toEqual(['calc/add', 'calc/sub']);
    expect(suite.tasks).toEqual({ kind: 'folder', path: dir });
  });
});

describe('routes', () => {
  it('are in the route table with declared access, and documented from the schemas', () => {
    const mine = routes.filter((r) => r.lambda.startsWith('registry/'));
    expect(mine.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/checkpoints',
      'GET /v1/checkpoints',
      'GET /v1/suites',
      'POST /v1/suites',
      'GET /v1/suites/{id}',
      'POST /v1/suites/{id}/retire',
      'GET /v1/results',
      'POST /v1/sweeps',
      'GET /v1/sweeps/{id}',
      'GET /v1/incumbent',
      'GET /v1/attempts',
      'GET /v1/attempts/{id}',
      'GET /v1/sweeps',
      'GET /v1/overview',
      'GET /v1/checkpoints/{id}',
      'GET /v1/sweeps/{id}/shards',
    ]);
    for (const r of mine) expect(API_FUNCTION_ACCESS[r.lambda]).toBeTypeOf('function');
    const doc = buildOpenApiDocument(routes) as { paths: Record<string, any>; components: { schemas: Record<string, any> } };
    expect(doc.paths['/v1/checkpoints'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CheckpointInput');
    expect(doc.paths['/v1/sweeps/{id}'].get.responses['200']).toBeDefined();
    expect(doc.paths['/v1/suites'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/SuiteInput');
    expect(doc.paths['/v1/suites/{id}'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/SuiteDetail');
    expect(doc.paths['/v1/suites/{id}/retire'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/RetireSuiteInput');
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Checkpoint', 'Suite', 'Result', 'SweepReport', 'Serving']));
  });

  it('GET /v1/results needs a filter', async () => {
    fx = openSweepFixture();
    const r = await fx.request('GET', '/v1/results');
    expect(r.status).toBe(400);
    expect(r.json.issues[0]).toEqual({ path: 'suite', message: 'give suite, checkpoint or sweep (or several)' });
  });
});
