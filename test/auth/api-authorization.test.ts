/**
 * Issue 11, item 4: an API that authorizes. The local runtime as a real child process, real HTTP, keys made with
 * `flywheel keys create` on its data folder: scopes per route, tenants that cannot see each other, the planted-task
 * chain refused at each step, unknown routes answered only after the key check, bounded free JSON, ids that never
 * collide as blob paths, and the data folder's permissions.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { waitFor } from '../support/wait-for.ts';

let dataDir: string;
let rt: RuntimeProcess;
const keys: Record<'readOnly' | 'ingestOnly' | 'a' | 'b', string> = { readOnly: '', ingestOnly: '', a: '', b: '' };

async function createKey(tenant: string, scopes: string, name: string): Promise<string> {
  const { stdout } = await runCli(['keys', 'create', '--tenant', tenant, '--scopes', scopes, '--name', name, '--json', '--data-dir', dataDir]);
  const created = JSON.parse(stdout) as { key: string; tenant: string; scopes: string[] };
  expect(created).toMatchObject({ tenant, scopes: scopes.split(',') });
  return created.key;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-auth-'));
  rt = await startRuntime({
    dataDir,
    env: { FLYWHEEL_SCHEDULE: 'off', FLYWHEEL_TASK_SOURCES: 'https://github.com/acme/*' },
  });
  keys.readOnly = await createKey('default', 'read', 'dashboard');
  keys.ingestOnly = await createKey('default', 'ingest', 'product');
  keys.a = await createKey('tenant-a', 'ingest,read,admin', 'team a');
  keys.b = await createKey('tenant-b', 'ingest,read,admin', 'team b');
}, 60_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  json: any;
}
async function call(key: string | undefined, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${rt.url}${path}`, {
    method,
    headers: { ...(key === undefined ? {} : { 'x-api-key': key }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}
const stored = (key: string, eventId: string) =>
  waitFor(
    async () => {
      const r = await call(key, 'GET', `/v1/feedback/${encodeURIComponent(eventId)}`);
      return r.status === 200 ? (r.json as Record<string, any>) : undefined;
    },
    { what: `feedback ${eventId} to be stored` },
  );
const suite = (overrides: Record<string, unknown> = {}) => ({ id: 'planted', visibility: 'public', owner: 'x', tasks: { kind: 'records' }, taskIds: ['t1'], ...overrides });
const checkpoint = (id: string, overrides: Record<string, unknown> = {}) => ({
  id,
  model: 'coder',
  serving: { kind: 'endpoint', model: 'openai:coder@https://attacker.example.com/v1' },
  sweep: false,
  ...overrides,
});

describe('the data folder', () => {
  it('is 0700, and the key file and runtime.json (which hold the key) are 0600', () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'api-key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'runtime.json')).mode & 0o777).toBe(0o600);
    // Keys are stored as hashes only: no key appears in the records.
    const db = readFileSync(join(dataDir, 'records.sqlite')).toString('latin1');
    for (const key of Object.values(keys)) expect(db).not.toContain(key);
  });
});

describe('keys and scopes', () => {
  it('answers an unknown route 403 without a valid key and 404 only after one', async () => {
    expect((await call(undefined, 'GET', '/v1/nothing-here')).status).toBe(403);
    expect((await call('fw_default_not-a-key-at-all-000000', 'GET', '/v1/nothing-here')).json.message).toBe('Forbidden: invalid API key');
    const known = await call(undefined, 'GET', '/v1/feedback');
    expect(known).toMatchObject({ status: 403, json: { error: 'Flywheel.Forbidden' } });
    const unknown = await call(keys.readOnly, 'GET', '/v1/nothing-here');
    expect(unknown).toMatchObject({ status: 404, json: { error: 'Flywheel.RouteNotFound' } });
    expect((await call(keys.ingestOnly, 'DELETE' as 'GET', '/v1/feedback')).status).toBe(405);
  });

  it('a read key cannot register a suite, a checkpoint or a sweep (403 naming the scope), nor post feedback', async () => {
    for (const [path, body] of [
      ['/v1/suites', suite()],
      ['/v1/checkpoints', checkpoint('ro-ckpt')],
      ['/v1/sweeps', { suites: ['planted'], modes: ['strict'] }],
      ['/v1/suites/planted/retire', { reason: 'x' }],
    ] as const) {
      const r = await call(keys.readOnly, 'POST', path, body);
      expect(r.status, path).toBe(403);
      expect(r.json.message).toMatch(/needs the admin scope; this key has read/);
    }
    const post = await call(keys.readOnly, 'POST', '/v1/feedback', liveFeedbackEvent());
    expect(post).toMatchObject({ status: 403, json: { message: expect.stringContaining('needs the ingest scope') } });
    expect((await call(keys.readOnly, 'GET', '/v1/suites')).status).toBe(200);
  });

  it('an ingest key posts feedback and reports, and reads nothing', async () => {
    const event = liveFeedbackEvent();
    expect((await call(keys.ingestOnly, 'POST', '/v1/feedback', event)).status).toBe(202);
    for (const path of ['/v1/feedback', `/v1/feedback/${event.eventId as string}`, '/v1/suites', '/v1/checkpoints', '/v1/openapi.json']) {
      const r = await call(keys.ingestOnly, 'GET', path);
      expect(r.status, path).toBe(403);
      expect(r.json.message).toContain('needs the read scope');
    }
    await stored(keys.readOnly, event.eventId as string);
  });

  it('a revoked key is refused from then on', async () => {
    const key = await createKey('default', 'read', 'short-lived');
    expect((await call(key, 'GET', '/v1/suites')).status).toBe(200);
    const { stdout } = await runCli(['keys', 'list', '--json', '--data-dir', dataDir]);
    const listed = (JSON.parse(stdout) as Array<{ keyId: string; name?: string }>).find((k) => k.name === 'short-lived')!;
    expect(stdout).not.toContain(key);
    await runCli(['keys', 'revoke', listed.keyId, '--data-dir', dataDir]);
    const r = await call(key, 'GET', '/v1/suites');
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('was revoked');
  });
});

describe('tenants', () => {
  it("tenant B cannot read or list tenant A's events, suites or checkpoints; nor the default tenant", async () => {
    const model = `iso-model-${Date.now()}`;
    const event = liveFeedbackEvent({ model, trajectory: { inline: { steps: [{ role: 'user', content: 'secret of a' }] } } });
    expect((await call(keys.a, 'POST', '/v1/feedback', event)).status).toBe(202);
    const mine = await stored(keys.a, event.eventId as string);
    expect(mine.trajectory.blobKey).toMatch(/^trajectories\/feedback\/[^/]+\.json$/);

    const other = await call(keys.b, 'GET', `/v1/feedback/${event.eventId as string}`);
    expect(other.status).toBe(404);
    expect((await call(keys.readOnly, 'GET', `/v1/feedback/${event.eventId as string}`)).status).toBe(404);
    expect((await call(keys.b, 'GET', `/v1/feedback?model=${model}`)).json.items).toEqual([]);
    expect((await call(keys.b, 'GET', '/v1/feedback')).json.items).toEqual([]);
    expect((await call(keys.a, 'GET', `/v1/feedback?model=${model}`)).json.items.map((i: { eventId: string }) => i.eventId)).toEqual([event.eventId]);

    expect((await call(keys.a, 'POST', '/v1/suites', suite({ id: 'a-suite' }))).status).toBe(201);
    expect((await call(keys.a, 'POST', '/v1/checkpoints', checkpoint('a-ckpt'))).status).toBe(201);
    expect((await call(keys.a, 'GET', '/v1/suites')).json.items.map((s: { id: string }) => s.id)).toEqual(['a-suite']);
    for (const key of [keys.b, keys.readOnly]) {
      expect((await call(key, 'GET', '/v1/suites')).json.items.map((s: { id: string }) => s.id)).not.toContain('a-suite');
      expect((await call(key, 'GET', '/v1/suites/a-suite')).status).toBe(404);
      expect((await call(key, 'GET', '/v1/checkpoints')).json.items.map((c: { id: string }) => c.id)).not.toContain('a-ckpt');
    }
    // B registering the same ids makes its own, separate records.
    expect((await call(keys.b, 'POST', '/v1/suites', suite({ id: 'a-suite', owner: 'b' }))).json).toMatchObject({ created: true, suite: { version: 1, owner: 'b' } });
    expect((await call(keys.a, 'GET', '/v1/suites/a-suite')).json.owner).toBe('x');

    // A trajectory blob key names only an upload of the same tenant.
    const ref = (key: string, blobKey: string) => call(key, 'POST', '/v1/feedback', { events: [liveFeedbackEvent({ trajectory: { blobKey } }), liveFeedbackEvent()] });
    const stolen = await ref(keys.b, mine.trajectory.blobKey as string);
    expect(stolen.status).toBe(202);
    expect(stolen.json.results[0]).toMatchObject({ status: 'rejected', issues: [{ path: 'events[0].trajectory.blobKey', message: 'names no trajectory stored by this tenant' }] });
    expect(stolen.json.results[1].status).toBe('accepted');
    const own = await ref(keys.a, mine.trajectory.blobKey as string);
    expect(own.json.results.map((r: { status: string }) => r.status)).toEqual(['accepted', 'accepted']);
    // Tenant A's data lives under its own prefix.
    expect(() => statSync(join(dataDir, 'blobs', 'tenants', 'tenant-a', mine.trajectory.blobKey as string))).not.toThrow();
  });

  it('a tenant other than default cannot start a sweep (the sweep workflow runs over the root ports)', async () => {
    const r = await call(keys.a, 'POST', '/v1/sweeps', { suites: ['a-suite'], modes: ['strict'] });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('default tenant only');
  });
});

describe('the planted-task chain is refused at each step', () => {
  it('clients never choose blob keys; suites never read a server path or another prefix; tasks draw repositories from configured sources', async () => {
    // 1. A task JSON "uploaded" as an inline trajectory: stored at a server-made key, never under a suite prefix.
    const task = { schemaVersion: 1, id: 't1', suite: 'planted', split: 'held-out', visibility: 'private', repo: { kind: 'local', path: '/etc' }, instruction: 'cat', testCommand: 'cat /etc/passwd', failToPass: [] };
    const event = liveFeedbackEvent({ eventId: `x/../../suites/planted/t1-${Date.now()}`, trajectory: { inline: task } });
    expect((await call(keys.a, 'POST', '/v1/feedback', event)).status).toBe(202);
    const record = await stored(keys.a, event.eventId as string);
    expect(record.trajectory.blobKey).toMatch(/^trajectories\/feedback\/x%2F..%2F..%2Fsuites%2Fplanted%2Ft1-\d+\.json$/);
    // …and a chosen key is refused outright.
    const chosen = await call(keys.a, 'POST', '/v1/feedback', liveFeedbackEvent({ trajectory: { blobKey: 'suites/planted/t1.json' } }));
    expect(chosen.status).toBe(400);
    expect(chosen.json.issues).toEqual([{ path: 'trajectory.blobKey', message: 'must name an uploaded trajectory (trajectories/feedback/<id>.json)' }]);

    // 2. A suite over that prefix, or over a server folder: refused.
    const overTrajectories = await call(keys.a, 'POST', '/v1/suites', suite({ tasks: { kind: 'blobs', prefix: 'trajectories/feedback/' } }));
    expect(overTrajectories.json.issues).toEqual([{ path: 'tasks.prefix', message: "must be under the suite's own prefix suites/planted/" }]);
    const overFolder = await call(keys.a, 'POST', '/v1/suites', suite({ tasks: { kind: 'folder', path: '/etc' } }));
    expect(overFolder.json.issues).toEqual([{ path: 'tasks.kind', message: expect.stringContaining('never a suite through the API') }]);

    // A task under the suite's own prefix (put there by an operator) whose repository is a server path, a file://
    // URL or a remote off the allow-list: refused, each naming the field.
    const tasksDir = join(dataDir, 'blobs', 'tenants', 'tenant-a', 'suites', 'planted');
    mkdirSync(tasksDir, { recursive: true });
    const put = (id: string, repo: unknown) => writeFileSync(join(tasksDir, `${id}.json`), JSON.stringify({ ...task, id, repo }));
    put('local', { kind: 'local', path: '/etc' });
    put('file', { kind: 'git', url: 'file:///etc', commit: 'abcdef1' });
    put('bare', { kind: 'git', url: '/srv/repo', commit: 'abcdef1' });
    put('elsewhere', { kind: 'git', url: 'https://github.com/mallory/x.git', commit: 'abcdef1' });
    put('blob', { kind: 'blob', key: 'trajectories/feedback/x.json' });
    put('ok', { kind: 'git', url: 'https://github.com/acme/calc.git', commit: 'abcdef1' });
    put('ok-blob', { kind: 'blob', key: 'suites/planted/repos/calc.tar.gz' });
    const planted = await call(keys.a, 'POST', '/v1/suites', suite({ tasks: { kind: 'blobs', prefix: 'suites/planted/' }, taskIds: ['local', 'file', 'bare', 'elsewhere', 'blob', 'ok', 'ok-blob'] }));
    expect(planted.status).toBe(400);
    expect(planted.json.issues).toEqual([
      { path: 'tasks[bare].repo.url', message: expect.stringContaining('is not an allowed git remote') },
      { path: 'tasks[blob].repo.key', message: expect.stringContaining("under the suite's own prefix suites/planted/") },
      { path: 'tasks[elsewhere].repo.url', message: expect.stringContaining('https://github.com/acme/*') },
      { path: 'tasks[file].repo.url', message: expect.stringContaining('is not an allowed git remote') },
      { path: 'tasks[local].repo.kind', message: 'a path on the server is never a task source through the API' },
    ]);
    const clean = await call(keys.a, 'POST', '/v1/suites', suite({ tasks: { kind: 'blobs', prefix: 'suites/planted/' }, taskIds: ['ok', 'ok-blob'] }));
    expect(clean.status).toBe(201);

    // 3 and 4. The checkpoint served from the attacker's endpoint and the sweep: admin scope only.
    expect((await call(keys.readOnly, 'POST', '/v1/checkpoints', checkpoint('evil'))).status).toBe(403);
    expect((await call(keys.ingestOnly, 'POST', '/v1/checkpoints', checkpoint('evil'))).status).toBe(403);
    expect((await call(keys.ingestOnly, 'POST', '/v1/sweeps', { checkpoints: ['evil'], suites: ['planted'] })).status).toBe(403);
  });
});

describe('bounded free JSON and ids as blob paths', () => {
  it('answers a 4,500-deep context or trajectory 400 naming the field, and accepts the valid siblings', async () => {
    // Built as text: the test's own JSON.stringify would overflow on them, which is the point.
    const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const deepArray = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
    /** An event's JSON with `field` set to raw JSON text. */
    const withRaw = (event: Record<string, unknown>, field: 'context' | 'trajectory', raw: string) =>
      `${JSON.stringify(event).slice(0, -1)},"${field}":${field === 'trajectory' ? `{"inline":${raw}}` : raw}}`;
    const siblings = [liveFeedbackEvent(), liveFeedbackEvent(), liveFeedbackEvent(), liveFeedbackEvent(), liveFeedbackEvent()];
    const items = [
      JSON.stringify(siblings[0]),
      withRaw(siblings[1]!, 'context', deepObject(4500)),
      JSON.stringify(siblings[2]),
      withRaw(siblings[3]!, 'trajectory', deepArray(4500)),
      withRaw(siblings[4]!, 'context', deepObject(20)),
    ];
    const r = await call(keys.a, 'POST', '/v1/feedback', `{"events":[${items.join(',')}]}`);
    expect(r.status).toBe(202);
    expect(r.json.results.map((x: { status: string }) => x.status)).toEqual(['accepted', 'rejected', 'accepted', 'rejected', 'accepted']);
    expect(r.json.results[1].issues).toEqual([{ path: 'events[1].context', message: 'is nested deeper than 32 levels' }]);
    expect(r.json.results[3].issues).toEqual([{ path: 'events[3].trajectory.inline', message: 'is nested deeper than 32 levels' }]);
    for (const i of [0, 2, 4]) await stored(keys.a, siblings[i]!.eventId as string);

    const single = await call(keys.a, 'POST', '/v1/feedback', withRaw(liveFeedbackEvent(), 'context', deepObject(4500)));
    expect(single).toMatchObject({ status: 400, json: { issues: [{ path: 'context', message: 'is nested deeper than 32 levels' }] } });
    const meta = await call(keys.a, 'POST', '/v1/checkpoints', `${JSON.stringify(checkpoint('deep-meta')).slice(0, -1)},"metadata":${deepObject(4500)}}`);
    expect(meta).toMatchObject({ status: 400, json: { issues: [{ path: 'metadata', message: 'is nested deeper than 32 levels' }] } });
    // Deep values in fields that are not free JSON are refused by their type: 400, never a 500.
    for (const [path, body] of [
      ['/v1/feedback', `${JSON.stringify(liveFeedbackEvent()).slice(0, -1)},"tags":${deepArray(4500)}}`],
      ['/v1/feedback', `${JSON.stringify(liveFeedbackEvent()).slice(0, -1)},"unknownField":${deepObject(4500)}}`],
      ['/v1/feedback', `{"events":[${deepArray(4500)}]}`],
      ['/v1/suites', `${JSON.stringify(suite()).slice(0, -1)},"description":${deepObject(4500)}}`],
      ['/v1/suites', `${JSON.stringify(suite()).slice(0, -1)},"tasks":${deepObject(4500)}}`],
      ['/v1/reports', `{"reportId":"r","title":"t","body":${deepArray(4500)}}`],
      ['/v1/sweeps', `{"suites":${deepArray(4500)}}`],
    ] as const) {
      const r = await call(path === '/v1/sweeps' ? rt.apiKey : keys.b, 'POST', path, body);
      expect(r.status, `${path} ${body.slice(0, 60)}`).toBe(400);
    }
    const bigMeta = await call(keys.a, 'POST', '/v1/checkpoints', checkpoint('big-meta', { metadata: { x: 'y'.repeat(40_000) } }));
    expect(bigMeta.json.issues).toEqual([{ path: 'metadata', message: 'exceeds 32768 bytes of JSON' }]);
  });

  it('stores ids a and a.json/x (each with a trajectory) and reads them back distinct', async () => {
    const base = `col-${Date.now()}`;
    const first = liveFeedbackEvent({ eventId: base, comment: 'first', kind: 'comment', trajectory: { inline: { which: 'first' } } });
    const second = liveFeedbackEvent({ eventId: `${base}.json/x`, comment: 'second', kind: 'comment', trajectory: { inline: { which: 'second' } } });
    expect((await call(keys.a, 'POST', '/v1/feedback', first)).status).toBe(202);
    expect((await call(keys.a, 'POST', '/v1/feedback', second)).status).toBe(202);
    const a = await stored(keys.a, base);
    const b = await stored(keys.a, `${base}.json/x`);
    expect([a.eventId, a.comment, b.eventId, b.comment]).toEqual([base, 'first', `${base}.json/x`, 'second']);
    expect(a.trajectory.blobKey).not.toBe(b.trajectory.blobKey);
    const blob = (key: string) => JSON.parse(readFileSync(join(dataDir, 'blobs', 'tenants', 'tenant-a', key), 'utf8')) as { which: string };
    expect([blob(a.trajectory.blobKey as string).which, blob(b.trajectory.blobKey as string).which]).toEqual(['first', 'second']);
  });
});
