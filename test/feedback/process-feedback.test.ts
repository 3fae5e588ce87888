import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProcessFeedbackHandler } from '../../lib/feedback/consumers/process-feedback.ts';
import type { RecordItem } from '../../lib/ports/records.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, sqsRecord, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.close());

const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes!).toString('utf8');

describe('processing the ingestion queue', () => {
  it('stores each event once with its index keys, archives the batch as JSON Lines and publishes feedback.stored', async () => {
    const res = await h.request('POST', '/v1/feedback', { body: { events: [feedbackEvent({ eventId: 'p-1' }), feedbackEvent({ eventId: 'p-2', model: 'ckpt-8' })] } });
    const [response] = await h.drain();
    expect(response!.batchItemFailures).toEqual([]);
    const stored = await h.ports.records.get('FEEDBACK#p-1', 'EVENT');
    expect(stored).toMatchObject({
      eventId: 'p-1',
      ingestId: res.json.ingestId,
      gsi1pk: 'MODEL#ckpt-7',
      gsi1sk: '2026-12-02T10:00:00.000Z#p-1',
      gsi2pk: 'FEEDBACKDAY#2026-12-02',
      gsi2sk: '2026-12-02T10:00:00.000Z#p-1',
    });
    const archiveKey = `raw/feedback/dt=2026-12-02/${res.json.ingestId}.jsonl`;
    const lines = text(await h.ports.blobs.get(archiveKey)).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.eventId)).toEqual(['p-1', 'p-2']);
    expect(lines[0]).not.toHaveProperty('pk');
    const published = h.ports.events.recent({ type: 'feedback.stored' });
    expect(published).toHaveLength(1);
    expect(published[0]!.detail).toEqual({ ingestId: res.json.ingestId, eventIds: ['p-1', 'p-2'], archiveKey });
    expect(h.counters.get('EventsStored')).toBe(2);
  });

  it('counts a redelivered event (same eventId, another request) as a duplicate and never stores it twice', async () => {
    const first = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'dup-1', comment: 'first' }) });
    await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'dup-1', comment: 'second' }) });
    await h.drain();
    expect(await h.ports.records.get('FEEDBACK#dup-1', 'EVENT')).toMatchObject({ comment: 'first', ingestId: first.json.ingestId });
    expect(h.counters.get('EventsStored')).toBe(1);
    expect(h.counters.get('EventsDuplicate')).toBe(1);
    const archives = await h.ports.blobs.list('raw/feedback/');
    expect(archives.keys).toEqual([`raw/feedback/dt=2026-12-02/${first.json.ingestId}.jsonl`]);
  });

  it('makes the newest vote of a feedbackKey current and keeps the earlier ones as history, whatever the arrival order', async () => {
    const vote = (eventId: string, rating: string, occurredAt: string) =>
      feedbackEvent({ eventId, rating, occurredAt, traceId: 'tr-9', turnId: 'turn-3', reporter: 'u-1' });
    await h.request('POST', '/v1/feedback', { body: vote('v-mid', 'down', '2026-12-02T09:00:00Z') });
    await h.drain();
    await h.request('POST', '/v1/feedback', { body: vote('v-new', 'up', '2026-12-02T09:30:00Z') });
    await h.drain();
    // An older vote delivered last must not win.
    await h.request('POST', '/v1/feedback', { body: vote('v-old', 'up', '2026-12-02T08:00:00+00:00') });
    await h.drain();

    const current = await h.request('GET', '/v1/feedback/v-new');
    expect(current.status).toBe(200);
    expect(current.json).toMatchObject({ eventId: 'v-new', current: true, feedbackKey: 'tr-9:turn-3:u-1' });
    expect(current.json.history).toEqual([
      { eventId: 'v-new', occurredAt: '2026-12-02T09:30:00.000Z', rating: 'up', kind: 'rating', current: true },
      { eventId: 'v-mid', occurredAt: '2026-12-02T09:00:00.000Z', rating: 'down', kind: 'rating', current: false },
      { eventId: 'v-old', occurredAt: '2026-12-02T08:00:00.000Z', rating: 'up', kind: 'rating', current: false },
    ]);
    const mid = await h.request('GET', '/v1/feedback/v-mid');
    expect(mid.json).toMatchObject({ current: false, supersededBy: 'v-new' });
    const old = await h.request('GET', '/v1/feedback/v-old');
    expect(old.json).toMatchObject({ current: false, supersededBy: 'v-new' });
  });

  it('picks the newest vote inside one batch, ties broken by eventId', async () => {
    const at = '2026-12-02T09:00:00Z';
    const vote = (eventId: string) => feedbackEvent({ eventId, occurredAt: at, feedbackKey: 'k-tie' });
    await h.request('POST', '/v1/feedback', { body: { events: [vote('tie-b'), vote('tie-c'), vote('tie-a')] } });
    await h.drain();
    expect(await h.ports.records.get('FBKEY#k-tie', 'CURRENT')).toMatchObject({ eventId: 'tie-c' });
    expect((await h.request('GET', '/v1/feedback/tie-a')).json).toMatchObject({ current: false, supersededBy: 'tie-c' });
  });

  it('finishes a half-processed message on redelivery: stored by our own earlier attempt, archived and published once', async () => {
    const res = await h.request('POST', '/v1/feedback', { body: { events: [feedbackEvent({ eventId: 'h-1' }), feedbackEvent({ eventId: 'h-2' })] } });
    const [message] = await h.ports.ingestQueue.receive({ maxMessages: 1, visibilityTimeoutSeconds: 1 });
    // First attempt: the events are written, then the process "crashes" while writing the vote history.
    const real = h.ports.records;
    const crashing = {
      ...h.ports,
      records: {
        put: real.put.bind(real),
        get: real.get.bind(real),
        query: real.query.bind(real),
        delete: real.delete.bind(real),
        putMany: async (_items: RecordItem[]) => {
          throw new Error('simulated crash after the conditional puts');
        },
      },
    };
    const firstAttempt = await makeProcessFeedbackHandler(crashing)({ Records: [sqsRecord(message!.messageId, message!.body, 1)] });
    expect(firstAttempt.batchItemFailures).toEqual([{ itemIdentifier: message!.messageId }]);
    expect(await h.ports.records.get('FEEDBACK#h-1', 'EVENT')).toBeDefined();
    expect(await h.ports.blobs.list('raw/feedback/')).toEqual({ keys: [] });

    // Redelivery with healthy ports.
    const retry = await h.process({ Records: [sqsRecord(message!.messageId, message!.body, 2)] });
    expect(retry.batchItemFailures).toEqual([]);
    expect(h.counters.get('EventsStored')).toBe(2);
    expect(h.counters.get('EventsDuplicate') ?? 0).toBe(0);
    const archive = text(await h.ports.blobs.get(`raw/feedback/dt=2026-12-02/${res.json.ingestId}.jsonl`));
    expect(archive.trimEnd().split('\n')).toHaveLength(2);
    expect(h.ports.events.recent({ type: 'feedback.stored' })[0]!.detail).toMatchObject({ eventIds: ['h-1', 'h-2'] });
    expect((await h.request('GET', '/v1/feedback/h-2')).json).toMatchObject({ current: true, history: [{ eventId: 'h-2' }] });

    // A third delivery (e.g. the delete was lost) overwrites the same archive object rather than adding one.
    await h.process({ Records: [sqsRecord(message!.messageId, message!.body, 3)] });
    expect((await h.ports.blobs.list('raw/feedback/')).keys).toHaveLength(1);
  });

  it('reports only the failing record of a batch (partial batch failure)', async () => {
    const good = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'ok-1' }) });
    const [message] = await h.ports.ingestQueue.receive({ maxMessages: 1, visibilityTimeoutSeconds: 30 });
    const response = await h.process({
      Records: [
        sqsRecord('m-poison', 'this is not an envelope'),
        sqsRecord(message!.messageId, message!.body),
        sqsRecord('m-missing-spool', JSON.stringify({ v: 1, ingestId: 'gone', kind: 'feedback', receivedAt: '2026-12-02T10:00:00.000Z', spooled: { blobKey: 'spool/ingest/gone.json' } })),
      ],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-poison' }, { itemIdentifier: 'm-missing-spool' }]);
    expect(await h.ports.records.get('FEEDBACK#ok-1', 'EVENT')).toMatchObject({ ingestId: good.json.ingestId });
  });
});
