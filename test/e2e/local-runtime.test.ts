/**
 * The local runtime end to end: a real child process, real HTTP, real SQLite in a temporary data folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

let dataDir: string;
let rt: RuntimeProcess;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-e2e-'));
  rt = await startRuntime({ dataDir });
});

afterAll(async () => {
  const code = await rt?.stop('SIGTERM');
  expect(code).toBe(0); // a graceful stop
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${rt.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json', ...headers },
    body,
  });
const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${rt.url}${path}`, { headers: { 'x-api-key': rt.apiKey, ...headers } });

/** Waits until GET /v1/feedback/{id} answers 200 and returns the record. */
const stored = (eventId: string) =>
  waitFor(
    async () => {
      const res = await get(`/v1/feedback/${encodeURIComponent(eventId)}`);
      if (res.status === 200) return (await res.json()) as Record<string, unknown>;
      await res.body?.cancel();
      return undefined;
    },
    { what: `feedback ${eventId} to be stored` },
  );

describe('local runtime over HTTP', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('accepts a valid event with 202 and stores it', async () => {
    const event = liveFeedbackEvent({ comment: 'nice fix', tags: ['e2e'] });
    const res = await post(JSON.stringify(event));
    expect(res.status).toBe(202);
    const answer = (await res.json()) as { accepted: number };
    expect(answer.accepted).toBe(1);
    const record = await stored(event.eventId as string);
    expect(JSON.stringify(record)).toContain(event.eventId as string);
    expect(JSON.stringify(record)).toContain('nice fix');
    expect(JSON.stringify(record)).toContain('receivedAt');
  });

  it('stores a retried delivery once', async () => {
    const model = `ckpt-dup-${Date.now()}`;
    const event = liveFeedbackEvent({ model });
    for (let i = 0; i < 3; i++) expect((await post(JSON.stringify(event))).status).toBe(202);
    await stored(event.eventId as string);
    // Let the later copies reach the processor too, then count.
    const other = liveFeedbackEvent({ model });
    expect((await post(JSON.stringify(other))).status).toBe(202);
    await stored(other.eventId as string);
    const page = (await (await get(`/v1/feedback?model=${model}`)).json()) as { items: Array<{ eventId: string }> };
    expect(page.items.map((i) => i.eventId).sort()).toEqual([event.eventId, other.eventId].sort());
  });

  it('answers malformed JSON with 400', async () => {
    const res = await post('{"eventId": "x", ');
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json()).toLowerCase()).toContain('json');
  });

  it('lists every offending field in a 400', async () => {
    const event = liveFeedbackEvent({ rating: 'sideways', kind: 'nonsense' });
    delete event.traceId;
    delete event.trainingConsent;
    const res = await post(JSON.stringify(event));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { issues: Array<{ path: string; message: string }> };
    const paths = body.issues.map((i) => i.path);
    for (const field of ['rating', 'kind', 'traceId', 'trainingConsent']) expect(paths).toContain(field);
    for (const issue of body.issues) expect(issue.message.length).toBeGreaterThan(0);
  });

  it('refuses a body over 10 MB with 413', async () => {
    const big = JSON.stringify(liveFeedbackEvent({ comment: 'x'.repeat(11 * 1024 * 1024) }));
    const res = await post(big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toMatch(/limit is 10485760 bytes/);
  });

  it('refuses a chunked body with 413 as soon as it passes 10 MB, without waiting for the end', async () => {
    const url = new URL('/v1/feedback', rt.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
          headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      // 11 MB, then keep the request open: the answer must come before the body ends.
      let sent = 0;
      const pump = () => {
        while (sent < 11 && req.write(chunk)) sent++;
        if (sent < 11) req.once('drain', () => { sent++; pump(); });
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it('refuses a wrong content type with 415', async () => {
    const res = await post(JSON.stringify(liveFeedbackEvent()), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('refuses a missing or a wrong API key with 403', async () => {
    const missing = await fetch(`${rt.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(liveFeedbackEvent()),
    });
    expect(missing.status).toBe(403);
    expect(JSON.stringify(await missing.json())).toMatch(/missing API key/);
    const wrong = await get('/v1/feedback', { 'x-api-key': 'not-the-key' });
    expect(wrong.status).toBe(403);
    expect(JSON.stringify(await wrong.json())).toMatch(/invalid API key/);
  });

  it('answers a mixed batch per item and stores the valid ones', async () => {
    const good = liveFeedbackEvent();
    const bad = liveFeedbackEvent({ rating: 'meh' });
    const good2 = liveFeedbackEvent({ kind: 'comment', comment: 'second' });
    const res = await post(JSON.stringify({ events: [good, bad, good, good2] }));
    expect(res.status).toBe(202);
    const body = (await res.json()) as {
      accepted: number;
      results: Array<{ index: number; status: string; eventId?: string; issues?: Array<{ path: string }> }>;
    };
    expect(body.results.map((r) => r.status)).toEqual(['accepted', 'rejected', 'duplicate', 'accepted']);
    expect(body.results[1]!.issues!.map((i) => i.path)).toContain('events[1].rating');
    expect(body.accepted).toBe(2);
    await stored(good.eventId as string);
    await stored(good2.eventId as string);
    const missing = await get(`/v1/feedback/${bad.eventId as string}`);
    expect(missing.status).toBe(404);
  });

  it('passes path and query parameters through the API Gateway event', async () => {
    const model = `ckpt-q-${Date.now()}`;
    const events = [liveFeedbackEvent({ model, rating: 'up' }), liveFeedbackEvent({ model, rating: 'down' })];
    expect((await post(JSON.stringify({ events }))).status).toBe(202);
    await stored(events[1]!.eventId as string);
    await stored(events[0]!.eventId as string);
    const page = (await (await get(`/v1/feedback?model=${model}&rating=down`)).json()) as { items: Array<{ eventId: string }> };
    expect(page.items.map((i) => i.eventId)).toEqual([events[1]!.eventId]);
  });
});
