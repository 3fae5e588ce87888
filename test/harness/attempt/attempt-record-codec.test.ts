import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { evalAttemptId, type AttemptRecord } from '../../../lib/harness/attempt/attempt-record.ts';
import { attemptRecord } from '../../../lib/harness/attempt/record-codecs.ts';
import { evalKeys } from '../../../lib/harness/attempt/record-keys.ts';
import { getAttemptRecord, listAttemptRecords } from '../../../lib/harness/attempt/read-attempt-records.ts';
import { MALFORMED_RECORD, MalformedRecordError } from '../../../lib/shared/record-codec.ts';
import { tempDirs } from '../../support/temp-dirs.ts';

const tempDir = tempDirs('fw-attempt-record-');
let ports: LocalPorts | undefined;
afterEach(() => {
  ports?.close();
  ports = undefined;
});

function attempt(n: number): AttemptRecord {
  const usage = { promptTokens: 10, completionTokens: 2, cachedTokens: 0 };
  return {
    ...evalKeys.attempt('r1', 'calc/add', 'strict', n),
    kind: 'eval-attempt', runId: 'r1', attemptId: evalAttemptId('r1', 'calc/add', 'strict', n), taskId: 'calc/add', suite: 'calc', mode: 'strict', n,
    status: 'passed', stopReason: { kind: 'submitted' }, usage, usageAllTries: usage, turns: 3, durationMs: 1200,
    grade: { passed: true, reasons: [], integrity: [], testsRun: 4 },
    observations: [{ kind: 'network.blocked', at: '2026-12-03T00:00:00.000Z', detail: { host: 'example.com', port: 443 } }],
    model: 'm', tries: 1,
    history: [{ try: 1, startedAt: '2026-12-03T00:00:00.000Z', durationMs: 1200, outcome: 'completed', stopReason: { kind: 'submitted' }, usage }],
    startedAt: '2026-12-03T00:00:00.000Z', finishedAt: '2026-12-03T00:00:01.200Z',
  };
}

describe('attempt records through their codec', () => {
  it('reads back what was written, keys and extra grade details included', async () => {
    ports = openLocalPorts(join(tempDir(), 'data'));
    await ports.records.putMany([attemptRecord.encode(attempt(0)), attemptRecord.encode(attempt(1))]);
    expect(await getAttemptRecord(ports.records, 'r1', 'calc/add', 'strict', 0)).toEqual(attempt(0));
    expect(await getAttemptRecord(ports.records, 'r1', 'calc/add', 'strict', 2)).toBeUndefined();
    expect(await listAttemptRecords(ports.records, 'r1')).toEqual([attempt(0), attempt(1)]);
  });

  it('surfaces a malformed stored attempt as MalformedRecordError naming the record and the field', async () => {
    ports = openLocalPorts(join(tempDir(), 'data'));
    const { pk, sk } = evalKeys.attempt('r1', 'calc/add', 'strict', 0);
    const good = attemptRecord.encode(attempt(0));
    await ports.records.put({ ...good, usage: { promptTokens: 'many', completionTokens: 2, cachedTokens: 0 } });
    const error = await getAttemptRecord(ports.records, 'r1', 'calc/add', 'strict', 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toMatchObject({ name: `Flywheel.${MALFORMED_RECORD}`, pk, sk, field: 'usage.promptTokens' });
    expect(String(error)).toContain(`eval attempt record ${pk} / ${sk}: field "usage.promptTokens"`);
    await expect(listAttemptRecords(ports.records, 'r1')).rejects.toMatchObject({ field: 'usage.promptTokens' });
  });
});
