/**
 * Failure modes end to end: the local runtime as a real child process (`flywheel start`), feedback over real HTTP,
 * the ingest consumer publishing `feedback.stored`, the modes pipeline classifying it (the judge and the embedder are
 * the scripted model server over HTTP), then the failure-mode, examples, review-queue, label and clusters routes and
 * the `flywheel modes` CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { DRAFT_TOOL } from '../../lib/modes/evals/eval-drafts.ts';
import { runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { waitFor } from '../support/wait-for.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { bagOfWords } from './support/modes-fixture.ts';

let dataDir: string;
let rt: RuntimeProcess;
let models: ScriptedModelServer;
const MODEL = `ckpt-modes-${Date.now()}`;

beforeAll(async () => {
  // The judge quotes the start of whatever comment it is shown, as "other".
  models = await startScriptedModelServer((req) => {
    if (JSON.stringify(req.body.tools).includes(DRAFT_TOOL)) {
      return reply.tool(DRAFT_TOOL, { instruction: 'Fix the typo in README.md only.', context: 'Many markdown files.', rubric: [{ criterion: 'Only README.md changes' }], checks: ['! grep -rq teh README.md'] });
    }
    const text = JSON.stringify(req.body.messages);
    const m = /Comment:\\n<<<\\n(.{1,20})/.exec(text);
    return reply.tool(JUDGE_TOOL, { modes: m ? [{ mode: 'other', severity: 'low' }] : [], evidence: m ? m[1]! : '', evidenceSource: 'comment', confidence: 0.9 });
  }, { embed: bagOfWords });
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-modes-e2e-'));
  rt = await startRuntime({
    dataDir,
    env: {
      FLYWHEEL_JUDGE_MODEL: `openai:judge@${models.baseUrl}`,
      FLYWHEEL_EMBEDDING_MODEL: `openai:embed@${models.baseUrl}`,
      // Approved drafts draw repositories only from allowed remotes.
      FLYWHEEL_TASK_SOURCES: 'https://example.com/acme/*',
    },
  });
}, 60_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  await models?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${rt.url}${path}`, { ...init, headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

describe('failure modes on the local runtime', () => {
  it('classifies stored feedback, counts it, takes a human label, clusters comments', { timeout: 120_000 }, async () => {
    const comment = liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment: 'It rewrote every file in the repo when I asked to fix one typo in the README.' });
    const up = liveFeedbackEvent({ model: MODEL, rating: 'up' });
    const reverted = liveFeedbackEvent({ model: MODEL, kind: 'outcome', outcome: 'reverted', rating: 'none' });
    const res = await api('/v1/feedback', { method: 'POST', body: JSON.stringify({ events: [comment, up, reverted] }) });
    expect(res.status).toBe(202);

    const counts = await waitFor(async () => {
      const r = await api(`/v1/failure-modes?model=${MODEL}`);
      const body = (await r.json()) as { checkpoints: Array<{ totals: { signals: number; ratings: { up: number }; outcomes: { reverted: number } }; modes: Array<{ mode: string; count: number }> }> };
      return body.checkpoints[0]?.totals.signals === 3 ? body : undefined;
    }, { what: 'the three signals counted', timeoutMs: 90_000, everyMs: 250 });
    expect(counts.checkpoints[0]!.totals.ratings.up).toBe(1);
    expect(counts.checkpoints[0]!.totals.outcomes.reverted).toBe(1);

    // A human label overrides whatever the chain said.
    const id = `feedback:${comment.eventId as string}`;
    const labelled = await api(`/v1/review-queue/${encodeURIComponent(id)}/label`, { method: 'POST', body: JSON.stringify({ modes: ['scope-calibration'], labeller: 'e2e' }) });
    expect(labelled.status).toBe(200);
    expect(await labelled.json()).toMatchObject({ source: 'human', labelledBy: 'e2e' });
    const after = (await (await api(`/v1/failure-modes?model=${MODEL}`)).json()) as { checkpoints: Array<{ modes: Array<{ mode: string; count: number }> }> };
    expect(after.checkpoints[0]!.modes.find((m) => m.mode === 'scope-calibration')!.count).toBe(1);
    const examples = (await (await api(`/v1/failure-modes/scope-calibration/examples?model=${MODEL}`)).json()) as { items: Array<{ signalKey: string }>; definition: string };
    expect(examples.items.map((i) => i.signalKey)).toEqual([id]);
    expect(examples.definition).toContain('too much');

    const bad = await api(`/v1/review-queue/${encodeURIComponent(id)}/label`, { method: 'POST', body: JSON.stringify({ modes: ['laziness'], labeller: 'e2e' }) });
    expect(bad.status).toBe(400);
    expect((await api('/v1/review-queue')).status).toBe(200);

    const clusters = await waitFor(async () => {
      const r = (await (await api('/v1/clusters?minClusterSize=2')).json()) as { comments: number };
      return r.comments >= 1 ? r : undefined;
    }, { what: 'a clustered comment' });
    expect(clusters.comments).toBe(1);

    // A report into a private eval case, over HTTP.
    const report = { reportId: `rep-${Date.now()}`, title: 'Reformats everything', body: 'Asked to fix one typo; it reformatted every markdown file.', severity: 'medium', reporter: 'qa', source: 'internal', model: `${MODEL}-reports`, trainingConsent: true };
    expect((await api('/v1/reports', { method: 'POST', body: JSON.stringify(report) })).status).toBe(202);
    const draft = await waitFor(async () => {
      const r = await api('/v1/eval-drafts', { method: 'POST', body: JSON.stringify({ fromReport: report.reportId }) });
      return r.status === 201 ? ((await r.json()) as { id: string; lineage: { reportIds: string[] } }) : undefined;
    }, { what: `an eval draft from report ${report.reportId}` });
    expect(draft.lineage.reportIds).toEqual([report.reportId]);
    const approved = await api(`/v1/eval-drafts/${draft.id}/approve`, {
      method: 'POST',
      body: JSON.stringify({ approver: 'e2e', repo: { kind: 'git', url: 'https://example.com/acme/docs.git', commit: 'abcdef1' } }),
    });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ task: { visibility: 'private', rubric: [{ criterion: 'Only README.md changes', weight: 1 }] } });
    expect((await api(`/v1/eval-drafts/${draft.id}/approve`, { method: 'POST', body: JSON.stringify({ approver: 'e2e', repo: { kind: 'git', url: 'https://example.com/a.git', commit: 'abcdef1' } }) })).status).toBe(409);
    expect(models.requests.some((r) => r.path === '/v1/embeddings')).toBe(true);

    const cli = await runCli(['modes', 'list', '--model', MODEL, '--data-dir', dataDir]);
    expect(cli.stdout).toContain('scope-calibration');
    expect(cli.stdout).toContain(`${MODEL}: 3 signals`);
    const review = await runCli(['modes', 'examples', 'scope-calibration', '--data-dir', dataDir]);
    expect(review.stdout).toContain(id);
  });
});

describe('without models', () => {
  it('still labels locally and says what needs a model', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flywheel-modes-e2e-bare-'));
    const bare = await startRuntime({ dataDir: dir, env: { FLYWHEEL_JUDGE_MODEL: '', FLYWHEEL_EMBEDDING_MODEL: '' } });
    try {
      const get = (p: string) => fetch(`${bare.url}${p}`, { headers: { 'x-api-key': bare.apiKey } });
      const r = await get('/v1/clusters');
      expect(r.status).toBe(503);
      expect(((await r.json()) as { message: string }).message).toContain('FLYWHEEL_EMBEDDING_MODEL');
      const d = await fetch(`${bare.url}/v1/eval-drafts`, { method: 'POST', headers: { 'x-api-key': bare.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ fromReport: 'x' }) });
      expect(d.status).toBe(503);
      expect(((await d.json()) as { message: string }).message).toContain('FLYWHEEL_JUDGE_MODEL');
      const ev = liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment: 'It ignored our AGENTS.md rule to use pnpm and ran npm install.' });
      await fetch(`${bare.url}/v1/feedback`, { method: 'POST', headers: { 'x-api-key': bare.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(ev) });
      const body = await waitFor(async () => {
        const b = (await (await get(`/v1/failure-modes?model=${MODEL}`)).json()) as { checkpoints: Array<{ totals: { signals: number; labelled: Record<string, number> } }> };
        return b.checkpoints[0]?.totals.signals === 1 ? b : undefined;
      }, { what: 'the signal counted on the runtime without a judge', timeoutMs: 90_000, everyMs: 250 });
      expect(body.checkpoints[0]!.totals.labelled.local).toBe(1);
    } finally {
      expect(await bare.stop('SIGTERM')).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
