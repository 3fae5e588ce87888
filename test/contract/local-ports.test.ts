/**
 * The local bundle beyond the port contracts: state survives a reopen, another process can use the same data
 * folder while this one has it open (as the CLI does next to the server), blob keys cannot escape the folder,
 * and the local bus keeps a readable log.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';
import { ALL_EVENTS, LocalEvents } from '../../lib/drivers/local/local-events.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { GroupCommit } from '../../lib/drivers/local/sqlite-database.ts';
import { DatabaseSync } from 'node:sqlite';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';

const run = promisify(execFile);
const tempDir = tempDirs('flywheel-local-');

describe('openLocalPorts', () => {
  it('creates the data folder and keeps records, blobs, queue and events across a reopen', async () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const first = openLocalPorts(dataDir, { maxReceiveCount: 1 });
    await first.records.put({ pk: 'FEEDBACK#e1', sk: 'EVENT', rating: 'up', gsi1pk: 'MODEL#m', gsi1sk: '2026' });
    await first.blobs.put('raw/feedback/dt=2026-12-02/b1.jsonl', '{"a":1}\n');
    await first.ingestQueue.send('poison');
    const waiting = await first.ingestQueue.send('waiting');
    const [poison] = await first.ingestQueue.receive({ maxMessages: 1, visibilityTimeoutSeconds: 30 });
    await first.ingestQueue.changeVisibility(poison!.receiptHandle, 0);
    await first.events.publish([{ type: 'feedback.stored', detail: { eventIds: ['e1'] } }]);
    first.close();

    const second = openLocalPorts(dataDir, { maxReceiveCount: 1 });
    try {
      expect(second.dataDir).toBe(dataDir);
      expect(await second.records.get('FEEDBACK#e1', 'EVENT')).toMatchObject({ rating: 'up' });
      expect((await second.records.query({ index: 'gsi1', partition: 'MODEL#m' })).items).toHaveLength(1);
      expect(new TextDecoder().decode(await second.blobs.get('raw/feedback/dt=2026-12-02/b1.jsonl'))).toBe('{"a":1}\n');
      const received = await second.ingestQueue.receive({ maxMessages: 10 });
      // The poison message was received once already: with maxReceiveCount 1 this receive dead-letters it.
      expect(received.map((m) => [m.messageId, m.body])).toEqual([[waiting, 'waiting']]);
      expect((await second.ingestDeadLetters.receive({ maxMessages: 10 })).map((m) => m.body)).toEqual(['poison']);
      expect(second.events.recent().map((e) => [e.type, e.detail])).toEqual([['feedback.stored', { eventIds: ['e1'] }]]);
    } finally {
      second.close();
    }
  });

  it('lets another process send and read while this one holds the folder open', async () => {
    const dataDir = tempDir();
    const ports = openLocalPorts(dataDir);
    try {
      await ports.records.put({ pk: 'RUN#1', sk: 'META', status: 'running' });
      const script = `
        import { openLocalPorts } from ${JSON.stringify(new URL('../../lib/drivers/local/local-ports.ts', import.meta.url).pathname)};
        const ports = openLocalPorts(${JSON.stringify(dataDir)});
        const run = await ports.records.get('RUN#1', 'META');
        const id = await ports.ingestQueue.send('from-cli');
        console.log(JSON.stringify({ status: run?.status, id }));
        ports.close();`;
      const { stdout } = await run(process.execPath, ['--no-warnings', '--input-type=module', '-e', script]);
      const answer = JSON.parse(stdout) as { status: string; id: string };
      expect(answer.status).toBe('running');
      const [message] = await ports.ingestQueue.receive({ maxMessages: 1, waitSeconds: 2 });
      expect(message).toMatchObject({ messageId: answer.id, body: 'from-cli' });
    } finally {
      ports.close();
    }
  });
});

describe('group commit', () => {
  it('commits concurrent writes together, failing only the write that threw', async () => {
    const db = new DatabaseSync(join(tempDir(), 'g.sqlite'));
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const group = new GroupCommit(db);
    const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
    const results = await Promise.allSettled([
      group.run(() => insert.run('a')),
      group.run(() => insert.run('a')),
      group.run(() => insert.run('b')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT k FROM t ORDER BY k').all().map((row) => row.k)).toEqual(['a', 'b']);
    db.close();
    await expect(group.run(() => insert.run('c'))).rejects.toThrow();
  });
});

describe('FsBlobs keys', () => {
  it('rejects keys that could leave the root or are not plain relative paths', async () => {
    const blobs = new FsBlobs(tempDir());
    for (const key of ['', '/etc/passwd', '../x', 'a/../../x', 'a//b', './a', 'a\\b', 'a/', 'nul\0byte', '.flywheel-tmp/x']) {
      await expect(blobs.put(key, 'x'), JSON.stringify(key)).rejects.toThrow(/Invalid blob key/);
      await expect(blobs.get(key), JSON.stringify(key)).rejects.toThrow(/Invalid blob key/);
    }
    await blobs.put('a/b/.hidden..name', 'ok');
    expect((await blobs.list('a/')).keys).toEqual(['a/b/.hidden..name']);
  });
});

describe('LocalEvents', () => {
  it('lists recent events by type and keeps publishing when a subscriber throws', async () => {
    const ports = openLocalPorts(tempDir());
    const errors: string[] = [];
    const events = new LocalEvents(new DatabaseSync(':memory:'), { onSubscriberError: (error) => errors.push(String(error)) });
    try {
      events.subscribe('feedback.stored', () => {
        throw new Error('subscriber bug');
      });
      let delivered = 0;
      events.subscribe('feedback.stored', () => void delivered++);
      await events.publish([{ type: 'feedback.stored', detail: {} }]);
      await waitFor(() => (errors.length > 0 && delivered > 0 ? true : undefined), { what: 'both subscribers to be called', everyMs: 5 });
      expect(errors).toEqual(['Error: subscriber bug']);
      expect(delivered).toBe(1);
      const seen: string[] = [];
      const stop = ports.events.subscribe('feedback.stored', (event) => {
        seen.push(String(event.detail.n));
      });
      // Delivery is asynchronous: a subscriber to every event, called after the subscribers of its type, tells when
      // an event has been handed out.
      const handedOut: number[] = [];
      ports.events.subscribe(ALL_EVENTS, (event) => void handedOut.push(Number(event.detail.n)));
      const handedOutAlready = (n: number) => waitFor(() => (handedOut.includes(n) ? true : undefined), { what: `event ${n} to be delivered`, everyMs: 5 });
      await ports.events.publish([
        { type: 'feedback.stored', detail: { n: 1 }, id: 'stable-1' },
        { type: 'report.filed', detail: { n: 2 } },
        { type: 'feedback.stored', detail: { n: 3 } },
      ]);
      await handedOutAlready(3);
      stop();
      await ports.events.publish([{ type: 'feedback.stored', detail: { n: 4 } }]);
      await handedOutAlready(4);
      expect(seen).toEqual(['1', '3']);
      const stored = ports.events.recent({ type: 'feedback.stored' });
      expect(stored.map((e) => e.detail.n)).toEqual([1, 3, 4]);
      expect(stored[0]).toMatchObject({ id: 'stable-1', source: 'flywheel' });
      expect(ports.events.recent({ limit: 2 }).map((e) => e.detail.n)).toEqual([3, 4]);
      expect(ports.events.recent({ afterSeq: stored[1]!.seq }).map((e) => e.detail.n)).toEqual([4]);
    } finally {
      ports.close();
    }
  });
});
