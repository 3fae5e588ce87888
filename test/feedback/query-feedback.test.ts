import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness(new Date('2026-12-02T10:00:00.000Z'));
});
afterEach(() => h.close());

/** Ingests and stores events, one request per receive time. */
async function seed(days: Array<{ at: string; events: Array<Record<string, unknown>> }>) {
  for (const { at, events } of days) {
    h.clock.now = new Date(at);
    const res = await h.request('POST', '/v1/feedback', { body: { events: events.map((e) => ({ ...e, occurredAt: at })) } });
    expect(res.status).toBe(202);
    await h.drain();
  }
  h.clock.now = new Date('2026-12-02T12:00:00.000Z');
}

describe('GET /v1/feedback/{eventId}', () => {
  it('answers 404 naming the id when nothing is stored under it', async () => {
    const res = await h.request('GET', '/v1/feedback/nope-1');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'Flywheel.NotFoundError', message: 'Feedback event "nope-1" not found' });
  });

  it('returns the stored record without store keys', async () => {
    await seed([{ at: '2026-12-02T10:00:00.000Z', events: [feedbackEvent({ eventId: 'g-1', tags: ['ci'], context: { repo: 'acme/app' } })] }]);
    const res = await h.request('GET', '/v1/feedback/g-1');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ eventId: 'g-1', tags: ['ci'], context: { repo: 'acme/app' }, current: true, receivedAt: '2026-12-02T10:00:00.000Z' });
    expect(res.json).not.toHaveProperty('pk');
    expect(res.json).not.toHaveProperty('gsi1pk');
  });
});

describe('GET /v1/feedback', () => {
  it('lists by day partitions newest first over the default last 7 days, across days', async () => {
    await seed([
      { at: '2026-11-20T10:00:00.000Z', events: [feedbackEvent({ eventId: 'too-old' })] },
      { at: '2026-11-30T10:00:00.000Z', events: [feedbackEvent({ eventId: 'd-1' })] },
      { at: '2026-12-01T10:00:00.000Z', events: [feedbackEvent({ eventId: 'd-2' }), feedbackEvent({ eventId: 'd-3', model: 'ckpt-8' })] },
      { at: '2026-12-02T11:00:00.000Z', events: [feedbackEvent({ eventId: 'd-4' })] },
    ]);
    const res = await h.request('GET', '/v1/feedback');
    expect(res.status).toBe(200);
    expect(res.json.items.map((i: any) => i.eventId)).toEqual(['d-4', 'd-3', 'd-2', 'd-1']);
    expect(res.json.cursor).toBeUndefined();
  });

  it('lists one model through the by-model index, filtered by rating and source, page by page with an opaque cursor', async () => {
    const events = Array.from({ length: 9 }, (_, i) =>
      feedbackEvent({ eventId: `m-${i}`, rating: i % 3 === 0 ? 'down' : 'up', source: i === 6 ? 'internal' : 'user', model: i === 3 ? 'other' : 'ckpt-7' }),
    );
    await seed(events.map((e, i) => ({ at: `2026-12-02T10:0${i}:00.000Z`, events: [e] })));
    const query = { model: 'ckpt-7', rating: 'down', source: 'user', limit: '1' };
    const first = await h.request('GET', '/v1/feedback', { query });
    expect(first.json.items.map((i: any) => i.eventId)).toEqual(['m-0']);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.request('GET', '/v1/feedback', { query: { ...query, ...(cursor ? { cursor } : {}) } });
      expect(page.status).toBe(200);
      seen.push(...page.json.items.map((i: any) => i.eventId));
      cursor = page.json.cursor;
      pages++;
    } while (cursor && pages < 10);
    // down ratings are m-0, m-3 (other model), m-6 (internal): only m-0 qualifies.
    expect(seen).toEqual(['m-0']);
    const ups = await h.request('GET', '/v1/feedback', { query: { model: 'ckpt-7', rating: 'up', limit: '3' } });
    expect(ups.json.items.map((i: any) => i.eventId)).toEqual(['m-8', 'm-7', 'm-5']);
    const next = await h.request('GET', '/v1/feedback', { query: { model: 'ckpt-7', rating: 'up', limit: '3', cursor: ups.json.cursor } });
    expect(next.json.items.map((i: any) => i.eventId)).toEqual(['m-4', 'm-2', 'm-1']);
  });

  it('honours since and until', async () => {
    await seed([
      { at: '2026-12-01T08:00:00.000Z', events: [feedbackEvent({ eventId: 's-1' })] },
      { at: '2026-12-01T09:00:00.000Z', events: [feedbackEvent({ eventId: 's-2' })] },
      { at: '2026-12-01T10:00:00.000Z', events: [feedbackEvent({ eventId: 's-3' })] },
    ]);
    const res = await h.request('GET', '/v1/feedback', { query: { since: '2026-12-01T08:30:00Z', until: '2026-12-01T09:00:00Z' } });
    expect(res.json.items.map((i: any) => i.eventId)).toEqual(['s-2']);
  });

  it('answers 400 naming each bad query parameter', async () => {
    const res = await h.request('GET', '/v1/feedback', { query: { since: 'last tuesday', rating: 'meh', limit: '0', colour: 'red' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('Flywheel.ValidationError');
    expect(res.json.issues.map((i: any) => i.path).sort()).toEqual(['colour', 'limit', 'rating', 'since']);
    const reversed = await h.request('GET', '/v1/feedback', { query: { since: '2026-12-02T00:00:00Z', until: '2026-12-01T00:00:00Z' } });
    expect(reversed.json.issues).toEqual([{ path: 'since', message: 'must not be after until' }]);
    const badCursor = await h.request('GET', '/v1/feedback', { query: { cursor: 'garbage' } });
    expect(badCursor.json.issues).toEqual([{ path: 'cursor', message: 'is not a cursor from this API' }]);
  });
});
