/**
 * The harness grader's judge, wired to the judge registry: a task's `grading.judge` (name or name@version) is resolved
 * to its registered definition (its prompt asked, the task's rubric in its version); without one the promoted
 * `rubric-judge` is used, else the default; an unknown or non-rubric judge leaves the attempt ungraded with a reason
 * naming it. A judge-only task gets the diff's integrity flags on its grade, and the judge is shown them. The judge's
 * `service-calls` part holds every behaviour event kind the agent loop records. A scripted judge over HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { harnessGrader, registryJudgeResolver, ungradableReason, type GraderJudge } from '../../lib/harness/attempt/harness-grader.ts';
import { runEval } from '../../lib/harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { parseTask, type Task } from '../../lib/harness/task/task-schema.ts';
import { BEHAVIOUR_EVENT_KINDS } from '../../lib/harness/trajectory/behaviour-events.ts';
import { judgeIdentity, parseJudgeDefinition, type JudgeDefinitionInput } from '../../lib/judges/judge-identity.ts';
import { promoteJudge } from '../../lib/judges/registry/promote-judge.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { buildAttemptView } from '../../lib/judges/rubric/attempt-view.ts';
import { defaultRubricJudge, RUBRIC_JUDGE_NAME, RUBRIC_OUTPUT_SCHEMA, RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { JudgementSchema } from '../../lib/judges/schemas.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import type { ModelsPort } from '../../lib/ports/models.ts';
import { writeGitRepo } from '../support/git-fixture.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer } from '../support/scripted-model-server.ts';

let root: string;
let ports: LocalPorts;
const servers: ScriptedModelServer[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'fw-wiring-grader-'));
  ports = openLocalPorts(join(root, 'data'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  ports.close();
  await rm(root, { recursive: true, force: true });
});

const RUBRIC = [{ criterion: 'Greets by name' }, { criterion: 'Touches only src/greet.py' }];

function task(judge?: string): Task {
  return parseTask({
    schemaVersion: 1,
    id: 'wiring/greet',
    suite: 'wiring',
    split: 'held-out',
    visibility: 'public',
    repo: { kind: 'local', path: '.' },
    instruction: 'Make greet() greet by name.',
    failToPass: [],
    grading: { by: 'judge', minScore: 1, ...(judge !== undefined ? { judge } : {}) },
    rubric: RUBRIC,
  });
}

const DIFF = [
  'diff --git a/src/greet.py b/src/greet.py',
  '--- a/src/greet.py',
  '+++ b/src/greet.py',
  '@@ -1,2 +1,4 @@',
  ' def greet(name):',
  '-    return "Hello"',
  '+    import sys',
  '+    sys.exit(0)',
  '+    return f"Hello, {name}"',
  '',
].join('\n');

/** A judge that passes both criteria quoting the instruction and the diff (valid quotes; a pass needs one from the attempt). */
function passingJudge(): ReturnType<typeof reply.tool> {
  const evidence = [{ source: 'instruction', quote: 'greet() greet by name' }, { source: 'diff', quote: '+    return f"Hello, {name}"' }];
  return reply.tool(RUBRIC_TOOL, { verdicts: ['c1', 'c2'].map((id) => ({ id, verdict: 'pass', reason: 'fine', evidence })) });
}

async function judgeServer(): Promise<{ server: ScriptedModelServer; model: ModelsPort }> {
  const server = await startScriptedModelServer(() => passingJudge());
  servers.push(server);
  return { server, model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-judge', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } }) };
}

function systemPrompt(request: RecordedRequest): string {
  return (request.body['messages'] as { role: string; content: string }[]).find((m) => m.role === 'system')!.content;
}

function userPrompt(request: RecordedRequest): string {
  return (request.body['messages'] as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
}

function registered(name: string, model: string, overrides: Partial<JudgeDefinitionInput> = {}): JudgeDefinitionInput {
  return {
    name,
    kind: 'rubric',
    model,
    prompt: `You are ${name}. Grade each rubric criterion with quoted evidence by calling ${RUBRIC_TOOL}.`,
    rubric: [{ id: 'x', criterion: 'a criterion the task replaces', weight: 1 }],
    decoding: { temperature: 0 },
    outputSchema: RUBRIC_OUTPUT_SCHEMA,
    ...overrides,
  };
}

async function grade(judge: GraderJudge, t: Task, withRecords = false) {
  const grader = harnessGrader({ provider: new NamespaceSandboxProvider({ root: join(root, 'sandboxes') }), blobs: ports.blobs, judge, ...(withRecords ? { records: ports.records } : {}) });
  return { grader, grade: await grader({ task: t, sourceDir: root, diff: DIFF, attemptId: 'a-1', mode: 'strict' }) };
}

describe('the grader resolves its judge in the registry', () => {
  it('grading.judge by name: the promoted version is asked, with the task rubric in its version', async () => {
    const { server, model } = await judgeServer();
    const def = registered('greet-judge', model.id);
    const { ref } = await registerJudge(ports, def);
    await promoteJudge(ports, ref, { by: 'ana', force: true, reason: 'wiring test' });
    const { grade: g } = await grade({ model, resolve: registryJudgeResolver(ports.records) }, task('greet-judge'));
    expect(g.passed).toBe(true);
    const judgement = JudgementSchema.parse(g['judgement']);
    const t = task();
    const expected = judgeIdentity({ ...parseJudgeDefinition(def), rubric: t.rubric!.map((c, i) => ({ id: `c${i + 1}`, criterion: c.criterion, weight: c.weight ?? 1 })) });
    expect(judgement.judge).toEqual({ name: 'greet-judge', version: expected.version });
    expect(judgement.judge.version).not.toBe(ref.version);
    expect(systemPrompt(server.chatRequests()[0]!)).toContain('You are greet-judge.');
  });

  it('grading.judge name@version: a pinned version needs no promotion (the registry given as the records port)', async () => {
    const { server, model } = await judgeServer();
    const { ref } = await registerJudge(ports, registered('pinned-judge', model.id));
    const { grade: g } = await grade({ model }, task(`pinned-judge@${ref.version}`), true);
    expect(JudgementSchema.parse(g['judgement']).judge.name).toBe('pinned-judge');
    expect(systemPrompt(server.chatRequests()[0]!)).toContain('You are pinned-judge.');
  });

  it('no grading.judge: the promoted rubric-judge when there is one, else the default', async () => {
    const first = await judgeServer();
    const { grade: plain } = await grade({ model: first.model, resolve: registryJudgeResolver(ports.records) }, task());
    const def = defaultRubricJudge(first.model.id);
    expect(JudgementSchema.parse(plain['judgement']).judge).toEqual({ name: RUBRIC_JUDGE_NAME, version: judgeIdentity({ ...def, rubric: task().rubric!.map((c, i) => ({ id: `c${i + 1}`, criterion: c.criterion, weight: 1 })) }).version });
    // The definition's prompt, then the notice naming this render's fence.
    expect(systemPrompt(first.server.chatRequests()[0]!).startsWith(`${def.prompt}\n\n`)).toBe(true);

    const second = await judgeServer();
    const { ref } = await registerJudge(ports, registered(RUBRIC_JUDGE_NAME, second.model.id));
    await promoteJudge(ports, ref, { by: 'ana', force: true, reason: 'wiring test' });
    await grade({ model: second.model, resolve: registryJudgeResolver(ports.records) }, task());
    expect(systemPrompt(second.server.chatRequests()[0]!)).toContain(`You are ${RUBRIC_JUDGE_NAME}.`);
  });

  it('a registered judge of another model: modelFor gives its port; without it the grader model answers under its own id', async () => {
    const { server, model } = await judgeServer();
    const elsewhere = 'openai:big-judge@http://127.0.0.1:9/v1';
    const { ref } = await registerJudge(ports, registered('far-judge', elsewhere));
    const asked: string[] = [];
    const { grade: via } = await grade({ model, resolve: registryJudgeResolver(ports.records), modelFor: (spec) => (asked.push(spec), model) }, task(`far-judge@${ref.version}`));
    expect(asked).toEqual([elsewhere]);
    expect(JudgementSchema.parse(via['judgement']).complete).toBe(true);
    const { grade: own } = await grade({ model, resolve: registryJudgeResolver(ports.records) }, task(`far-judge@${ref.version}`));
    const j = JudgementSchema.parse(own['judgement']);
    const t = task();
    const honest = judgeIdentity({ ...parseJudgeDefinition(registered('far-judge', model.id)), rubric: t.rubric!.map((c, i) => ({ id: `c${i + 1}`, criterion: c.criterion, weight: 1 })) });
    expect(j.judge.version).toBe(honest.version);
    expect(server.chatRequests().length).toBe(2);
  });

  it('an unknown or non-rubric judge: ungraded, with a reason naming it (before the attempt, and if graded anyway)', async () => {
    const { server, model } = await judgeServer();
    const judge: GraderJudge = { model, resolve: registryJudgeResolver(ports.records) };
    const { grader, grade: g } = await grade(judge, task('no-such-judge'));
    expect(g).toMatchObject({ passed: false, ungraded: true });
    expect(g.reasons![0]).toMatch(/^judge-not-registered: task wiring\/greet names judge 'no-such-judge'/);
    expect(await ungradableReason(grader, task('no-such-judge'))).toMatch(/^judge-not-registered: .*'no-such-judge'/);
    // Registered but never promoted: a bare name has nothing to resolve to.
    await registerJudge(ports, registered('unpromoted-judge', model.id));
    expect(await ungradableReason(grader, task('unpromoted-judge'))).toMatch(/^judge-not-registered: .*'unpromoted-judge'.*no promoted version/);
    const { ref } = await registerJudge(ports, registered('pair-judge', model.id, { kind: 'pairwise' }));
    expect(await ungradableReason(grader, task(`pair-judge@${ref.version}`))).toMatch(/^judge-not-rubric: .*a pairwise judge/);
    expect(await ungradableReason(grader, task())).toBeUndefined();
    expect(server.chatRequests().length).toBe(0);

    // Through runEval: the attempt runs (its diff kept) and ends ungraded, the reason on the task's result.
    const agent = await startScriptedModelServer([reply.tool('submit', { answer: 'done' })]);
    servers.push(agent);
    const repo = await writeGitRepo({ 'src/greet.py': 'def greet(name):\n    return "Hello"\n' }, { prefix: 'fw-wiring-repo-' });
    try {
      const provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
      const results = await runEval({
        runId: 'w1',
        tasks: [{ task: task('no-such-judge'), sourceDir: repo }],
        mode: 'strict',
        attempts: 1,
        concurrency: 1,
        model: openAiCompatibleModel({ baseUrl: agent.baseUrl, model: 'scripted-agent' }),
        provider,
        ports,
        grade: harnessGrader({ provider, blobs: ports.blobs, judge }),
        retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
      });
      expect(results.counts).toMatchObject({ ungraded: 1, passed: 0, failed: 0, 'infrastructure-error': 0 });
      expect(results.perTask[0]!.ungradedReason).toMatch(/^judge-not-registered: .*'no-such-judge'/);
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  }, 60_000);

  it('a judge-only task: the diff integrity flags are on the grade and shown to the judge, not failing it', async () => {
    const { server, model } = await judgeServer();
    const { grade: g } = await grade({ model }, task());
    expect(g.passed).toBe(true);
    expect(g.integrity).toEqual([expect.objectContaining({ kind: 'exit-call', file: 'src/greet.py', source: 'diff' })]);
    expect(userPrompt(server.chatRequests()[0]!)).toMatch(/\[integrity flags on this diff[^\n]*\]\n- exit-call src\/greet.py:\d+ /);
  });
});

describe("the judge's service-calls part", () => {
  it('holds every behaviour event kind the agent loop records, and no other tool event', () => {
    const steps = [
      ...BEHAVIOUR_EVENT_KINDS.map((kind, i) => ({ type: 'event', kind, message: `event ${i} ${kind}`, detail: {} })),
      { type: 'event', kind: 'tool.unknown', message: 'no such tool: frobnicate', detail: {} },
      { type: 'event', kind: 'tool.bad-arguments', message: 'bad arguments to write_file', detail: {} },
      { type: 'event', kind: 'limit.hit', message: 'turn limit', detail: {} },
    ];
    const view = buildAttemptView({ task: { instruction: 'x' }, trajectory: { steps } });
    const lines = view.serviceCalls.split('\n');
    expect(lines).toEqual(BEHAVIOUR_EVENT_KINDS.map((kind, i) => `[event ${kind}] event ${i} ${kind}`));
    expect(BEHAVIOUR_EVENT_KINDS).toEqual(expect.arrayContaining(['tool.added', 'tool.removed', 'tool.unavailable', 'submit.held', 'user.unanswered', 'service.state']));
    expect(view.trajectory).toContain('no such tool: frobnicate');
  });
});
