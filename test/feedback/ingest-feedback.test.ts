import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blobKeys } from '../../lib/feedback/record-keys.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.close());

async function queuedBodies(): Promise<any[]> {
  const messages = await h.ports.ingestQueue.receive({ maxMessages: 10, visibilityTimeoutSeconds: 1 });
  // Let the test clock pass the visibility timeout, so a later drain() sees the messages again.
  h.clock.now = new Date(h.clock.now.getTime() + 2000);
  return messages.map((m) => JSON.parse(m.body));
}

describe('POST /v1/feedback', () => {
  it('accepts one valid event with 202 and makes it durable as one queue message, without touching records', async () => {
    const e = feedbackEvent({ eventId: 'single-1' });
    const res = await h.request('POST', '/v1/feedback', { body: e });
    expect(res.status).toBe(202);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json).toMatchObject({ accepted: 1, duplicates: 0, rejected: 0, results: [{ index: 0, eventId: 'single-1', status: 'accepted' }] });
    expect(await h.ports.records.get('FEEDBACK#single-1', 'EVENT')).toBeUndefined();
    const [envelope, ...rest] = await queuedBodies();
    expect(rest).toHaveLength(0);
    expect(envelope).toMatchObject({ v: 1, ingestId: res.json.ingestId, kind: 'feedback', receivedAt: '2026-12-02T10:00:00.000Z' });
    expect(envelope.items).toHaveLength(1);
    expect(envelope.items[0]).toMatchObject({
      eventId: 'single-1',
      feedbackKey: 'trace-single-1:turn-1:user-42',
      receivedAt: '2026-12-02T10:00:00.000Z',
      occurredAt: '2026-12-02T09:59:00.000Z',
    });
    expect(h.counters.get('EventsAccepted')).toBe(1);
  });

  it('answers a batch per item: accepted, duplicate (same eventId twice) and rejected with reasons', async () => {
    const events = [
      feedbackEvent({ eventId: 'b-1' }),
      feedbackEvent({ eventId: 'b-2', rating: 'sideways' }),
      feedbackEvent({ eventId: 'b-1' }),
      feedbackEvent({ eventId: 'b-3', kind: 'outcome', rating: 'none' }),
      feedbackEvent({ eventId: 'b-4', kind: 'outcome', outcome: 'reverted', rating: 'none' }),
    ];
    const res = await h.request('POST', '/v1/feedback', { body: { events } });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 2, duplicates: 1, rejected: 2 });
    expect(res.json.results.map((r: any) => r.status)).toEqual(['accepted', 'rejected', 'duplicate', 'rejected', 'accepted']);
    expect(res.json.results[1].issues).toEqual([{ path: 'events[1].rating', message: expect.stringContaining('up') }]);
    expect(res.json.results[3].issues).toEqual([{ path: 'events[3].outcome', message: 'is required when kind is outcome' }]);
    const [envelope] = await queuedBodies();
    expect(envelope.items.map((i: any) => i.eventId)).toEqual(['b-1', 'b-4']);
    expect(h.counters.get('EventsRejected')).toBe(2);
  });

  it('answers 400 when every item of a batch is rejected, and queues nothing', async () => {
    const res = await h.request('POST', '/v1/feedback', {
      body: { events: [feedbackEvent({ eventId: 'bad id', traceId: 't-1' }), feedbackEvent({ trainingConsent: undefined })] },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('Flywheel.ValidationError');
    expect(res.json.issues.map((i: any) => i.path)).toEqual(['events[0].eventId', 'events[1].trainingConsent']);
    expect(res.json.results.every((r: any) => r.status === 'rejected')).toBe(true);
    expect(await queuedBodies()).toHaveLength(0);
  });

  it('lists every offending field of a single event with its path and reason', async () => {
    const res = await h.request('POST', '/v1/feedback', {
      body: {
        eventId: 'x#y',
        kind: 'vote',
        traceId: '',
        sessionId: 's',
        turnId: 't',
        model: 'm',
        rating: 'up',
        source: 'robot',
        reporter: 'r',
        comment: 'é'.repeat(4097),
        context: { blob: 'x'.repeat(17 * 1024) },
        occurredAt: 'yesterday',
        surprise: 1,
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('Flywheel.ValidationError');
    const paths = res.json.issues.map((i: any) => i.path).sort();
    expect(paths).toEqual(['comment', 'context', 'eventId', 'kind', 'occurredAt', 'source', 'surprise', 'traceId', 'trainingConsent'].sort());
    for (const issue of res.json.issues) expect(issue.message.length).toBeGreaterThan(0);
    expect(res.json.issues.find((i: any) => i.path === 'comment').message).toContain('8192 bytes');
  });

  it('rejects an occurredAt far in the future and accepts ordinary clock skew', async () => {
    const res = await h.request('POST', '/v1/feedback', {
      body: { events: [feedbackEvent({ occurredAt: '2026-12-03T10:00:00Z' }), feedbackEvent({ occurredAt: '2026-12-02T10:05:00+00:00' })] },
    });
    expect(res.json.results[0]).toMatchObject({ status: 'rejected', issues: [{ path: 'events[0].occurredAt' }] });
    expect(res.json.results[1].status).toBe('accepted');
  });

  it('moves an inline trajectory to a blob and keeps its key in the item', async () => {
    const trajectory = { steps: [{ role: 'assistant', content: 'ran tests' }] };
    const res = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'traj-1', trajectory: { inline: trajectory } }) });
    expect(res.status).toBe(202);
    const stored = await h.ports.blobs.get(blobKeys.trajectory('traj-1'));
    expect(JSON.parse(Buffer.from(stored!).toString('utf8'))).toEqual(trajectory);
    const [envelope] = await queuedBodies();
    expect(envelope.items[0].trajectory).toEqual({ blobKey: 'trajectories/feedback/traj-1.json' });
  });

  it('takes a trajectory blobKey only when it names an upload this tenant stored; never a key the client chose', async () => {
    await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'up-1', trajectory: { inline: { ok: 1 } } }) });
    const uploaded = blobKeys.trajectory('up-1');
    const reuse = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ trajectory: { blobKey: uploaded } }) });
    expect(reuse.status).toBe(202);
    const missing = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ trajectory: { blobKey: 'trajectories/feedback/never.json' } }) });
    expect(missing.json.issues).toEqual([{ path: 'trajectory.blobKey', message: 'names no trajectory stored by this tenant' }]);
    for (const blobKey of ['suites/x/t1.json', 'trajectories/attempts/a.jsonl', 'trajectories/feedback/a/b.json', 'spool/ingest/x.json']) {
      const chosen = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ trajectory: { blobKey } }) });
      expect(chosen.json.issues, blobKey).toEqual([{ path: 'trajectory.blobKey', message: expect.stringContaining('must name an uploaded trajectory') }]);
    }
    // Ids are escaped into one path segment: `a` and `a.json/x` never collide as files.
    expect([blobKeys.trajectory('a'), blobKeys.trajectory('a.json/x')]).toEqual(['trajectories/feedback/a.json', 'trajectories/feedback/a.json%2Fx.json']);
  });

  it('rejects an inline trajectory over 256 KiB', async () => {
    const res = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ trajectory: { inline: { s: 'x'.repeat(257 * 1024) } } }) });
    expect(res.status).toBe(400);
    expect(res.json.issues).toEqual([{ path: 'trajectory.inline', message: expect.stringContaining('262144 bytes') }]);
  });

  it('spills an envelope over the queue message limit to blobs and sends a pointer', async () => {
    const events = Array.from({ length: 100 }, (_, i) => feedbackEvent({ eventId: `big-${i}`, kind: 'comment', comment: 'c'.repeat(4000) }));
    const res = await h.request('POST', '/v1/feedback', { body: { events } });
    expect(res.status).toBe(202);
    const [pointer] = await queuedBodies();
    expect(pointer).toEqual({
      v: 1,
      ingestId: res.json.ingestId,
      kind: 'feedback',
      receivedAt: '2026-12-02T10:00:00.000Z',
      spooled: { blobKey: `spool/ingest/${res.json.ingestId}.json` },
    });
    const spooled = JSON.parse(Buffer.from((await h.ports.blobs.get(pointer.spooled.blobKey))!).toString('utf8'));
    expect(spooled.items).toHaveLength(100);
    // and the processor follows the pointer
    const [response] = await h.drain();
    expect(response!.batchItemFailures).toEqual([]);
    expect(await h.ports.records.get('FEEDBACK#big-99', 'EVENT')).toMatchObject({ comment: 'c'.repeat(4000), ingestId: res.json.ingestId });
    expect(h.counters.get('EventsStored')).toBe(100);
  });

  it('refuses a batch over 500 events naming the field', async () => {
    const res = await h.request('POST', '/v1/feedback', { body: { events: Array.from({ length: 501 }, () => feedbackEvent()) } });
    expect(res.status).toBe(400);
    expect(res.json.issues).toEqual([{ path: 'events', message: expect.stringContaining('500') }]);
  });
});

describe('POST /v1/reports', () => {
  it('accepts a report and the processor stores it once', async () => {
    const report = {
      reportId: 'rep-1',
      title: 'Agent loops on npm install',
      body: 'Seen on three sessions',
      severity: 'high',
      reporter: 'oncall',
      source: 'internal',
      links: ['https://example.com/trace/1'],
      model: 'ckpt-7',
    };
    const first = await h.request('POST', '/v1/reports', { body: report });
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ reportId: 'rep-1', status: 'accepted' });
    await h.request('POST', '/v1/reports', { body: report });
    await h.drain();
    const stored = await h.ports.records.get('REPORT#rep-1', 'REPORT');
    expect(stored).toMatchObject({ title: 'Agent loops on npm install', severity: 'high', ingestId: first.json.ingestId });
    expect(h.counters.get('ReportsStored')).toBe(1);
    expect(h.counters.get('ReportsDuplicate')).toBe(1);
  });

  it("takes a report's repo only as a remote git URL (https://, ssh://, git@host:path), never a server path, naming repo", async () => {
    const report = (reportId: string, repo: string) => ({ reportId, title: 'Emoji in commits', body: 'A rocket in the message.', severity: 'low', reporter: 'ana', source: 'internal', model: 'ckpt-7', repo, commit: 'abcdef1' });
    for (const [i, repo] of ['https://example.com/acme/app.git', 'ssh://git@example.com/acme/app.git', 'git@github.com:acme/app.git'].entries()) {
      const res = await h.request('POST', '/v1/reports', { body: report(`ok-${i}`, repo) });
      expect(res.status, repo).toBe(202);
    }
    for (const [i, repo] of ['file:///srv/secrets', 'http://example.com/acme/app.git', '/srv/repos/app', 'git@:x', 'https://', 'ext::sh -c id'].entries()) {
      const res = await h.request('POST', '/v1/reports', { body: report(`bad-${i}`, repo) });
      expect(res.status, repo).toBe(400);
      expect(res.json.issues.map((x: any) => x.path), repo).toEqual(['repo']);
    }
  });

  it('names every bad report field', async () => {
    const res = await h.request('POST', '/v1/reports', { body: { reportId: 'r', title: '', severity: 'urgent', links: ['ftp://x'] } });
    expect(res.status).toBe(400);
    expect(res.json.issues.map((i: any) => i.path).sort()).toEqual(['body', 'links[0]', 'model', 'reporter', 'severity', 'source', 'title'].sort());
  });
});
