/**
 * Clustering through the models port: the consumer embeds comments with the OpenAI driver against the scripted model
 * server's `/v1/embeddings` (a bag-of-words hash embedding, real HTTP), and a new recurring complaint that the
 * taxonomy does not explain surfaces as a density cluster (HDBSCAN) and a candidate mode with its count, trend,
 * examples, top terms and suggested name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { clusterComments } from '../../lib/modes/clusters/cluster-comments.ts';
import { classifyStoredEvent } from '../../lib/modes/consumers/classify-stored.ts';
import { fixedClassifier } from '../../lib/modes/current-classifier.ts';
import { labelSignal } from '../../lib/modes/label-signal.ts';
import { DRAFT_TOOL, draftEvalCase } from '../../lib/modes/evals/eval-drafts.ts';
import { NAME_TOOL } from '../../lib/modes/clusters/name-cluster.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { bagOfWords, defaultModel, storedEventBody, storeFeedback, tempPorts } from './support/modes-fixture.ts';


let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  env?.cleanup();
});

describe('clusters', () => {
  it('surface a new recurring complaint as a candidate mode, apart from complaints the modes explain', async () => {
    const now = new Date('2026-12-02T12:00:00Z');
    env = tempPorts(() => now);
    server = await startScriptedModelServer([], { embed: bagOfWords });
    const embedder = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'embed' });
    const deps = { ports: env.ports, classifier: fixedClassifier(defaultModel()), embedder };
    const at = (d: number) => new Date(now.getTime() - d * 3_600_000).toISOString();
    const recurring = [
      'the agent deleted my .env file again during cleanup',
      'again it deleted the .env file while cleaning the workspace',
      'cleanup deleted my .env file again, the agent lost all secrets',
      'the agent keeps deleting the .env file during cleanup',
    ];
    const explained = ['scope scope scope rewrote whole module', 'rewrote whole module scope scope'];
    const ids: string[] = [];
    for (const [i, c] of recurring.entries()) ids.push(await storeFeedback(env.ports, { comment: c, receivedAt: at(i + 1) }));
    const explainedIds: string[] = [];
    for (const [i, c] of explained.entries()) explainedIds.push(await storeFeedback(env.ports, { comment: c, receivedAt: at(i + 10) }));
    await classifyStoredEvent(deps, storedEventBody([...ids, ...explainedIds]));
    // The same event again embeds nothing twice.
    const before = server.requests.length;
    await classifyStoredEvent(deps, storedEventBody(ids));
    expect(server.requests.length).toBe(before);
    // The recurring complaint is labelled "other" by people; the explained one gets a real mode.
    for (const id of ids) await labelSignal(env.ports, `feedback:${id}`, { modes: ['other'], labeller: 'qa' });
    for (const id of explainedIds) await labelSignal(env.ports, `feedback:${id}`, { modes: ['scope-calibration'], labeller: 'qa' });
    const r = await clusterComments(env.ports, { minClusterSize: 2, minCount: 3 });
    expect(r.comments).toBe(6);
    expect(r.embeddingModel).toBe('embed');
    expect(r.algorithm.name).toBe('hdbscan');
    const env_ = r.clusters.find((c) => c.examples.some((e) => e.text.includes('.env')))!;
    expect(env_.count).toBe(4);
    expect(env_.candidateMode).toBe(true);
    expect(env_.modes).toEqual({ other: 4 });
    expect(env_.trend.last7Days).toBe(4);
    expect(env_.examples).toHaveLength(3);
    expect(env_.examples.every((e) => e.text.includes('.env'))).toBe(true);
    expect(env_.embeddingModel).toBe('embed');
    expect(env_.topTerms.map((t) => t.term)).toContain('env');
    expect(env_.suggestedName.name.toLowerCase()).toMatch(/env|cleanup|deleted/);
    expect(env_.members.map((m) => m.signalKey).sort()).toEqual(ids.map((i) => `feedback:${i}`).sort());
    const scope = r.clusters.find((c) => c.examples.some((e) => e.text.includes('module')));
    expect(scope?.count).toBe(2);
    expect(scope?.candidateMode).toBe(false);
    expect(scope?.examples.every((e) => !e.text.includes('.env'))).toBe(true);
    // Stable ids: the same window clusters to the same ids.
    const again = await clusterComments(env.ports, { minClusterSize: 2, minCount: 3 });
    expect(again.clusters.map((c) => c.id)).toEqual(r.clusters.map((c) => c.id));
    // The old cosine knob is gone: a query naming it is refused, naming the field.
    await expect(clusterComments(env.ports, { threshold: 0.5 })).rejects.toThrow(/Invalid query/);
    expect(server.requests.every((q) => q.path === '/v1/embeddings')).toBe(true);
    // With a judge model, candidates are also named by it; an invalid answer keeps the name from the terms.
    const namer = await startScriptedModelServer([reply.tool(NAME_TOOL, { name: 'Deletes .env files', id: 'env-file-deletion' })]);
    try {
      const named = await clusterComments(env.ports, { minClusterSize: 2, minCount: 3, suggestNames: 'model' }, { namer: openAiCompatibleModel({ baseUrl: namer.baseUrl, model: 'n' }) });
      expect(named.clusters.find((c) => c.id === env_.id)?.suggestedName).toEqual({ name: 'Deletes .env files', id: 'env-file-deletion', by: 'model' });
      expect(named.clusters.find((c) => c.id === scope!.id)?.suggestedName.by).toBe('terms');
      expect(namer.requests).toHaveLength(1);
      expect(JSON.stringify(namer.requests[0]!.body)).toContain('.env');
    } finally {
      await namer.close();
    }
    const badNamer = await startScriptedModelServer([reply.tool(NAME_TOOL, { name: 'x', id: 'Not Kebab' })]);
    try {
      const kept = await clusterComments(env.ports, { minClusterSize: 2, minCount: 3, suggestNames: 'model' }, { namer: openAiCompatibleModel({ baseUrl: badNamer.baseUrl, model: 'n' }) });
      expect(kept.clusters.find((c) => c.id === env_.id)?.suggestedName.by).toBe('terms');
    } finally {
      await badNamer.close();
    }
    // The candidate cluster becomes an eval draft whose lineage names the cluster and its events.
    const drafter = await startScriptedModelServer([
      reply.tool(DRAFT_TOOL, { instruction: 'Clean the workspace.', context: 'A .env file holds secrets.', rubric: [{ criterion: '.env is untouched' }], checks: ['test -f .env'] }),
    ]);
    try {
      const draft = await draftEvalCase(env.ports, openAiCompatibleModel({ baseUrl: drafter.baseUrl, model: 'd' }), { fromCluster: env_.id });
      expect(draft.lineage.clusterIds).toEqual([env_.id]);
      expect(draft.lineage.eventIds.sort()).toEqual([...ids].sort());
      expect(draft.lineage.modes).toEqual(['other']);
    } finally {
      await drafter.close();
    }
  });
});
