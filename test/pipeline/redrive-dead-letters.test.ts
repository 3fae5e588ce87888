import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { listDeadLetters } from '../../lib/pipeline/list-dead-letters.ts';
import { redriveDeadLetters } from '../../lib/pipeline/redrive-dead-letters.ts';
import type { QueuePort } from '../../lib/ports/queue.ts';

let dir: string;
let ports: LocalPorts;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flywheel-redrive-'));
  ports = openLocalPorts(dir);
});
afterEach(() => {
  ports.close();
  rmSync(dir, { recursive: true, force: true });
});

const drain = async (q: QueuePort) => (await q.receive({ maxMessages: 10, visibilityTimeoutSeconds: 30 })).map((m) => m.body).sort();

describe('redriveDeadLetters', () => {
  it('moves every dead letter back, in batches beyond 10', async () => {
    const bodies = Array.from({ length: 23 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    for (const b of bodies) await ports.ingestDeadLetters.send(b);
    expect((await listDeadLetters(ports.ingestDeadLetters)).map((m) => m.body).sort()).toEqual(bodies);
    const result = await redriveDeadLetters(ports.ingestDeadLetters, ports.ingestQueue);
    expect(result).toEqual({ moved: 23, failed: [] });
    expect(await ports.ingestDeadLetters.depth()).toEqual({ visible: 0, inFlight: 0 });
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(...(await drain(ports.ingestQueue)));
    expect(got.sort()).toEqual(bodies);
  });

  it('honours max', async () => {
    for (const b of ['a', 'b', 'c']) await ports.ingestDeadLetters.send(b);
    expect((await redriveDeadLetters(ports.ingestDeadLetters, ports.ingestQueue, { max: 2 })).moved).toBe(2);
    expect((await ports.ingestDeadLetters.depth()).visible).toBe(1);
  });

  it('keeps a message in the DLQ when its send fails, so nothing is lost', async () => {
    await ports.ingestDeadLetters.send('keep-me');
    await ports.ingestDeadLetters.send('move-me');
    const q = ports.ingestQueue;
    const flaky: QueuePort = {
      send: async (body) => {
        if (body === 'keep-me') throw new Error('SQS unavailable');
        return q.send(body);
      },
      sendBatch: (bodies) => q.sendBatch(bodies),
      receive: (o) => q.receive(o),
      delete: (r) => q.delete(r),
      changeVisibility: (r, s) => q.changeVisibility(r, s),
      depth: () => q.depth(),
    };
    const result = await redriveDeadLetters(ports.ingestDeadLetters, flaky);
    expect(result.moved).toBe(1);
    expect(result.failed).toEqual([{ messageId: expect.any(String), error: 'SQS unavailable' }]);
    expect(await drain(ports.ingestDeadLetters)).toEqual(['keep-me']);
    expect(await drain(ports.ingestQueue)).toEqual(['move-me']);
  });
});
