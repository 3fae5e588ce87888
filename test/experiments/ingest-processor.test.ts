/**
 * The ingest processor's metric, exposure and derived rows over the real local drivers (requests through the
 * dispatcher, the SQLite queue drained into the processor as the runtime does): a crash between the seen-markers and
 * the archive loses no row, a resend from another request stores nothing twice, and rated feedback becomes
 * `feedback.thumb` rows (also after a crash between the thumbs and the rest of the feedback work).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processFeedbackMessage } from '../../lib/feedback/process-feedback-message.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { EventsPort } from '../../lib/ports/events.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness(); // the clock stands at 2026-12-02T10:00:00Z
});
afterEach(() => h.close());

const metric = (id: string, occurredAt: string, overrides: Record<string, unknown> = {}) => ({
  metricEventId: id,
  metric: 'tool_errors',
  value: 1,
  userId: 'u-1',
  model: 'ckpt-b',
  occurredAt,
  ...overrides,
});

async function rows(prefix: string): Promise<Array<Record<string, any> & { _key: string }>> {
  const out: Array<Record<string, any> & { _key: string }> = [];
  for (const key of (await h.ports.blobs.list(prefix)).keys) {
    for (const line of Buffer.from((await h.ports.blobs.get(key))!).toString('utf8').split('\n')) if (line !== '') out.push({ ...JSON.parse(line), _key: key });
  }
  return out;
}

/** Blobs that fail every put whose key contains `marker` (a crash at that point of the processor). */
function failingBlobs(inner: BlobsPort, marker: string): BlobsPort {
  return {
    put: async (key, body, options) => {
      if (key.includes(marker)) throw new Error(`crash before writing ${key}`);
      return inner.put(key, body, options);
    },
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
  };
}

const post = (path: string, body: unknown) => h.request('POST', path, { body });

/** Lets the test clock pass a received message's visibility timeout, so the next drain sees it again. */
function passVisibility(): void {
  h.clock.now = new Date(h.clock.now.getTime() + 2000);
}

describe('metric events and exposures in the processor', () => {
  it('archives every row after a crash between the seen-markers and the archive, and never twice', async () => {
    const res = await post('/v1/metrics', {
      metrics: [metric('c-1', '2026-12-01T23:59:59Z'), metric('c-2', '2026-12-02T00:00:01+00:00'), metric('c-3', '2026-12-02T09:00:00Z', { value: 3 })],
    });
    expect(res.status).toBe(202);
    const [message] = await h.ports.ingestQueue.receive({ maxMessages: 1, visibilityTimeoutSeconds: 1 });
    // First attempt: every marker written, then a crash writing the 12-01 object (the 12-02 one may be written).
    const crashing = { ...h.ports, blobs: failingBlobs(h.ports.blobs, 'dt=2026-12-01') };
    await expect(processFeedbackMessage(crashing, message!.body)).rejects.toThrow(/crash before writing/);
    for (const id of ['c-1', 'c-2', 'c-3']) expect(await h.ports.records.get(`METRICEVENT#${id}`, 'SEEN')).toMatchObject({ ingestId: res.json.ingestId });
    expect((await rows('raw/metrics/')).map((r) => r.id)).not.toContain('c-1');

    // The redelivery finds markers with its own ingestId: its items, archived again, in full.
    passVisibility();
    const [response] = await h.drain();
    expect(response!.batchItemFailures).toEqual([]);
    const archived = await rows('raw/metrics/');
    expect(archived.map((r) => `${r.id}@${r._key}`).sort()).toEqual([
      `c-1@raw/metrics/tenant=default/dt=2026-12-01/${res.json.ingestId}.jsonl`,
      `c-2@raw/metrics/tenant=default/dt=2026-12-02/${res.json.ingestId}.jsonl`,
      `c-3@raw/metrics/tenant=default/dt=2026-12-02/${res.json.ingestId}.jsonl`,
    ]);
    expect(archived.find((r) => r.id === 'c-2')!.occurred_at).toBe('2026-12-02T00:00:01.000Z');
    expect(h.counters.get('MetricEventsStored')).toBe(3);

    // Another request with the same ids: duplicates, nothing archived.
    const resend = await post('/v1/metrics', { metrics: [metric('c-1', '2026-12-01T23:59:59Z'), metric('c-3', '2026-12-02T09:00:00Z')] });
    await h.drain();
    expect(h.counters.get('MetricEventsDuplicate')).toBe(2);
    expect((await h.ports.blobs.list('raw/metrics/')).keys.filter((k) => k.includes(resend.json.ingestId))).toEqual([]);
    expect(await rows('raw/metrics/')).toHaveLength(3);
  });

  it('keeps a crashed exposure message whole, and lets the first of two racing requests own an id', async () => {
    const exposure = (id: string, arm: string) => ({ exposureId: id, experiment: 'exp-1', arm, checkpoint: `ckpt-${arm}`, unitType: 'user', unitId: 'u-1', occurredAt: '2026-12-02T09:30:00Z' });
    const first = await post('/v1/exposures', { exposures: [exposure('e-1', 'b'), exposure('e-2', 'b')] });
    const second = await post('/v1/exposures', { exposures: [exposure('e-2', 'b'), exposure('e-3', 'control')] });
    const messages = await h.ports.ingestQueue.receive({ maxMessages: 10, visibilityTimeoutSeconds: 1 });
    const firstMessage = messages.find((m) => m.body.includes(first.json.ingestId))!;
    await expect(processFeedbackMessage({ ...h.ports, blobs: failingBlobs(h.ports.blobs, 'raw/exposures/') }, firstMessage.body)).rejects.toThrow(/crash/);
    passVisibility();
    await h.drain();
    const archived = await rows('raw/exposures/');
    expect(archived.map((r) => `${r.id}:${r._key.includes(first.json.ingestId) ? 'first' : 'second'}`).sort()).toEqual(['e-1:first', 'e-2:first', 'e-3:second']);
    expect(archived.find((r) => r.id === 'e-3')).toMatchObject({ arm: 'control', checkpoint: 'ckpt-control', unit_type: 'user', unit_id: 'u-1' });
    expect(second.json.accepted).toBe(2);
    expect(h.counters.get('ExposuresDuplicate')).toBe(1);
  });
});

describe('feedback.thumb rows', () => {
  it('turns each rated feedback event into a row (1 up, 0 down) with its reporter, workspace, model and arm', async () => {
    const res = await post('/v1/feedback', {
      events: [
        feedbackEvent({ eventId: 'fb-up', rating: 'up', reporter: 'u-5', workspaceId: 'w-2', experiment: 'exp-1', arm: 'b', model: 'ckpt-b' }),
        feedbackEvent({ eventId: 'fb-down', rating: 'down', kind: 'comment', comment: 'wrong file', reporter: 'u-6', occurredAt: '2026-12-01T23:00:00Z' }),
        feedbackEvent({ eventId: 'fb-none', kind: 'outcome', outcome: 'accepted', rating: 'none' }),
      ],
    });
    expect(res.status).toBe(202);
    await h.drain();
    expect(await h.ports.records.get('FEEDBACK#fb-up', 'EVENT')).toMatchObject({ workspaceId: 'w-2' });
    const thumbs = await rows('raw/metrics/');
    expect(thumbs.map((r) => r.id).sort()).toEqual(['thumb:fb-down', 'thumb:fb-up']);
    expect(thumbs.find((r) => r.id === 'thumb:fb-up')).toMatchObject({
      metric: 'feedback.thumb',
      value: 1,
      scope: 'turn',
      user_id: 'u-5',
      workspace_id: 'w-2',
      model: 'ckpt-b',
      experiment: 'exp-1',
      arm: 'b',
      session_id: 'sess-1',
      turn_id: 'turn-1',
      occurred_at: '2026-12-02T09:59:00.000Z',
      _key: `raw/metrics/tenant=default/dt=2026-12-02/derived-${res.json.ingestId}.jsonl`,
    });
    expect(thumbs.find((r) => r.id === 'thumb:fb-down')).toMatchObject({ value: 0, user_id: 'u-6', workspace_id: null, experiment: null, arm: null, _key: `raw/metrics/tenant=default/dt=2026-12-01/derived-${res.json.ingestId}.jsonl` });
    // A resent rated event is a duplicate: no second thumb.
    await post('/v1/feedback', feedbackEvent({ eventId: 'fb-up', rating: 'up', reporter: 'u-5' }));
    await h.drain();
    expect((await rows('raw/metrics/')).filter((r) => r.id === 'thumb:fb-up')).toHaveLength(1);
  });

  it('writes the thumbs again when a delivery crashed after storing the events', async () => {
    const res = await post('/v1/feedback', feedbackEvent({ eventId: 'fb-crash', rating: 'down' }));
    const [message] = await h.ports.ingestQueue.receive({ maxMessages: 1, visibilityTimeoutSeconds: 1 });
    const failingEvents: EventsPort = { publish: async () => Promise.reject(new Error('bus down')) };
    await expect(processFeedbackMessage({ ...h.ports, blobs: failingBlobs(h.ports.blobs, 'derived-'), events: failingEvents }, message!.body)).rejects.toThrow(/crash/);
    expect(await h.ports.records.get('FEEDBACK#fb-crash', 'EVENT')).toBeDefined();
    passVisibility();
    await h.drain();
    expect(await rows('raw/metrics/')).toEqual([expect.objectContaining({ id: 'thumb:fb-crash', value: 0, _key: `raw/metrics/tenant=default/dt=2026-12-02/derived-${res.json.ingestId}.jsonl` })]);
  });
});
