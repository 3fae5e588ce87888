import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { queryFailureModes } from '../../lib/modes/query-failure-modes.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { readLabel } from '../../lib/modes/write-label.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { storeFeedback, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
afterEach(() => env?.cleanup());

describe('a malformed failure-mode record', () => {
  it('a stored signal whose model is not text fails where the chain reads it, naming the field', async () => {
    env = tempPorts();
    const id = await storeFeedback(env.ports, { comment: 'It ignored AGENTS.md.', model: 42 });
    const read = loadSignal(env.ports, 'feedback', id);
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ pk: `FEEDBACK#${id}`, sk: 'EVENT', field: 'model' });
  });

  it('a tally row and a label with wrong-typed fields fail the counts and the label read, naming the field', async () => {
    env = tempPorts(() => new Date('2026-12-02T12:00:00Z'));
    const tally = { signalKey: 'feedback:t-1', model: 'ckpt-a', day: '2026-12-02', receivedAt: '2026-12-02T10:00:00.000Z', signalKind: 'comment', rating: 'down', source: 'local', confidence: 0.9 };
    await env.ports.records.put({ pk: modeKeys.tallyPartition('ckpt-a', '2026-12-02'), sk: 'feedback:t-1', ...tally, modes: 'scope-calibration' });
    await expect(queryFailureModes(env.ports, { model: 'ckpt-a' })).rejects.toMatchObject({
      name: 'Flywheel.MalformedRecord',
      pk: 'MODETALLY#ckpt-a#2026-12-02',
      sk: 'feedback:t-1',
      field: 'modes',
    });

    const label = { signalKey: 'feedback:t-1', model: 'ckpt-a', source: 'local', confidence: 0.9, taxonomyVersion: 1, labelledAt: '2026-12-02T10:00:01.000Z' };
    await env.ports.records.put({ ...modeKeys.label('feedback:t-1'), ...label, modes: [{ mode: 'other', probability: 'high' }] });
    await expect(readLabel(env.ports, 'feedback:t-1')).rejects.toThrow(/^mode label record MODESIGNAL#feedback:t-1 \/ LABEL: field "modes\.0\.probability"/);
  });
});
