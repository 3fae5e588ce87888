/**
 * Decision records over real HTTP: the local runtime as a child process (`flywheel start`), the attempts seeded on its
 * data folder, `POST /v1/decisions/extract` with a locator model on the scripted model server, the reads with a
 * read-only key (which may not extract), then `flywheel decisions extract|list|show` against the same runtime.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { MAX_REQUEST_ATTEMPTS } from '../../lib/training/http/decision-handlers.ts';
import { handTrajectory, seedAttempt, seedFeedback } from './decisions-support.ts';

const tempDir = tempDirs('flywheel-decisions-http-');
let dataDir: string;
let rt: RuntimeProcess;
let readKey: string;
let otherTenantKey: string;
let locator: ScriptedModelServer;

beforeAll(async () => {
  dataDir = tempDir();
  locator = await startScriptedModelServer(() => reply.text('{"messageId": "http-run.calc__add.strict.0:m1", "hint": "Use read_file to read src/add.js first.", "reason": "it guessed a tool"}'));
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_SCHEDULE: 'off' } });
  const { stdout } = await runCli(['keys', 'create', '--tenant', 'default', '--scopes', 'read', '--name', 'dashboard', '--json', '--data-dir', dataDir]);
  readKey = (JSON.parse(stdout) as { key: string }).key;
  const other = await runCli(['keys', 'create', '--tenant', 'tenant-b', '--scopes', 'read,admin', '--name', 'b-admin', '--json', '--data-dir', dataDir]);
  otherTenantKey = (JSON.parse(other.stdout) as { key: string }).key;
  const ports = openLocalPorts(dataDir);
  try {
    await seedFeedback(ports, handTrajectory('prod-a', [{ assistant: 'deleting the tests', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"rm -r test"}' }] }]), {
      eventId: 'fb-a',
      messageId: 'prod-a:m1',
      comment: 'Never delete tests; fix the code.',
    });
    // A run over the request's bound (MAX_REQUEST_ATTEMPTS): extraction without attemptIds is refused.
    const huge = handTrajectory('huge.calc__add.strict.0', [{ assistant: 'hi' }]);
    for (let n = 0; n <= MAX_REQUEST_ATTEMPTS; n++) await seedAttempt(ports, { ...huge, header: { ...huge.header, attemptId: `huge.calc__add.strict.${n}` } }, { runId: 'huge', n, task: n === 0 });
    for (const [runId, n] of [['http-run', 0], ['cli-run', 0]] as const) {
      const t = handTrajectory(`${runId}.calc__add.strict.${n}`, [
        { assistant: 'let me run the tests', calls: [{ id: 'c1', name: 'run_tests', arguments: '{}' }] },
        { event: 'tool.unknown', detail: { tool: 'run_tests' }, toolCallId: 'c1' },
        { result: 'Error: there is no tool named "run_tests"', toolCallId: 'c1', name: 'run_tests', isError: true },
      ]);
      await seedAttempt(ports, t, { runId, status: 'failed', n });
    }
  } finally {
    ports.close();
  }
}, 60_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  await locator?.close();
});

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': init.key ?? rt.apiKey, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the decisions API', () => {
  it('extracts (admin) with a locator model, lists and shows (read); a read key may not extract; bad input names the field', { timeout: 60_000 }, async () => {
    const spec = `openai:locator@${locator.baseUrl}`;
    expect((await api('/v1/decisions/extract', { method: 'POST', body: { runId: 'http-run', locatorModel: spec }, key: readKey })).status).toBe(403);
    const bad = await api('/v1/decisions/extract', { method: 'POST', body: { attemptIds: ['x'], sources: ['oracle'] } });
    expect(bad.status).toBe(400);
    expect((bad.body.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(expect.arrayContaining(['runId', 'sources[0]']));

    const huge = await api('/v1/decisions/extract', { method: 'POST', body: { runId: 'huge' } });
    expect(huge.status).toBe(400);
    expect((huge.body.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(['attemptIds']);
    expect((await api('/v1/decisions/extract', { method: 'POST', body: { runId: 'huge', attemptIds: ['huge.calc__add.strict.3'] } })).status).toBe(200);

    const extracted = await api('/v1/decisions/extract', { method: 'POST', body: { runId: 'http-run', locatorModel: spec } });
    expect(extracted.status).toBe(200);
    expect(extracted.body).toMatchObject({ created: 2, existing: 0, byStatus: { usable: 2, rejected: 0 }, bySource: { 'harness-event': { usable: 1 }, 'locator-model': { usable: 1 } } });
    expect(locator.chatRequests()).toHaveLength(1);

    const listed = await api('/v1/decisions?run=http-run', { key: readKey });
    expect(listed.status).toBe(200);
    const items = listed.body.items as Array<Record<string, unknown>>;
    expect(items.map((d) => d.hintClass).sort()).toEqual(['available-tools', 'model-located']);
    const byClass = await api('/v1/decisions?hintClass=model-located', { key: readKey });
    expect((byClass.body.items as Array<Record<string, unknown>>).map((d) => d.hint)).toEqual([{ text: 'Use read_file to read src/add.js first.', by: 'model', model: `openai:locator@${locator.baseUrl}` }]);

    const id = (extracted.body.decisionIds as string[])[0]!;
    const shown = await api(`/v1/decisions/${id}`, { key: readKey });
    expect(shown).toMatchObject({ status: 200, body: { decisionId: id, hintClass: 'available-tools', status: 'usable', lineage: { createdBy: expect.stringMatching(/^flywheel\.decisions\/1 for key:/) } } });
    expect((await api('/v1/decisions/dec-ffffffffffffffffffff')).status).toBe(404);
    expect((await api('/v1/decisions/not-an-id')).status).toBe(400);
    expect((await api('/v1/decisions?status=maybe')).status).toBe(400);

    const doc = await api('/v1/openapi.json');
    expect(Object.keys(doc.body.paths as object)).toEqual(expect.arrayContaining(['/v1/decisions', '/v1/decisions/{decisionId}', '/v1/decisions/extract']));
  });

  it("another tenant cannot list, show or extract this tenant's decisions and feedback", { timeout: 60_000 }, async () => {
    const mine = await api('/v1/decisions/extract', { method: 'POST', body: { feedbackEventIds: ['fb-a'] } });
    expect(mine).toMatchObject({ status: 200, body: { created: 1, byStatus: { usable: 1, rejected: 0 } } });
    const id = (mine.body.decisionIds as string[])[0]!;
    const theirs = await api('/v1/decisions/extract', { method: 'POST', body: { feedbackEventIds: ['fb-a'] }, key: otherTenantKey });
    expect(theirs).toMatchObject({ status: 200, body: { created: 0, existing: 0, decisionIds: [], skipped: [{ source: 'person', ref: 'fb-a', reason: 'no such feedback event' }] } });
    const run = await api('/v1/decisions/extract', { method: 'POST', body: { runId: 'http-run' }, key: otherTenantKey });
    expect(run.body).toMatchObject({ created: 0, decisionIds: [], skipped: [{ ref: 'http-run', reason: 'the run has no attempts' }] });
    expect((await api('/v1/decisions', { key: otherTenantKey })).body.items).toEqual([]);
    expect((await api('/v1/decisions?run=http-run', { key: otherTenantKey })).body.items).toEqual([]);
    expect((await api(`/v1/decisions?attempt=prod-a`, { key: otherTenantKey })).body.items).toEqual([]);
    expect((await api(`/v1/decisions/${id}`, { key: otherTenantKey })).status).toBe(404);
    expect((await api(`/v1/decisions/${id}`, { key: readKey })).status).toBe(200);
  });

  it('flywheel decisions extract, list and show', { timeout: 60_000 }, async () => {
    const extracted = await runCli(['decisions', 'extract', '--run', 'cli-run', '--data-dir', dataDir]);
    expect(extracted.stdout).toContain('1 new, 0 already stored: 1 usable, 0 rejected by the leakage check');
    const listed = await runCli(['decisions', 'list', '--run', 'cli-run', '--status', 'usable', '--data-dir', dataDir]);
    const id = /dec-[0-9a-f]{20}/.exec(listed.stdout)?.[0];
    expect(listed.stdout).toContain('available-tools');
    expect(id).toBeDefined();
    const shown = await runCli(['decisions', 'show', id!, '--data-dir', dataDir]);
    expect(shown.stdout).toContain(`${id} (usable): available-tools at cli-run.calc__add.strict.0:m1 (turn 1)`);
    expect(shown.stdout).toContain('There is no tool named "run_tests"');
    expect(shown.stdout).toContain('leakage check: passed');
  });
});
