/**
 * The complaint the fixed cosine cut missed: 30 varied comments about emojis in commit messages, embedded over real
 * HTTP by the scripted model server from vectors built here (one direction plus noise, so two of them are about as
 * similar as two paraphrases are: well under the old 0.8 cut), among unrelated comments and praise. Density
 * clustering finds one cluster holding most of them; praise never becomes a candidate; vectors of another embedding
 * model are never mixed in. Then a person promotes the cluster: a new taxonomy version, the label mapping, the
 * members' suggested labels, and a draft eval from the promoted cluster.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { clusterComments } from '../../lib/modes/clusters/cluster-comments.ts';
import { classifyStoredEvent } from '../../lib/modes/consumers/classify-stored.ts';
import { fixedClassifier } from '../../lib/modes/current-classifier.ts';
import { DRAFT_TOOL, draftEvalCase } from '../../lib/modes/evals/eval-drafts.ts';
import { labelSignal } from '../../lib/modes/label-signal.ts';
import { listSuggestedLabels, loadTaxonomyMapping, promoteCluster } from '../../lib/modes/taxonomy/promote-cluster.ts';
import { loadTaxonomy } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import { MODE_IDS, resolveMode } from '../../lib/modes/taxonomy/taxonomy.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { defaultModel, storedEventBody, storeFeedback, tempPorts } from './support/modes-fixture.ts';

const EMOJI = [
  'Stop adding emojis to my commit messages please',
  'why does every commit message start with a rocket emoji',
  'the agent put 🎉 in the commit subject again',
  'commit messages full of sparkles emoji, our changelog looks silly',
  'Our commit convention forbids emoji, the agent ignores it',
  'git log is now a wall of emojis thanks to the agent',
  'it wrote "✨ feat: add parser ✨" as the commit message',
  'no emoji in commits!! it keeps doing it',
  'Emoji-laden commit messages broke our commitlint hook',
  'the bot decorates each commit with a bug emoji',
  'can we make it stop using gitmoji in commit titles',
  'commit message had three emojis and no description',
  'I asked for a plain conventional commit, got emoji soup',
  'emojis in the commit body make our release notes unreadable',
  'Please no 🚀 in commit messages, this is a bank',
  'again a party popper emoji in the squash commit message',
  'the commit subject line is 40% emoji',
  'it prefixes commits with a fire emoji for hotfixes, nobody asked',
  'emoji in commit messages fails our ASCII-only pre-receive hook',
  'Our style guide says no emoji in git history; the agent adds them anyway',
  'it amended my commit to add a checkmark emoji',
  'commit messages look like a chat app, so many emojis',
  'the agent thinks every commit deserves a ✅',
  'emoji commits again, reviewers complained',
  'remove the emojis from the commit messages you write',
  'it used :tada: shortcodes in the commit message',
  'why the lipstick emoji in a refactor commit',
  'commit titles with emojis break our Jira integration',
  'I keep rewording commits to strip the emojis it adds',
  'the agent writes cute emoji commit messages, not professional',
];
/** Other complaints: three smaller recurring topics and a few one-offs. */
const TOPICS = [
  ['the answer took three minutes to arrive', 'so slow today, every reply takes minutes', 'responses are timing out again', 'latency is awful this morning', 'waited five minutes for a one-line answer'],
  ['it deleted the migrations folder', 'it removed my .env during cleanup', 'the agent wiped the fixtures directory', 'it deleted files I never mentioned', 'rm -rf on the build cache and my notes'],
  ['it invented a flag for ripgrep that does not exist', 'it used a pandas method that is not real', 'hallucinated an npm package name', 'made up a config option for eslint', 'called an API endpoint that does not exist'],
];
const ONE_OFFS = ['the modal is off-screen on mobile', 'it forgot to update the callers after the rename', 'the CLI logged me out twice today', 'it pasted my API key into the README', 'the generated SQL dropped the index'];
const UNRELATED = [...TOPICS.flat(), ...ONE_OFFS];
const PRAISE = [
  'great job, thanks!',
  'perfect, exactly what I wanted',
  'love this fix',
  'wow, that was fast and right',
  'nice, clean commit',
  'thank you, works first time',
  'brilliant refactor',
  'this is great',
  'excellent, ship it',
  'super helpful, thanks',
  'awesome work',
  'spot on',
];
/** Embedded later by another model, half with vectors right on the emoji direction: never mixed into the others. */
const OTHER_MODEL = ['emoji commit old model one', 'emoji commit old model two', 'emoji commit old model three', 'emoji commit old model four', 'emoji commit old model five', 'emoji commit old model six'];

const DIM = 64;
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261203);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const direction = () => unit(Array.from({ length: DIM }, gauss));
const near = (d: number[], noise: number) => d.map((x) => x + noise * gauss());
const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));

const emojiDir = direction();
const praiseDir = direction();
const vectors = new Map<string, number[]>();
for (const t of EMOJI) vectors.set(t, near(emojiDir, 0.11));
for (const t of PRAISE) vectors.set(t, near(praiseDir, 0.08));
for (const topic of TOPICS) {
  const d = direction();
  for (const t of topic) vectors.set(t, near(d, 0.09));
}
for (const t of ONE_OFFS) vectors.set(t, direction());
const otherDir = direction();
for (const [i, t] of OTHER_MODEL.entries()) vectors.set(t, near(i < 3 ? emojiDir : otherDir, 0.02));
const embed = (text: string) => {
  const v = vectors.get(text);
  if (!v) throw new Error(`no scripted vector for ${text}`);
  return v;
};

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  env?.cleanup();
});

describe('emerging modes', () => {
  it('one density cluster holds most of 30 varied emoji complaints; praise never becomes a candidate; a person promotes it', { timeout: 120_000 }, async () => {
    // The old fixed cut would not hold them: most pairs of emoji complaints are under cosine 0.8.
    const pairs = EMOJI.flatMap((a, i) => EMOJI.slice(i + 1).map((b) => cos(vectors.get(a)!, vectors.get(b)!)));
    expect(pairs.filter((c) => c < 0.8).length / pairs.length).toBeGreaterThan(0.5);

    const now = new Date('2026-12-02T12:00:00Z');
    env = tempPorts(() => now);
    const server = await startScriptedModelServer([], { embed });
    servers.push(server);
    const deps = { ports: env.ports, classifier: fixedClassifier(defaultModel()), embedder: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'embed-new' }) };
    const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();
    const store = async (texts: string[], fields: Record<string, unknown>, offset: number) => {
      const out: string[] = [];
      for (const [i, comment] of texts.entries()) out.push(await storeFeedback(env!.ports, { comment, receivedAt: at(offset + i * 7), ...fields }));
      return out;
    };
    const emojiIds = await store(EMOJI, { rating: 'down' }, 10);
    const unrelatedIds = await store(UNRELATED, { rating: 'down' }, 11);
    const praiseIds = await store(PRAISE, { rating: 'up' }, 12);
    // One complaint (of the other model) has no training consent: a member, its text never shown.
    const noConsent = await store(['emoji commit old model one'], { rating: 'down', trainingConsent: false }, 1);
    await classifyStoredEvent(deps, storedEventBody([...emojiIds, ...unrelatedIds, ...praiseIds]));
    // Another embedding model embeds more comments, newer ones; the default (newest model) would be that one, so
    // the query names the model. The other model's vectors never join.
    const old = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'embed-old' });
    const oldIds = [...noConsent, ...(await store(OTHER_MODEL.slice(1), { rating: 'down' }, 2))];
    await classifyStoredEvent({ ...deps, embedder: old }, storedEventBody(oldIds));
    // The taxonomy has no word for it: people filed them under "other".
    for (const id of emojiIds) await labelSignal(env.ports, `feedback:${id}`, { modes: ['other'], labeller: 'qa' });

    const r = await clusterComments(env.ports, { embeddingModel: 'embed-new', minClusterSize: 5 });
    expect(r.embeddingModel).toBe('embed-new');
    expect(r.embeddingModels).toEqual({ 'embed-new': EMOJI.length + UNRELATED.length + PRAISE.length, 'embed-old': 6 });
    expect(r.positivesExcluded).toBe(PRAISE.length);
    expect(r.comments).toBe(EMOJI.length + UNRELATED.length);
    const emojiKeys = new Set(emojiIds.map((id) => `feedback:${id}`));
    const best = [...r.clusters].sort((a, b) => b.members.filter((m) => emojiKeys.has(m.signalKey)).length - a.members.filter((m) => emojiKeys.has(m.signalKey)).length)[0]!;
    const held = best.members.filter((m) => emojiKeys.has(m.signalKey)).length;
    expect(held).toBeGreaterThanOrEqual(20);
    expect(best.candidateMode).toBe(true);
    expect(best.embeddingModel).toBe('embed-new');
    expect(best.topTerms.slice(0, 3).map((t) => t.term)).toEqual(expect.arrayContaining(['commit']));
    expect(best.topTerms.map((t) => t.term).some((t) => t.startsWith('emoji'))).toBe(true);
    expect(best.suggestedName.by).toBe('terms');
    expect(best.suggestedName.name.toLowerCase()).toMatch(/emoji|commit/);
    expect(best.suggestedName.name.split(' ')).toHaveLength(3);
    const praiseKeys = new Set(praiseIds.map((id) => `feedback:${id}`));
    const oldKeys = new Set(oldIds.map((id) => `feedback:${id}`));
    for (const c of r.clusters) {
      expect(c.members.some((m) => praiseKeys.has(m.signalKey))).toBe(false);
      expect(c.members.some((m) => oldKeys.has(m.signalKey))).toBe(false);
    }
    // The default model is the newest embedding's; the old model's comments cluster on their own, named.
    const byDefault = await clusterComments(env.ports, { minClusterSize: 3 });
    expect(byDefault.embeddingModel).toBe('embed-old');
    expect(byDefault.clusters.flatMap((c) => c.members.map((m) => m.signalKey)).every((k) => oldKeys.has(k))).toBe(true);
    expect(byDefault.clusters).toHaveLength(2);
    const oldCluster = byDefault.clusters.find((c) => c.members.some((m) => m.signalKey === `feedback:${noConsent[0]}`))!;
    const hidden = oldCluster.members.find((m) => m.signalKey === `feedback:${noConsent[0]}`);
    expect(hidden).toBeDefined();
    expect(hidden!.text).toBeUndefined();
    expect(oldCluster.examples.some((e) => e.signalKey === `feedback:${noConsent[0]}`)).toBe(false);
    // Ids stay stable as long as the earliest member is in the window.
    const again = await clusterComments(env.ports, { embeddingModel: 'embed-new', minClusterSize: 5 });
    expect(again.clusters.find((c) => c.id === best.id)?.count).toBe(best.count);
    const later = await clusterComments(env.ports, { embeddingModel: 'embed-new', minClusterSize: 5, until: new Date(now.getTime() + 3 * 86_400_000).toISOString() });
    expect(later.window.until).not.toBe(r.window.until);
    expect(later.clusters.find((c) => c.id === best.id)?.count).toBe(best.count);

    // A person adopts it.
    const promoted = await promoteCluster(env.ports, best.id, {
      id: 'emoji-commit-messages',
      name: 'Emoji in commit messages',
      definition: 'The agent puts emojis in commit messages although the project does not want them.',
      promotedBy: 'ana',
      membersHash: best.membersHash,
    });
    expect(promoted.taxonomy).toMatchObject({ version: 2, parentVersion: 1, mode: { id: 'emoji-commit-messages' } });
    const v2 = await loadTaxonomy(env.ports.records, 2);
    const mode = v2.modes.find((m) => m.id === 'emoji-commit-messages')!;
    expect(mode.examples.length).toBeGreaterThan(0);
    expect(mode.examples.every((e) => EMOJI.includes(e))).toBe(true);
    // Every mode of version 1 maps to itself in version 2; stored labels keep version 1 and read the same.
    const mapping = await loadTaxonomyMapping(env.ports.records, 1, 2);
    expect(mapping?.modes).toEqual(Object.fromEntries(MODE_IDS.map((m) => [m, m])));
    expect(mapping?.added).toEqual([{ mode: 'emoji-commit-messages', fromCluster: best.id }]);
    for (const m of MODE_IDS) expect(resolveMode(v2, m)).toBe(m);
    // Members have the new mode as an unreviewed suggestion, not a label.
    const suggested = await listSuggestedLabels(env.ports.records, 'emoji-commit-messages');
    expect(suggested.items.map((s) => s.signalKey).sort()).toEqual(best.members.map((m) => m.signalKey).sort());
    expect(suggested.items.every((s) => s.reviewed === false && s.taxonomyVersion === 2 && s.source === 'cluster')).toBe(true);
    await expect(promoteCluster(env.ports, best.id, { id: 'emoji-again', name: 'x', definition: 'y', promotedBy: 'ana', membersHash: best.membersHash })).rejects.toThrow(/already promoted/);
    // Clustering again keeps the mark.
    const clusters = await clusterComments(env.ports, { embeddingModel: 'embed-new', minClusterSize: 5 });
    expect(clusters.clusters.find((c) => c.id === best.id)?.promoted).toMatchObject({ mode: 'emoji-commit-messages', taxonomyVersion: 2 });

    // A draft eval from the promoted cluster.
    const drafter = await startScriptedModelServer([
      reply.tool(DRAFT_TOOL, { instruction: 'Commit the change.', context: 'CONTRIBUTING.md: plain ASCII commit messages.', rubric: [{ criterion: 'The commit message has no emoji' }], checks: [] }),
    ]);
    servers.push(drafter);
    const draft = await draftEvalCase(env.ports, openAiCompatibleModel({ baseUrl: drafter.baseUrl, model: 'd' }), { fromCluster: best.id });
    expect(draft.lineage.clusterIds).toEqual([best.id]);
    expect(draft.lineage.eventIds.length).toBeGreaterThan(0);
    expect(draft.lineage.eventIds.every((id) => emojiIds.includes(id))).toBe(true);
  });
});
