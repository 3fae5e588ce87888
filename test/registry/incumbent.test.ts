/**
 * The registry incumbent over the real local records driver (SQLite): none at first, set and read back, a history
 * item per change, setting the same checkpoint twice changes nothing, concurrent writers both land in order (the
 * conditional write), and `GET /v1/incumbent` through the dispatcher (404, then the checkpoint).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getIncumbent, listIncumbentHistory, setIncumbent } from '../../lib/registry/incumbent.ts';
import { incumbentRecord } from '../../lib/registry/record-codecs.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

describe('the registry incumbent', () => {
  it('is absent, then set, then replaced; each change is kept in its history; the same checkpoint again is a no-op', async () => {
    h = openHarness();
    const { records } = h.ports;
    expect(await getIncumbent(records)).toBeUndefined();
    await setIncumbent(records, { checkpoint: 'ckpt-a', by: 'ana' }, new Date('2026-12-01T00:00:00Z'));
    expect(await getIncumbent(records)).toEqual({ checkpoint: 'ckpt-a', since: '2026-12-01T00:00:00.000Z' });
    await setIncumbent(records, { checkpoint: 'ckpt-b', experimentId: 'exp-1', by: 'key:k1' }, new Date('2026-12-02T00:00:00Z'));
    await setIncumbent(records, { checkpoint: 'ckpt-b', experimentId: 'exp-1', by: 'key:k1' }, new Date('2026-12-03T00:00:00Z'));
    expect(await getIncumbent(records)).toEqual({ checkpoint: 'ckpt-b', since: '2026-12-02T00:00:00.000Z', experimentId: 'exp-1' });
    const history = await listIncumbentHistory(records);
    expect(history.map((x) => [x.checkpoint, x.previous ?? null, x.by])).toEqual([
      ['ckpt-b', 'ckpt-a', 'key:k1'],
      ['ckpt-a', null, 'ana'],
    ]);
  });

  it('two writers at once both land, one after the other (the write is conditional on the revision read)', async () => {
    h = openHarness();
    const { records } = h.ports;
    const at = new Date('2026-12-04T00:00:00Z');
    await Promise.all([setIncumbent(records, { checkpoint: 'ckpt-x', by: 'a' }, at), setIncumbent(records, { checkpoint: 'ckpt-y', by: 'b' }, new Date(at.getTime() + 1))]);
    const stored = incumbentRecord.decode((await records.get(registryKeys.incumbent.pk, registryKeys.incumbent.sk))!);
    expect(stored.revision).toBe(1);
    const history = await listIncumbentHistory(records);
    expect(history).toHaveLength(2);
    expect(history.map((x) => x.checkpoint).sort()).toEqual(['ckpt-x', 'ckpt-y']);
    // The later landed write names the earlier one as the checkpoint it replaced.
    expect(history.find((x) => x.checkpoint === stored.checkpoint)?.previous).toBe(stored.checkpoint === 'ckpt-x' ? 'ckpt-y' : 'ckpt-x');
  });

  it('a malformed incumbent record fails naming the field', async () => {
    h = openHarness();
    await h.ports.records.put({ ...registryKeys.incumbent, kind: 'incumbent', checkpoint: 'c', since: 'yesterday', by: 'x', revision: 0 });
    const error = await getIncumbent(h.ports.records).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect((error as MalformedRecordError).field).toBe('since');
  });

  it('GET /v1/incumbent answers 404 until one is set, then the checkpoint', async () => {
    h = openHarness();
    const before = await h.request('GET', '/v1/incumbent');
    expect(before.status).toBe(404);
    await setIncumbent(h.ports.records, { checkpoint: 'ckpt-c', experimentId: 'exp-9', by: 'ana' }, new Date('2026-12-05T00:00:00Z'));
    const after = await h.request('GET', '/v1/incumbent');
    expect(after.status).toBe(200);
    expect(after.json).toEqual({ checkpoint: 'ckpt-c', since: '2026-12-05T00:00:00.000Z', experimentId: 'exp-9' });
  });
});
