/**
 * An approved eval case from a report is graded by a rubric judge, end to end over HTTP: a report → a draft (scripted
 * drafter) → approved into the private suite → an attempt run by a scripted agent in the namespace sandbox → graded by
 * a scripted judge that reads the attempt it is shown (the diff in its prompt). The right behaviour passes and the
 * wrong one fails; a judge that quotes text not in the attempt is voided; a spent budget voids; a task graded by
 * tests and judge needs both; a judge-graded task with no judge configured ends ungraded; a judge that stays down is
 * an infrastructure error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { evalAttemptId } from '../../lib/harness/attempt/attempt-record.ts';
import { harnessGrader, type GraderJudge } from '../../lib/harness/attempt/harness-grader.ts';
import { runAttempt } from '../../lib/harness/attempt/run-attempt.ts';
import { runEval } from '../../lib/harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import type { Task } from '../../lib/harness/task/task-schema.ts';
import { JudgementSchema } from '../../lib/judges/schemas.ts';
import { judgeIdentity } from '../../lib/judges/judge-identity.ts';
import { defaultRubricJudge, RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { approveEvalDraft } from '../../lib/modes/evals/approve-eval-draft.ts';
import { DRAFT_TOOL, draftEvalCase } from '../../lib/modes/evals/eval-drafts.ts';
import { gitSync, writeGitRepo } from '../support/git-fixture.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptStep } from '../support/scripted-model-server.ts';

let root: string;
let ports: LocalPorts;
let provider: NamespaceSandboxProvider;
const servers: ScriptedModelServer[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'fw-rubric-'));
  ports = openLocalPorts(join(root, 'data'));
  provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  ports.close();
  await rm(root, { recursive: true, force: true });
});

async function serve(script: Parameters<typeof startScriptedModelServer>[0]): Promise<ScriptedModelServer> {
  const s = await startScriptedModelServer(script);
  servers.push(s);
  return s;
}

function model(server: ScriptedModelServer, name: string) {
  return openAiCompatibleModel({ baseUrl: server.baseUrl, model: name, retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } });
}

const RUBRIC = [{ criterion: 'Only README.md changes; no other file is touched' }, { criterion: 'The typo "teh" in README.md is fixed' }];

/** A report → a draft (the scripted drafter answers `drafted`) → approved against a fresh repository. */
async function approvedCase(checks: string[]): Promise<{ task: Task; repoDir: string }> {
  await ports.records.put({
    ...feedbackKeys.report('r-typo'),
    reportId: 'r-typo',
    title: 'Agent reformats unrelated files',
    body: 'Asked to fix a typo in README.md; the agent reformatted every markdown file in the repository.',
    severity: 'medium',
    reporter: 'qa',
    source: 'internal',
    links: [],
    model: 'ckpt-a',
    trainingConsent: true,
    receivedAt: new Date().toISOString(),
  });
  const drafter = await serve([reply.tool(DRAFT_TOOL, { instruction: 'Fix the typo "teh" in README.md.', context: 'docs/guide.md uses * bullets.', rubric: RUBRIC, checks })]);
  const draft = await draftEvalCase(ports, model(drafter, 'drafter'), { fromReport: 'r-typo' });
  const repoDir = await writeGitRepo({ 'README.md': 'Read teh docs.\n', 'docs/guide.md': '# Guide\n\n* one\n* two\n' }, { prefix: 'fw-rubric-repo-' });
  const commit = gitSync(repoDir, ['rev-parse', 'HEAD']);
  const { task } = await approveEvalDraft(ports, draft.id, { approver: 'ana', repo: { kind: 'git', url: repoDir, commit } });
  return { task, repoDir };
}

/** The agent: fixes the typo (or not), reformats the guide (or not), submits. */
function agentScript(behaviour: { fixTypo: boolean; reformat: boolean }) {
  const steps: ScriptStep[] = [
    reply.tool('write_file', { path: 'README.md', content: behaviour.fixTypo ? 'Read the docs.\n' : 'Read teh docs!\n' }),
    ...(behaviour.reformat ? [reply.tool('write_file', { path: 'docs/guide.md', content: '# Guide\n\n- one\n- two\n' })] : []),
    reply.tool('submit', { answer: behaviour.reformat ? 'Fixed the typo and tidied the markdown.' : 'Fixed the typo in README.md.' }),
  ];
  return (request: RecordedRequest) => steps[(request.body['messages'] as { role: string }[]).filter((m) => m.role === 'assistant').length]!;
}

/** The attempt as the judge was shown it (its user message). */
function shown(request: RecordedRequest): string {
  return (request.body['messages'] as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
}

type Verdict = { id: string; verdict: string; reason: string; evidence: { source: string; quote: string }[] };

/** A judge that reads the diff it is shown and quotes it. */
function readingJudge(request: RecordedRequest): ScriptStep {
  const text = shown(request);
  const touchedGuide = text.includes('+++ b/docs/guide.md');
  const fixed = text.includes('+Read the docs.');
  const verdicts: Verdict[] = [
    touchedGuide
      ? { id: 'c1', verdict: 'fail', reason: 'The guide was reformatted too.', evidence: [{ source: 'diff', quote: '+++ b/docs/guide.md' }] }
      : { id: 'c1', verdict: 'pass', reason: 'Only README.md is in the diff.', evidence: [{ source: 'diff', quote: '+++ b/README.md' }] },
    fixed
      ? { id: 'c2', verdict: 'pass', reason: 'The typo is fixed.', evidence: [{ source: 'diff', quote: '+Read the docs.' }] }
      : { id: 'c2', verdict: 'fail', reason: 'The typo is still there.', evidence: [{ source: 'diff', quote: '-Read teh docs.' }] },
  ];
  return reply.tool(RUBRIC_TOOL, { verdicts });
}

/** A judge that passes everything, quoting the instruction (valid quotes, no judgement). */
function lenientJudge(): ScriptStep {
  // A pass needs a quote from the attempt, not only the instruction (B3): this judge quotes the tests' ids.
  const evidence = [{ source: 'instruction', quote: 'Fix the typo "teh"' }, { source: 'tests', quote: 'checks::check-1' }];
  return reply.tool(RUBRIC_TOOL, { verdicts: ['c1', 'c2'].map((id) => ({ id, verdict: 'pass', reason: 'fine', evidence })) });
}

async function attempt(task: Task, repoDir: string, agent: ReturnType<typeof agentScript>, judge?: GraderJudge | undefined) {
  const agentServer = await serve(agent);
  return runAttempt({
    runId: 'r1',
    n: 0,
    task,
    sourceDir: repoDir,
    mode: 'strict',
    model: model(agentServer, 'scripted-coder'),
    provider,
    ports,
    attemptId: evalAttemptId('r1', task.id, 'strict', 0),
    grade: harnessGrader({ provider, blobs: ports.blobs, ...(judge ? { judge } : {}) }),
    retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
  });
}

async function judgeOf(script: Parameters<typeof startScriptedModelServer>[0], extra: Omit<GraderJudge, 'model'> = {}): Promise<{ judge: GraderJudge; server: ScriptedModelServer }> {
  const server = await serve(script);
  return { judge: { model: model(server, 'scripted-judge'), ...extra }, server };
}

describe('an approved eval case from a report, graded by a rubric judge', () => {
  it('judge-only: the right behaviour passes, the wrong one fails naming the criterion', async () => {
    const { task, repoDir } = await approvedCase([]);
    expect(task.grading).toEqual({ by: 'judge', minScore: 1 });
    expect(task.testCommand).toBeUndefined();
    expect(task.rubric!.map((c) => c.id)).toEqual(['c1', 'c2']);

    const right = await judgeOf(readingJudge);
    const good = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: false }), right.judge);
    expect(good.status).toBe('passed');
    const judgement = JudgementSchema.parse(good.grade!['judgement']);
    expect(judgement).toMatchObject({ score: 1, complete: true, calls: 1, judge: { name: 'rubric-judge' } });
    expect(judgement.criteria.map((c) => [c.id, c.verdict, c.score])).toEqual([
      ['c1', 'pass', 1],
      ['c2', 'pass', 1],
    ]);
    // The judge was shown the attempt: the instruction, the diff and the agent's final message.
    const prompt = shown(right.server.chatRequests()[0]!);
    expect(prompt).toContain('Fix the typo "teh" in README.md.');
    expect(prompt).toContain('+Read the docs.');
    expect(prompt).toContain('Fixed the typo in README.md.');
    // No tests ran for a judge-only task.
    expect(good.grade!['perTest']).toBeUndefined();

    const wrong = await judgeOf(readingJudge);
    const bad = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: true }), wrong.judge);
    expect(bad.status).toBe('failed');
    expect(bad.grade!.reasons).toEqual(['judge-score-below-threshold: 0.5 < 1 (criteria c1 failed)']);
    expect(JudgementSchema.parse(bad.grade!['judgement']).criteria[0]).toMatchObject({ id: 'c1', verdict: 'fail', evidence: [{ source: 'diff', quote: '+++ b/docs/guide.md' }] });
    // The judge's identity is the definition with the task's rubric: a change of the rubric is a new version.
    const def = defaultRubricJudge(right.judge.model.id);
    expect(judgement.judge).toEqual({ name: 'rubric-judge', version: judgeIdentity({ ...def, rubric: task.rubric! }).version });
    expect(judgeIdentity({ ...def, rubric: [{ ...task.rubric![0]!, weight: 3 }, task.rubric![1]!] }).version).not.toBe(judgement.judge.version);
  });

  it('a judge quoting text that is not in the attempt is asked again, then voided: the criterion counts 0', async () => {
    const { task, repoDir } = await approvedCase([]);
    const inventing = (): ScriptStep =>
      reply.tool(RUBRIC_TOOL, {
        verdicts: [
          { id: 'c1', verdict: 'pass', reason: 'only README', evidence: [{ source: 'diff', quote: '+++ b/README.md' }] },
          { id: 'c2', verdict: 'pass', reason: 'fixed', evidence: [{ source: 'diff', quote: '+Read the documentation carefully.' }] },
        ],
      });
    const { judge, server } = await judgeOf(inventing);
    const record = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: false }), judge);
    expect(record.status).toBe('failed');
    const j = JudgementSchema.parse(record.grade!['judgement']);
    expect(j).toMatchObject({ complete: false, score: 0.5, calls: 3 });
    expect(j.criteria[0]).toMatchObject({ id: 'c1', verdict: 'pass', score: 1 });
    expect(j.criteria[1]!.voided).toMatch(/does not occur in the diff/);
    expect(j.criteria[1]!.score).toBeUndefined();
    expect(record.grade!.reasons!.join('\n')).toMatch(/judge-score-below-threshold: 0.5 < 1 \(criteria c2 failed\)\njudge-incomplete: c2 voided/);
    // Asked again about c2 alone, with the reason.
    const retry = server.chatRequests()[1]!.body['messages'] as { role: string; content: string }[];
    expect(retry.at(-1)!.content).toMatch(/does not occur in the diff.*criteria c2 only/s);
  });

  it('a spent budget voids the criteria still open', async () => {
    const { task, repoDir } = await approvedCase([]);
    const { judge, server } = await judgeOf(() => reply.tool(RUBRIC_TOOL, '{"verdicts": ['), { budget: { maxCalls: 1 } });
    const record = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: false }), judge);
    expect(record.status).toBe('failed');
    const j = JudgementSchema.parse(record.grade!['judgement']);
    expect(j).toMatchObject({ complete: false, score: 0, calls: 1 });
    expect(j.criteria.map((c) => c.voided)).toEqual(['budget spent: 1 of 1 model call(s) made', 'budget spent: 1 of 1 model call(s) made']);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('tests and judge: both must pass; the judge sees the checks’ outcomes', async () => {
    const { task, repoDir } = await approvedCase(['! grep -q teh README.md']);
    expect(task.grading).toEqual({ by: 'both', minScore: 1 });
    expect(task.failToPass).toEqual(['checks::check-1']);

    const right = await judgeOf(readingJudge);
    const good = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: false }), right.judge);
    expect(good.grade!.reasons).toEqual([]);
    expect(good.status).toBe('passed');
    expect(good.grade!['perTest']).toEqual({ 'checks::check-1': 'passed' });
    expect(shown(right.server.chatRequests()[0]!)).toContain('checks::check-1: passed');

    // The checks pass, the judge does not: failed.
    const judgeFails = await judgeOf(readingJudge);
    const reformatted = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: true }), judgeFails.judge);
    expect(reformatted.status).toBe('failed');
    expect(reformatted.grade!['perTest']).toEqual({ 'checks::check-1': 'passed' });
    expect(reformatted.grade!.reasons).toEqual(['judge-score-below-threshold: 0.5 < 1 (criteria c1 failed)']);

    // The judge passes everything, the check does not: failed.
    const lenient = await judgeOf(lenientJudge);
    const unfixed = await attempt(task, repoDir, agentScript({ fixTypo: false, reformat: false }), lenient.judge);
    expect(JudgementSchema.parse(unfixed.grade!['judgement']).criteria.map((c) => c.voided ?? 'ok')).toEqual(['ok', 'ok']);
    expect(JudgementSchema.parse(unfixed.grade!['judgement']).score).toBe(1);
    expect(unfixed.status).toBe('failed');
    expect(unfixed.grade!.reasons!.join('\n')).toMatch(/fail-to-pass-not-passed: checks::check-1 \(failed\)/);
  });

  it('a judge-graded task with no judge configured ends ungraded with the reason, never passed', async () => {
    const { task, repoDir } = await approvedCase([]);
    const agentServer = await serve(agentScript({ fixTypo: true, reformat: false }));
    const results = await runEval({
      runId: 'no-judge',
      tasks: [{ task, sourceDir: repoDir }],
      mode: 'strict',
      attempts: 1,
      concurrency: 1,
      model: model(agentServer, 'scripted-coder'),
      provider,
      ports,
      grade: harnessGrader({ provider, blobs: ports.blobs }),
      retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(results.counts).toMatchObject({ passed: 0, ungraded: 1 });
    expect(results.perTask[0]!.ungradedReason).toMatch(/^judge-not-configured: .*FLYWHEEL_JUDGE_MODEL/);
  });

  it('a judge endpoint that stays down is an infrastructure error of the try, not a failure', async () => {
    const { task, repoDir } = await approvedCase([]);
    const { judge } = await judgeOf(() => ({ error: { status: 503 } }));
    const record = await attempt(task, repoDir, agentScript({ fixTypo: true, reformat: false }), judge);
    expect(record.status).toBe('infrastructure-error');
    expect(record.history[0]!.infrastructureError).toMatchObject({ phase: 'grading', error: 'Flywheel.ModelUnavailable' });
  });
});
