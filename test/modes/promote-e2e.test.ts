/**
 * Emerging modes on the local runtime (`flywheel start` as a child process, real HTTP): comments in, the modes
 * pipeline embeds them through the scripted model server, `GET /v1/clusters` finds density clusters (praise left
 * out), a person promotes one over the API and another with `flywheel modes promote-cluster`, a draft is made from a
 * promoted cluster; `flywheel feedback report` sends a report with a repository and commit; `modes list` shows
 * counts split by kind of label and `modes examples --model` lists a checkpoint's examples.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAFT_TOOL } from '../../lib/modes/evals/eval-drafts.ts';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { REPO_ROOT, runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { waitFor } from '../support/wait-for.ts';
import { bagOfWords } from './support/modes-fixture.ts';

let dataDir: string;
let rt: RuntimeProcess;
let models: ScriptedModelServer;
const MODEL = `ckpt-promote-${Date.now()}`;

beforeAll(async () => {
  models = await startScriptedModelServer((req) => {
    if (JSON.stringify(req.body.tools).includes(DRAFT_TOOL)) {
      return reply.tool(DRAFT_TOOL, { instruction: 'Commit your change.', context: 'Plain ASCII commit messages.', rubric: [{ criterion: 'No emoji in the commit message' }], checks: [] });
    }
    return reply.tool(JUDGE_TOOL, { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.3 });
  }, { embed: bagOfWords });
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-promote-e2e-'));
  rt = await startRuntime({
    dataDir,
    env: { FLYWHEEL_JUDGE_MODEL: `openai:judge@${models.baseUrl}`, FLYWHEEL_EMBEDDING_MODEL: `openai:embed@${models.baseUrl}` },
  });
}, 60_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  await models?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${rt.url}${path}`, { ...init, headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

interface ClusterView {
  id: string;
  membersHash: string;
  count: number;
  candidateMode: boolean;
  suggestedName: { name: string; id: string };
  members: { signalKey: string; text?: string }[];
  promoted?: { mode: string; taxonomyVersion: number };
}

const EMOJI = [
  'emoji in every commit message again',
  'stop putting emoji in the commit message',
  'the commit message has a rocket emoji',
  'commit message emoji spam, please stop',
  'why an emoji in my commit message',
];
const ENV = ['cleanup deleted my env file', 'the env file was deleted during cleanup', 'it deleted the env file in cleanup again', 'env file deleted by the cleanup step'];
const PRAISE = ['great work thanks a lot', 'great work, thanks', 'thanks, great work there', 'great great work thanks'];

describe('emerging modes on the local runtime', () => {
  it('clusters, promotes over the API and the CLI, drafts from a promoted cluster, and sends a report from the CLI', { timeout: 240_000 }, async () => {
    const events = [
      ...EMOJI.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment, trainingConsent: true })),
      ...ENV.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment, trainingConsent: true })),
      ...PRAISE.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'up', comment, trainingConsent: true })),
    ];
    expect((await api('/v1/feedback', { method: 'POST', body: JSON.stringify({ events }) })).status).toBe(202);
    const total = EMOJI.length + ENV.length;
    const r = await waitFor(async () => {
      const b = (await (await api(`/v1/clusters?minClusterSize=3&model=${MODEL}`)).json()) as { comments: number; positivesExcluded: number; embeddingModel: string; clusters: ClusterView[] };
      return b.comments === total && b.positivesExcluded === PRAISE.length ? b : undefined;
    }, { what: 'every comment embedded', timeoutMs: 120_000, everyMs: 500 });
    expect(r.embeddingModel).toBe('embed');
    const praise = new Set(events.slice(total).map((e) => `feedback:${e.eventId as string}`));
    expect(r.clusters.every((c) => c.members.every((m) => !praise.has(m.signalKey)))).toBe(true);
    const emoji = r.clusters.find((c) => c.members.some((m) => m.text?.includes('emoji')))!;
    const env = r.clusters.find((c) => c.members.some((m) => m.text?.includes('env file')))!;
    expect(emoji.count).toBe(EMOJI.length);
    expect(emoji.candidateMode).toBe(true);
    expect(env.count).toBe(ENV.length);

    const cli = await runCli(['modes', 'clusters', '--min-cluster-size', '3', '--model', MODEL, '--data-dir', dataDir]);
    expect(cli.stdout).toContain(emoji.id);
    expect(cli.stdout).toContain(emoji.membersHash);
    expect(cli.stdout).toContain(emoji.suggestedName.name);
    expect(cli.stdout).toContain(`${PRAISE.length} praise left out`);

    // Over the API.
    const bad = await api(`/v1/clusters/${emoji.id}/promote`, { method: 'POST', body: JSON.stringify({ id: 'Emoji Commits', name: 'x', definition: 'y', promotedBy: 'ana', membersHash: emoji.membersHash }) });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('"id"');
    expect((await api('/v1/clusters/cl-000000000000/promote', { method: 'POST', body: JSON.stringify({ id: 'nothing-here', name: 'x', definition: 'y', promotedBy: 'ana', membersHash: emoji.membersHash }) })).status).toBe(404);
    const promoted = await api(`/v1/clusters/${emoji.id}/promote`, {
      method: 'POST',
      body: JSON.stringify({ id: 'emoji-commit-messages', name: 'Emoji in commit messages', definition: 'The agent puts emojis in commit messages.', promotedBy: 'ana', membersHash: emoji.membersHash }),
    });
    expect(promoted.status).toBe(201);
    expect(await promoted.json()).toMatchObject({ taxonomy: { version: 2, parentVersion: 1 }, suggestedLabels: { count: EMOJI.length, reviewed: false }, mapping: { fromVersion: 1, toVersion: 2, modes: { other: 'other' } } });
    expect((await api(`/v1/clusters/${emoji.id}/promote`, { method: 'POST', body: JSON.stringify({ id: 'emoji-two', name: 'x', definition: 'y', promotedBy: 'ana', membersHash: emoji.membersHash }) })).status).toBe(409);

    // With the CLI.
    const byCli = await runCli(['modes', 'promote-cluster', env.id, '--id', 'env-file-deleted', '--name', 'Deletes .env', '--definition', 'The agent deletes environment files while cleaning up.', '--promoted-by', 'bo', '--members-hash', env.membersHash, '--data-dir', dataDir]);
    expect(byCli.stdout).toContain(`promoted ${env.id} as env-file-deleted in taxonomy v3 (from v2); ${ENV.length} members`);
    const after = (await (await api(`/v1/failure-modes/env-file-deleted/examples`)).json()) as { name: string; taxonomyVersion: number };
    expect(after).toMatchObject({ name: 'Deletes .env', taxonomyVersion: 3 });

    // A draft from the promoted cluster.
    const draft = await api('/v1/eval-drafts', { method: 'POST', body: JSON.stringify({ fromCluster: emoji.id }) });
    expect(draft.status).toBe(201);
    expect(((await draft.json()) as { lineage: { clusterIds: string[]; eventIds: string[] } }).lineage).toMatchObject({ clusterIds: [emoji.id] });

    // Counts split by kind of label, on the CLI.
    const list = await runCli(['modes', 'list', '--model', MODEL, '--data-dir', dataDir]);
    expect(list.stdout).toMatch(/mode\s+\|?\s*count\s+\|?\s*people\s+\|?\s*confident\s+\|?\s*unreviewed/);
    expect(list.stdout).toContain('unreviewed guesses');

    // A report from the CLI, with a repository and commit; a bad commit is refused naming the field.
    const reportId = `rep-cli-${Date.now()}`;
    const sent = await runCli(['feedback', 'report', '--report-id', reportId, '--title', 'Emoji in commits', '--body', 'It added a rocket emoji to the commit message.', '--severity', 'low', '--model', MODEL, '--repo', 'https://example.com/acme/app.git', '--commit', 'abcdef1234', '--training-consent', '--data-dir', dataDir, '--json']);
    expect(JSON.parse(sent.stdout)).toMatchObject({ httpStatus: 202, status: 'accepted', reportId });
    const refused = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'bin/flywheel.ts'), 'feedback', 'report', '--title', 't', '--body', 'b', '--severity', 'low', '--model', MODEL, '--commit', 'not-a-sha', '--data-dir', dataDir], { cwd: REPO_ROOT }).then(
      () => undefined,
      (e: { stderr: string; code: number }) => e,
    );
    expect(refused?.code).toBe(1);
    // The error names the flag to fix.
    expect(refused?.stderr).toContain('--commit');
    const fromReport = await waitFor(async () => {
      const d = await api('/v1/eval-drafts', { method: 'POST', body: JSON.stringify({ fromReport: reportId }) });
      return d.status === 201 ? ((await d.json()) as { lineage: { reportIds: string[] }; repo?: unknown }) : undefined;
    }, { what: `a draft from report ${reportId}` });
    expect(fromReport.lineage.reportIds).toEqual([reportId]);
    // Without training consent a report is stored but never drafted from.
    const privateId = `rep-private-${Date.now()}`;
    await runCli(['feedback', 'report', '--report-id', privateId, '--title', 'Private', '--body', 'Not for training.', '--severity', 'low', '--model', MODEL, '--data-dir', dataDir]);
    const refusedDraft = await waitFor(async () => {
      const d = await api('/v1/eval-drafts', { method: 'POST', body: JSON.stringify({ fromReport: privateId }) });
      return d.status === 400 ? ((await d.json()) as { message: string }) : undefined;
    }, { what: `the private report ${privateId} stored and refused` });
    expect(refusedDraft.message).toContain('training consent');
    // The draft starts at the repository and commit the report named.
    expect(fromReport.repo).toEqual({ kind: 'git', url: 'https://example.com/acme/app.git', commit: 'abcdef1234' });
  });
});
