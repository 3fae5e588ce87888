/**
 * The classifier chain with a real trained local classifier and the OpenAI driver against the scripted model server
 * (real HTTP): local labels, judge labels with verified evidence, retries of malformed or unknown answers, the review
 * queue, human labels, consent, bad input, and redelivered events that must not count twice.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { classifySignal } from '../../lib/modes/classify-signal.ts';
import { classifyStoredEvent } from '../../lib/modes/consumers/classify-stored.ts';
import { fixedClassifier } from '../../lib/modes/current-classifier.ts';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { labelSignal } from '../../lib/modes/label-signal.ts';
import { listReviewQueue } from '../../lib/modes/list-review-queue.ts';
import { listModeExamples } from '../../lib/modes/list-mode-examples.ts';
import { queryFailureModes } from '../../lib/modes/query-failure-modes.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { readLabel } from '../../lib/modes/write-label.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type Script, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { alwaysUnsure, defaultModel, storedEventBody, storeFeedback, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void };
let servers: ScriptedModelServer[] = [];
beforeAll(() => {
  defaultModel();
}, 120_000);
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  env?.cleanup();
});

async function judgeFrom(script: Script) {
  const server = await startScriptedModelServer(script);
  servers.push(server);
  return { server, judge: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } }) };
}
const unsureDeps = (ports: LocalPorts, judge?: ReturnType<typeof openAiCompatibleModel>) => ({
  ports,
  classifier: fixedClassifier(alwaysUnsure(defaultModel())),
  ...(judge ? { judge } : {}),
});
const signal = async (ports: LocalPorts, id: string) => (await loadSignal(ports, 'feedback', id))!;
const COMMENT = 'I asked for a one-line null check and it rewrote the whole validation module.';

describe('the local classifier labels first', () => {
  it('keeps a confident local label without calling the judge', async () => {
    env = tempPorts();
    const { server, judge } = await judgeFrom([]);
    const candidates = [
      'Asked to fix one typo in the README, it reformatted every markdown file in the repo.',
      'It rewrote the whole file when I asked for a one-line fix',
      'I wanted a one-line null check; it added a whole validation layer and a new dependency.',
    ];
    const text = candidates.find((t) => !defaultModel().classify(t).escalate)!;
    expect(text).toBeDefined();
    const id = await storeFeedback(env.ports, { comment: text });
    const { outcome, label } = await classifySignal({ ports: env.ports, classifier: fixedClassifier(defaultModel()), judge }, await signal(env.ports, id));
    expect(outcome).toBe('local');
    expect(label.source).toBe('local');
    expect(label.modes.map((m) => m.mode)).toContain('scope-calibration');
    expect(label.taxonomyVersion).toBe(1);
    expect(label.classifierVersion).toBe(defaultModel().modelVersion);
    expect(server.chatRequests()).toHaveLength(0);
  });
});

describe('the LLM judge labels what the local classifier is unsure of', () => {
  it('stores modes, severity, a verified evidence span and the confidence', async () => {
    env = tempPorts();
    const { server, judge } = await judgeFrom([
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'medium' }], evidence: 'rewrote the whole validation module', evidenceSource: 'comment', confidence: 0.9 }),
    ]);
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('judge');
    expect(label.modes).toEqual([{ mode: 'scope-calibration', severity: 'medium' }]);
    expect(label.evidence).toEqual({ text: 'rewrote the whole validation module', source: 'comment' });
    expect(label.confidence).toBe(0.9);
    expect(label.judgeModel).toContain('judge');
    const request = server.chatRequests()[0]!.body;
    expect(JSON.stringify(request.tools)).toContain('"enum":["complex-instruction-following"');
    expect(JSON.stringify(request.messages)).toContain(COMMENT);
    // A consented judge label becomes training data.
    expect(await env.ports.records.get(modeKeys.training(label.signalKey).pk, 'EXAMPLE')).toMatchObject({ labelSource: 'judge', modes: ['scope-calibration'] });
  });

  it('rejects an unknown mode and asks again with the reason', async () => {
    env = tempPorts();
    const { server, judge } = await judgeFrom([
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'laziness', severity: 'high' }], evidence: 'rewrote', evidenceSource: 'comment', confidence: 0.9 }),
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'high' }], evidence: 'rewrote the whole', evidenceSource: 'comment', confidence: 0.8 }),
    ]);
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('judge');
    expect(label.modes.map((m) => m.mode)).toEqual(['scope-calibration']);
    expect(label.judgeAttempts).toBe(2);
    expect(JSON.stringify(server.chatRequests()[1]!.body.messages)).toContain('unknown mode(s) laziness');
  });

  it('refuses evidence that does not occur in the comment', async () => {
    env = tempPorts();
    const { judge } = await judgeFrom(() =>
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'communication', severity: 'low' }], evidence: 'it wrote an essay', evidenceSource: 'comment', confidence: 0.95 }),
    );
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('review');
    expect(label.review?.reason).toBe('judge-evidence-not-found');
  });

  it('retries malformed JSON a bounded number of times, then sends the signal to review, never losing it', async () => {
    env = tempPorts();
    const { server, judge } = await judgeFrom(() => reply.tool(JUDGE_TOOL, '{"modes": [{"mode": "scope-calibration", '));
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('review');
    expect(server.chatRequests()).toHaveLength(3);
    expect(label.review?.reason).toBe('judge-malformed');
    expect(label.source).toBe('local'); // the best guess so far is kept
    const queue = await listReviewQueue(env.ports, {});
    expect(queue.items.map((i) => i.id)).toEqual([`feedback:${id}`]);
    expect(queue.items[0]).toMatchObject({ reason: 'judge-malformed', status: 'pending' });
    // Counted, even while in review.
    const r = await queryFailureModes(env.ports, { model: 'ckpt-a' });
    expect(r.checkpoints[0]!.totals.signals).toBe(1);
    // No training example from an unsettled label.
    expect(await env.ports.records.get(modeKeys.training(`feedback:${id}`).pk, 'EXAMPLE')).toBeUndefined();
  });

  it('sends a low-confidence judge answer to review', async () => {
    env = tempPorts();
    const { judge } = await judgeFrom([
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'misunderstood-instructions', severity: 'low' }], evidence: 'null check', evidenceSource: 'comment', confidence: 0.3 }),
    ]);
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('review');
    expect(label.source).toBe('judge');
    expect(label.review?.reason).toBe('judge-low-confidence');
  });

  it('without a judge model, an unsure label goes to review and says why', async () => {
    env = tempPorts();
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports), await signal(env.ports, id));
    expect(outcome).toBe('review');
    expect(label.review?.detail).toContain('FLYWHEEL_JUDGE_MODEL');
  });

  it('fails the delivery (to be retried, then dead-lettered) when the judge endpoint is down', async () => {
    env = tempPorts();
    const { judge } = await judgeFrom(() => reply.error(503));
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    await expect(classifyStoredEvent(unsureDeps(env.ports, judge), storedEventBody([id]))).rejects.toThrow(/unavailable/);
    expect(await readLabel(env.ports, `feedback:${id}`)).toBeUndefined();
  });
});

describe('trajectories and reports', () => {
  it('judges a thumbs-down without a comment on its trajectory, quoting it', async () => {
    env = tempPorts();
    await env.ports.blobs.put('trajectories/feedback/t1.json', JSON.stringify({ steps: [{ message: 'Running npm install (the repo uses pnpm)' }] }));
    const { server, judge } = await judgeFrom([
      reply.tool(JUDGE_TOOL, { modes: [{ mode: 'complex-instruction-following', severity: 'medium' }], evidence: 'Running npm install', evidenceSource: 'trajectory', confidence: 0.8 }),
    ]);
    const id = await storeFeedback(env.ports, { kind: 'rating', rating: 'down', trajectory: { blobKey: 'trajectories/feedback/t1.json' } });
    const { outcome, label } = await classifySignal(unsureDeps(env.ports, judge), await signal(env.ports, id));
    expect(outcome).toBe('judge');
    expect(label.evidence).toEqual({ text: 'Running npm install', source: 'trajectory' });
    expect(JSON.stringify(server.chatRequests()[0]!.body.messages)).toContain('the repo uses pnpm');
  });

  it('classifies reports named by report.stored', async () => {
    env = tempPorts();
    await env.ports.records.put({ pk: 'REPORT#r-9', sk: 'REPORT', reportId: 'r-9', title: 'Reformats unrelated files', body: 'Asked to fix one typo in the README, it reformatted every markdown file in the repo.', model: 'ckpt-a', severity: 'high', receivedAt: new Date().toISOString(), trainingConsent: false });
    const r = await classifyStoredEvent({ ports: env.ports, classifier: fixedClassifier(defaultModel()) }, storedEventBody(['r-9'], 'report.stored'));
    expect(r.classified).toBe(1);
    const q = await queryFailureModes(env.ports, { model: 'ckpt-a' });
    expect(q.checkpoints[0]!.totals.reports).toBe(1);
  });
});

describe('human labels', () => {
  it('override the chain, keep who and when, resolve the review item and feed retraining only with consent', async () => {
    env = tempPorts();
    const consented = await storeFeedback(env.ports, { comment: COMMENT });
    const private_ = await storeFeedback(env.ports, { comment: COMMENT, trainingConsent: false });
    for (const id of [consented, private_]) await classifySignal(unsureDeps(env.ports), await signal(env.ports, id));
    expect((await listReviewQueue(env.ports, {})).items).toHaveLength(2);
    for (const id of [consented, private_]) {
      const label = await labelSignal(env.ports, `feedback:${id}`, { modes: ['complex-instruction-following'], labeller: 'ana@example.com', severity: 'high' });
      expect(label).toMatchObject({ source: 'human', labelledBy: 'ana@example.com', confidence: 1 });
    }
    expect((await listReviewQueue(env.ports, {})).items).toHaveLength(0);
    const done = await listReviewQueue(env.ports, { status: 'done' });
    expect(done.items.map((i) => i.resolvedBy)).toEqual(['ana@example.com', 'ana@example.com']);
    expect(await env.ports.records.get(modeKeys.training(`feedback:${consented}`).pk, 'EXAMPLE')).toMatchObject({ labelSource: 'human', labelledBy: 'ana@example.com' });
    expect(await env.ports.records.get(modeKeys.training(`feedback:${private_}`).pk, 'EXAMPLE')).toBeUndefined();
    const r = await queryFailureModes(env.ports, { model: 'ckpt-a' });
    expect(r.checkpoints[0]!.modes.find((m) => m.mode === 'complex-instruction-following')!.count).toBe(2);
    const ex = await listModeExamples(env.ports, 'complex-instruction-following', {});
    expect(ex.items).toHaveLength(2);
    // A redelivery does not undo a human label.
    await classifyStoredEvent(unsureDeps(env.ports), storedEventBody([consented]));
    expect((await readLabel(env.ports, `feedback:${consented}`))!.source).toBe('human');
  });

  it('refuse a mode the taxonomy does not have, and an unknown signal', async () => {
    env = tempPorts();
    const id = await storeFeedback(env.ports, { comment: COMMENT });
    await expect(labelSignal(env.ports, `feedback:${id}`, { modes: ['laziness'], labeller: 'x' })).rejects.toThrow(/Unknown mode/);
    await expect(labelSignal(env.ports, 'feedback:nope', { modes: ['other'], labeller: 'x' })).rejects.toThrow(/No stored signal/);
  });
});

describe('bad input', () => {
  it('counts bare ratings, empty, non-text and unreadable comments without a mode; reads only the start of a huge one', async () => {
    env = tempPorts();
    const deps = { ports: env.ports, classifier: fixedClassifier(defaultModel()) };
    const cases = {
      bare: await storeFeedback(env.ports, { kind: 'rating', rating: 'up' }),
      blank: await storeFeedback(env.ports, { comment: '   \n\t ' }),
      number: await storeFeedback(env.ports, { comment: 12345 }),
      emoji: await storeFeedback(env.ports, { comment: '🙄🙄🙄 ¯\\_(ツ)_/¯' }),
      huge: await storeFeedback(env.ports, { comment: `It ignored the AGENTS.md rule to use pnpm. ${'x'.repeat(300_000)}` }),
    };
    const out: Record<string, Awaited<ReturnType<typeof classifySignal>>> = {};
    for (const [k, id] of Object.entries(cases)) out[k] = await classifySignal(deps, await signal(env.ports, id));
    expect(out.bare!.label).toMatchObject({ source: 'none', modes: [], unclassifiable: 'no-text' });
    expect(out.blank!.label).toMatchObject({ source: 'none', modes: [] });
    expect(out.number!.label).toMatchObject({ source: 'none', unclassifiable: 'non-text' });
    expect(out.emoji!.label.modes).toEqual([]);
    expect(out.huge!.label.source).not.toBe('none');
    const r = await queryFailureModes(env.ports, { model: 'ckpt-a' });
    expect(r.checkpoints[0]!.totals.signals).toBe(5);
    expect(r.checkpoints[0]!.totals.ratings.up).toBe(1);
  });
});

describe('counts', () => {
  it('a redelivered event does not double count', async () => {
    env = tempPorts();
    const ids = [await storeFeedback(env.ports, { comment: COMMENT }), await storeFeedback(env.ports, { kind: 'outcome', outcome: 'reverted', rating: 'none' })];
    const deps = { ports: env.ports, classifier: fixedClassifier(defaultModel()) };
    for (let i = 0; i < 3; i++) await classifyStoredEvent(deps, storedEventBody(ids));
    const r = await queryFailureModes(env.ports, { model: 'ckpt-a' });
    expect(r.checkpoints[0]!.totals.signals).toBe(2);
    expect(r.checkpoints[0]!.totals.outcomes.reverted).toBe(1);
    const counted = r.checkpoints[0]!.modes.reduce((s, m) => s + m.count, 0);
    const label = (await readLabel(env.ports, `feedback:${ids[0]}`))!;
    expect(counted).toBe(label.modes.length);
  });

  it('compares two checkpoints side by side with rates per thousand turns and the trend', async () => {
    const now = new Date('2026-12-02T12:00:00Z');
    env = tempPorts(() => now);
    const deps = { ports: env.ports, classifier: fixedClassifier(defaultModel()) };
    const day = (d: number) => new Date(now.getTime() - d * 86_400_000).toISOString();
    const ids: string[] = [];
    // Checkpoint a: two human-labelled scope complaints this week, one the week before, plus two happy turns.
    for (const [model, at, comment] of [
      ['ckpt-a', day(1), 'too much'],
      ['ckpt-a', day(2), 'way too much'],
      ['ckpt-a', day(9), 'did far too much'],
      ['ckpt-b', day(1), 'too much as well'],
    ] as const) {
      const id = await storeFeedback(env.ports, { model, receivedAt: at, comment });
      await classifyStoredEvent(deps, storedEventBody([id]));
      await labelSignal(env.ports, `feedback:${id}`, { modes: ['scope-calibration'], labeller: 'qa' });
      ids.push(id);
    }
    for (const model of ['ckpt-a', 'ckpt-a', 'ckpt-b']) {
      const id = await storeFeedback(env.ports, { model, kind: 'rating', rating: 'up', receivedAt: day(1) });
      await classifyStoredEvent(deps, storedEventBody([id]));
    }
    const r = await queryFailureModes(env.ports, { model: 'ckpt-a', compare: 'ckpt-b' });
    const [a, b] = r.checkpoints;
    expect(a!.model).toBe('ckpt-a');
    expect(a!.totals.turns).toBe(4);
    const scopeA = a!.modes.find((m) => m.mode === 'scope-calibration')!;
    expect(scopeA).toMatchObject({ count: 2, perThousandTurns: 500, previousCount: 1, previousPerThousandTurns: 1000, trend: 'down' });
    expect(a!.totals.ratings.up).toBe(2);
    expect(a!.upPerThousandTurns).toBe(500);
    expect(b!.modes.find((m) => m.mode === 'scope-calibration')).toMatchObject({ count: 1, perThousandTurns: 500, trend: 'new' });
    const row = r.comparison!.find((c) => c.mode === 'scope-calibration')!;
    expect(row.perThousandTurns).toEqual({ 'ckpt-a': 500, 'ckpt-b': 500 });
    expect(r.turnsBasis).toContain('distinct turns');
    await expect(queryFailureModes(env.ports, { model: 'a', since: '2026-01-01T00:00:00Z', until: '2026-12-01T00:00:00Z' })).rejects.toThrow(/Invalid query/);
  });
});

