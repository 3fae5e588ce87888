import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { queryFailureModes } from '../../lib/modes/query-failure-modes.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { listSuggestedLabels, loadTaxonomyMapping, promoteCluster } from '../../lib/modes/taxonomy/promote-cluster.ts';
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

  it('a cluster, a taxonomy mapping and a suggested label with wrong-typed fields fail where read, naming the field', async () => {
    env = tempPorts();
    await env.ports.records.put({ ...modeKeys.cluster('cl-bad'), id: 'cl-bad', count: 'many' });
    await expect(promoteCluster(env.ports, 'cl-bad', { id: 'x-mode', name: 'x', definition: 'y', promotedBy: 'ana', membersHash: 'h' })).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', field: 'count' });
    await env.ports.records.put({ ...modeKeys.taxonomyMapping(1, 2), fromVersion: 1, toVersion: 2, modes: { other: 3 }, added: [], suggestedLabels: 0, createdBy: 'a', createdAt: 'now' });
    await expect(loadTaxonomyMapping(env.ports.records, 1, 2)).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', sk: 'MAPPING#0000000001#0000000002', field: 'modes.other' });
    const suggestion = { signalKey: 'feedback:s-1', mode: 'x-mode', taxonomyVersion: 2, source: 'cluster', clusterId: 'cl-1', suggestedBy: 'ana', suggestedAt: 'now' };
    await env.ports.records.put({ ...modeKeys.suggestedLabel('feedback:s-1', 'x-mode'), gsi1pk: modeKeys.suggestedForMode('x-mode'), gsi1sk: 'now', ...suggestion, reviewed: 'no' });
    await expect(listSuggestedLabels(env.ports.records, 'x-mode')).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', field: 'reviewed' });
  });
});
