/**
 * A draft from a promoted cluster names the mode the cluster was promoted into in its lineage (`lineage.modes`), even
 * while its members carry no label of it yet; a draft from a cluster nobody promoted names none of its own. The
 * drafter is a scripted model server over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { DRAFT_TOOL, draftEvalCase } from '../../lib/modes/evals/eval-drafts.ts';
import { clusterRecord } from '../../lib/modes/record-codecs.ts';
import { promoteCluster } from '../../lib/modes/taxonomy/promote-cluster.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { cluster, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  env?.cleanup();
});

async function storeReport(ports: LocalPorts, reportId: string, body: string) {
  await ports.records.put({
    ...feedbackKeys.report(reportId),
    reportId,
    title: 'Emojis in commit messages',
    body,
    severity: 'low',
    reporter: 'qa',
    source: 'internal',
    links: [],
    model: 'ckpt-a',
    trainingConsent: true,
    receivedAt: '2026-12-01T00:00:00.000Z',
  });
}

const CASE = { instruction: 'Commit the fix with a plain message.', context: 'The project forbids emojis in commit messages.', rubric: [{ criterion: 'The commit message has no emoji' }], checks: [] };

describe('a draft from a promoted cluster', () => {
  it("adds the cluster's promoted mode to lineage.modes; an unpromoted cluster adds none", async () => {
    env = tempPorts(() => new Date('2026-12-02T12:00:00Z'));
    server = await startScriptedModelServer(() => reply.tool(DRAFT_TOOL, CASE));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'drafter' });
    await storeReport(env.ports, 'r-1', 'It put 🎉 in every commit message.');
    await storeReport(env.ports, 'r-2', 'Commit messages full of emojis again.');
    const promoted = cluster('cl-aaaaaaaaaaaa', [{ signalKey: 'report:r-1' }, { signalKey: 'report:r-2' }]);
    const plain = cluster('cl-bbbbbbbbbbbb', [{ signalKey: 'report:r-1' }]);
    await env.ports.records.putMany([clusterRecord.encode(promoted), clusterRecord.encode(plain)]);
    await promoteCluster(env.ports, promoted.id, { id: 'emoji-commits', name: 'Emojis in commits', definition: 'Puts emojis in commit messages.', promotedBy: 'ana', examples: ['🎉 in commits'], membersHash: promoted.membersHash });

    const fromPromoted = await draftEvalCase(env.ports, model, { fromCluster: promoted.id });
    expect(fromPromoted.lineage).toMatchObject({ clusterIds: [promoted.id], reportIds: ['r-1', 'r-2'] });
    expect(fromPromoted.lineage.modes).toContain('emoji-commits');
    // The drafter is told the mode too.
    expect(JSON.stringify(server.chatRequests()[0]!.body['messages'])).toContain('Failure modes: emoji-commits');

    const fromPlain = await draftEvalCase(env.ports, model, { fromCluster: plain.id });
    expect(fromPlain.lineage.modes).not.toContain('emoji-commits');
  });
});
