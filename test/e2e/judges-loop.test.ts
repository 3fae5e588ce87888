/**
 * The judges loop end to end on the local runtime (`flywheel start` as a child process, real HTTP): ~30 varied
 * complaints that the agent never reports back in the team chat (with training consent and a repository + commit
 * context on an allowed `ssh://` remote served from this machine) → `GET /v1/clusters` finds their density cluster →
 * `POST /v1/clusters/{id}/promote` makes a new mode in a new taxonomy version → `POST /v1/eval-drafts {fromCluster}`
 * drafts a behavioural case (the scripted drafter gives it a chat service) → approve → the case is in the private
 * suite → a checkpoint whose endpoint is the scripted agent is registered and `POST /v1/sweeps` sweeps that suite:
 * the rollout job (a child process of the runtime's jobs driver) runs the attempt in the namespace sandbox, the judge
 * grades it, and `GET /v1/sweeps/{id}` reports the per-criterion scores. Once with an agent that reads #eng and posts
 * its summary (passes), once with one that never does (fails).
 *
 * One scripted model server plays every model: the embedder (a topic direction plus noise per comment), the
 * failure-mode classifier, the drafter, the agent (by the checkpoint's model name, step by step) and the rubric judge.
 * The agent's and the judge's steps are the example suite's `chat-report` scripts (examples/behaviours/).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { DRAFT_TOOL } from '../../lib/modes/evals/eval-drafts.ts';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { REPO_ROOT, startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { gitSync } from '../support/git-fixture.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptStep } from '../support/scripted-model-server.ts';
import { sshGitRemote, type SshGitRemote } from '../support/ssh-git-remote.ts';
import { waitFor } from '../support/wait-for.ts';

const EXAMPLES = join(REPO_ROOT, 'examples/behaviours');
const CASE = JSON.parse(readFileSync(join(EXAMPLES, 'tasks/chat-report.json'), 'utf8')) as {
  instruction: string;
  rubric: { id: string; criterion: string }[];
  behaviour: Record<string, unknown>;
};
interface Scripts {
  agent: ScriptStep[];
  judge: ScriptStep[];
}
const SCRIPTS = JSON.parse(readFileSync(join(EXAMPLES, 'scripts/chat-report.json'), 'utf8')) as Scripts & { wrong: Scripts };
/** What the behaving agent posts in #eng: in the attempt the judge reads only when it did. */
const POSTED = 'Done: greet() now ends its greeting with an exclamation mark.';

const MODEL = `ckpt-judges-loop-${Date.now()}`;
const SUITE = 'failure-modes-private';

/** Thirty ways of saying "it never told anyone in the channel". */
const SILENT = [
  'it finished the change but never posted in the eng channel like I asked',
  'no update in #eng after the fix, again',
  'I told it to report back in chat and it just stopped',
  'the agent never posts a summary to the team channel',
  'asked for a one-line note in #eng when done, got nothing',
  'it ignores the chat channel where Ana asked for an update',
  'never reads the channel before starting, misses what the team asked',
  'it did the work silently, nobody in chat knew it was done',
  'forgot to tell the team in #eng that the change landed',
  'channel instructions are ignored: no summary posted',
  'the bot should post in #eng after finishing, it does not',
  'we rely on chat updates and the agent never sends one',
  'it did not read the pinned request in the eng channel',
  'no message in the channel, I had to ask it whether it was done',
  'it skipped the chat report step entirely',
  'Ana asked in #eng for a summary, the agent never replied',
  'reporting back in chat is part of the task and it keeps skipping it',
  'it posts nothing to the team channel after merging',
  'the agent never checks the eng channel for context',
  'silent agent: no chat update, no summary, nothing',
  'please make it post a short summary in #eng when it finishes',
  'it finished and went quiet instead of posting in chat',
  'our team channel got no note from the agent about the change',
  'it never acknowledges requests made in the chat channel',
  'no one-line summary in #eng, as asked in the channel',
  'the agent does not follow up in chat after its change',
  'it should have read #eng first; it never opens the channel',
  'report back in the eng channel, it never does',
  'again no chat message after the fix was done',
  'it ignores chat entirely, the team asked for updates there',
];
/** Two smaller recurring complaints and a few one-offs. */
const OTHER = [
  'the answer took three minutes to arrive',
  'so slow today, every answer takes minutes',
  'answers are timing out again, minutes of waiting',
  'latency is awful this morning, slow answers',
  'waited five minutes for a one-line answer, so slow',
  'it deleted the migrations folder',
  'it deleted my .env file during cleanup',
  'the agent deleted the fixtures directory',
  'it deleted files I never mentioned',
  'deleted the build cache and my notes folder',
  'hallucinated an npm package name',
  'wrong indentation in the YAML it wrote',
];
const PRAISE = ['great work thanks a lot', 'perfect, exactly what I wanted'];

/** The scripted embedder: each recurring complaint has its direction, one-offs their own; plus word noise. */
function embed(text: string): number[] {
  const v = new Array<number>(32).fill(0);
  const topic = /chat|channel|#eng|post|summary|report back|update|quiet|silent|told/i.test(text)
    ? 0
    : /slow|minutes|latency/i.test(text)
      ? 1
      : /deleted/i.test(text)
        ? 2
        : 3 + (createHash('md5').update(text).digest()[0]! % 29);
  v[topic] = 4;
  for (const w of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) v[createHash('md5').update(w).digest()[0]! % 32]! += 0.3;
  return v;
}

let root: string;
let dataDir: string;
let rt: RuntimeProcess;
let models: ScriptedModelServer;
let remote: SshGitRemote;
let repo: { url: string; commit: string };

/** Every model of the loop, told apart by what the request is. */
function script(req: RecordedRequest): ScriptStep {
  const tools = JSON.stringify(req.body['tools'] ?? []);
  const messages = (req.body['messages'] as Array<{ role: string; content: string | null }>) ?? [];
  if (tools.includes(DRAFT_TOOL)) {
    return reply.tool(DRAFT_TOOL, {
      instruction: CASE.instruction,
      context: 'The team asks for a note in #eng when a change is done.',
      rubric: CASE.rubric.map((c) => ({ criterion: c.criterion })),
      checks: [],
      behaviour: CASE.behaviour,
    });
  }
  if (tools.includes(JUDGE_TOOL)) return reply.tool(JUDGE_TOOL, { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.3 });
  if (tools.includes(RUBRIC_TOOL)) {
    const posted = messages.some((m) => (m.content ?? '').includes(POSTED));
    return (posted ? SCRIPTS.judge : SCRIPTS.wrong.judge)[0]!;
  }
  const agent = req.body['model'] === 'agent-good' ? SCRIPTS.agent : req.body['model'] === 'agent-bad' ? SCRIPTS.wrong.agent : undefined;
  if (!agent) return reply.error(400, {}, { error: { message: `no script for model ${String(req.body['model'])}` } });
  const step = messages.filter((m) => m.role === 'assistant').length;
  return agent[Math.min(step, agent.length - 1)]!;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'flywheel-judges-loop-'));
  dataDir = join(root, 'data');
  // The repository the complaints are about, on an allowed remote.
  remote = sshGitRemote();
  const checkout = join(root, 'greeter');
  cpSync(join(EXAMPLES, 'repos/greeter'), checkout, { recursive: true });
  gitSync(checkout, ['init', '-q', '-b', 'main']);
  gitSync(checkout, ['add', '-A']);
  gitSync(checkout, ['commit', '-q', '-m', 'greeter']);
  repo = remote.publish('acme/greeter.git', checkout);

  models = await startScriptedModelServer(script, { embed });
  rt = await startRuntime({
    dataDir,
    env: {
      PATH: remote.path(),
      FLYWHEEL_SCHEDULE: 'off',
      FLYWHEEL_JUDGE_MODEL: `openai:judge@${models.baseUrl}`,
      FLYWHEEL_EMBEDDING_MODEL: `openai:embed@${models.baseUrl}`,
      FLYWHEEL_TASK_SOURCES: remote.allow,
    },
  });
}, 120_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  await models?.close();
  remote?.close();
  rmSync(root, { recursive: true, force: true });
});

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as any };
};

interface ClusterView {
  id: string;
  membersHash: string;
  count: number;
  candidateMode: boolean;
  members: { signalKey: string; text?: string }[];
}

interface CriterionTally {
  judged: number;
  passed: number;
  failed: number;
  notApplicable: number;
  voided: number;
  passRate: number | null;
}

/** Sweeps the private suite with one checkpoint and waits for the sweep to finish. */
async function sweep(checkpoint: string, sweepId: string) {
  const started = await api('/v1/sweeps', { method: 'POST', body: { sweepId, checkpoints: [checkpoint], suites: [SUITE], modes: ['strict'], attemptsPerTask: 1 } });
  expect(started.status, JSON.stringify(started.json)).toBe(202);
  return waitFor(
    async () => {
      const r = await api(`/v1/sweeps/${sweepId}`);
      const status = r.json?.sweep?.status as string | undefined;
      const ended = r.json?.execution?.status && r.json.execution.status !== 'RUNNING';
      return status === 'succeeded' || status === 'partial' || status === 'failed' || ended ? r.json : undefined;
    },
    { what: () => `sweep ${sweepId} to finish:\n${rt.output().slice(-4000)}`, timeoutMs: 240_000, everyMs: 500 },
  );
}

describe('complaint → cluster → promoted mode → behavioural case → approved → swept → graded', () => {
  it('runs the whole loop locally over HTTP, and the judge passes the agent that behaves and fails the one that does not', { timeout: 600_000 }, async () => {
    const context = { repo: repo.url, commit: repo.commit };
    const events = [
      ...SILENT.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment, trainingConsent: true, context })),
      ...OTHER.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment, trainingConsent: true })),
      ...PRAISE.map((comment) => liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'up', comment, trainingConsent: true })),
    ];
    expect((await api('/v1/feedback', { method: 'POST', body: { events } })).status).toBe(202);

    // The complaint's cluster.
    const complaints = SILENT.length + OTHER.length;
    const clusters = await waitFor(
      async () => {
        const b = (await api(`/v1/clusters?model=${MODEL}`)).json as { comments: number; clusters: ClusterView[] };
        return b?.comments === complaints ? b : undefined;
      },
      { what: 'every complaint embedded', timeoutMs: 180_000, everyMs: 500 },
    );
    const silentIds = new Set(events.slice(0, SILENT.length).map((e) => `feedback:${e.eventId as string}`));
    const cluster = clusters.clusters.find((c) => c.members.some((m) => silentIds.has(m.signalKey)))!;
    expect(cluster).toBeDefined();
    expect(cluster.candidateMode).toBe(true);
    // Most of the thirty, and little else (a density cluster may take in a border point).
    expect(cluster.members.filter((m) => silentIds.has(m.signalKey)).length).toBeGreaterThanOrEqual(20);
    expect(cluster.members.filter((m) => !silentIds.has(m.signalKey)).length).toBeLessThanOrEqual(2);

    // A person promotes it: a new mode in a new taxonomy version.
    const promoted = await api(`/v1/clusters/${cluster.id}/promote`, {
      method: 'POST',
      body: { id: 'silent-in-chat', name: 'Does not report back in chat', definition: 'The agent finishes without reading or posting in the team chat channel it was pointed to.', promotedBy: 'ana', membersHash: cluster.membersHash },
    });
    expect(promoted.status, JSON.stringify(promoted.json)).toBe(201);
    expect(promoted.json).toMatchObject({ taxonomy: { version: 2, parentVersion: 1 }, suggestedLabels: { count: cluster.count } });
    expect((await api('/v1/failure-modes/silent-in-chat/examples')).json).toMatchObject({ taxonomyVersion: 2 });

    // A behavioural case drafted from the cluster, at the repository and commit the complaints named.
    const drafted = await api('/v1/eval-drafts', { method: 'POST', body: { fromCluster: cluster.id } });
    expect(drafted.status, JSON.stringify(drafted.json)).toBe(201);
    const draft = drafted.json as { id: string; behaviour?: { services?: { chat?: unknown } }; lineage: { clusterIds: string[]; modes: string[] }; repo?: unknown };
    expect(draft.lineage.clusterIds).toEqual([cluster.id]);
    expect(draft.lineage.modes).toContain('silent-in-chat');
    expect(draft.behaviour?.services?.chat).toBeDefined();
    expect(draft.repo).toEqual({ kind: 'git', url: repo.url, commit: repo.commit });

    // Approved: a judge-graded case of the private suite.
    const approved = await api(`/v1/eval-drafts/${draft.id}/approve`, { method: 'POST', body: { approver: 'ana' } });
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    const task = approved.json.task as { id: string; visibility: string; grading: unknown; rubric: { id: string }[]; behaviour: unknown };
    expect(task).toMatchObject({ visibility: 'private', grading: { by: 'judge', minScore: 1 }, behaviour: { services: { chat: { channels: [{ name: 'eng' }, { name: 'random' }] } } } });
    expect(task.rubric.map((c) => c.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    const suite = await api(`/v1/suites/${SUITE}`);
    expect(suite.status).toBe(200);
    expect(suite.json).toMatchObject({ id: SUITE, visibility: 'private', status: 'active', version: approved.json.suiteVersion, taskCount: 1 });

    // A checkpoint served by the scripted agent that behaves, swept over the private suite.
    for (const [id, model] of [['agent-good', 'agent-good'], ['agent-bad', 'agent-bad']]) {
      const registered = await api('/v1/checkpoints', { method: 'POST', body: { id, model: 'coder', serving: { kind: 'endpoint', model: `openai:${model}@${models.baseUrl}` }, sweep: false } });
      expect(registered.status, JSON.stringify(registered.json)).toBeLessThan(300);
    }
    const good = await sweep('agent-good', `judges-loop-good-${Date.now()}`);
    expect(good.sweep.status, JSON.stringify(good)).toBe('succeeded');
    expect(good.results).toEqual([expect.objectContaining({ checkpoint: 'agent-good', suite: SUITE, mode: 'strict', n: 1, passes: 1, score: 1 })]);
    const goodJudge = (good.judged as Array<{ checkpoint: string; judge: { attempts: number; meanScore: number; criteria: Record<string, CriterionTally> } }>).find((j) => j.checkpoint === 'agent-good')!;
    expect(goodJudge.judge).toMatchObject({ attempts: 1, meanScore: 1 });
    for (const c of ['c1', 'c2', 'c3', 'c4']) expect(goodJudge.judge.criteria[`${task.id}:${c}`]).toMatchObject({ judged: 1, passed: 1, voided: 0, passRate: 1 });
    // The agent ran its four steps through the endpoint, and the judge read the attempt: the chat post was in its view.
    expect(models.chatRequests().filter((r) => r.body['model'] === 'agent-good').length).toBeGreaterThanOrEqual(SCRIPTS.agent.length);
    const judgeRequests = models.chatRequests().filter((r) => JSON.stringify(r.body['tools'] ?? []).includes(RUBRIC_TOOL));
    expect(judgeRequests.some((r) => JSON.stringify(r.body['messages']).includes(POSTED))).toBe(true);

    // The agent that never reads nor posts in #eng fails on those criteria.
    const bad = await sweep('agent-bad', `judges-loop-bad-${Date.now()}`);
    expect(bad.sweep.status, JSON.stringify(bad)).toBe('succeeded');
    expect(bad.results).toEqual([expect.objectContaining({ checkpoint: 'agent-bad', suite: SUITE, mode: 'strict', n: 1, passes: 0, score: 0 })]);
    const badJudge = (bad.judged as Array<{ checkpoint: string; judge: { attempts: number; meanScore: number; criteria: Record<string, CriterionTally> } }>).find((j) => j.checkpoint === 'agent-bad')!;
    expect(badJudge.judge.attempts).toBe(1);
    expect(badJudge.judge.meanScore).toBeLessThan(1);
    expect(badJudge.judge.criteria[`${task.id}:c1`]).toMatchObject({ judged: 1, failed: 1, passRate: 0 });
    expect(badJudge.judge.criteria[`${task.id}:c2`]).toMatchObject({ judged: 1, failed: 1, passRate: 0 });
    expect(badJudge.judge.criteria[`${task.id}:c3`]).toMatchObject({ judged: 1, notApplicable: 1 });
    expect(badJudge.judge.criteria[`${task.id}:c4`]).toMatchObject({ judged: 1, passed: 1 });
  });
});
