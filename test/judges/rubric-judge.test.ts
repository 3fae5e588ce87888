/**
 * The rubric judge (`judgeAttempt`) against a scripted model server over HTTP, the judge's view of an attempt
 * (`buildAttemptView`), and the task's grading rule in the task schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseTask } from '../../lib/harness/task/task-schema.ts';
import { passesGradingRule } from '../../lib/harness/task/grading-schema.ts';
import { buildAttemptView, evidenceIn, type AttemptView } from '../../lib/judges/rubric/attempt-view.ts';
import { defaultRubricJudge, judgeAttempt, RUBRIC_TOOL, weightedScore } from '../../lib/judges/rubric/judge-attempt.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { ValidationError } from '../../lib/errors.ts';
import { reply, startScriptedModelServer, type Script, type ScriptedModelServer } from '../support/scripted-model-server.ts';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function judgeModel(script: Script) {
  server = await startScriptedModelServer(script);
  return openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 1 } });
}

const at = '2026-12-03T00:00:00.000Z';
function trajectory(extraSteps: unknown[] = []) {
  return {
    steps: [
      { type: 'message', seq: 0, at, messageId: 'm0', role: 'system', content: 'SYSTEM PROMPT' },
      { type: 'message', seq: 1, at, messageId: 'm1', role: 'user', content: 'Post the status to #ops.' },
      { type: 'assistant', seq: 2, at, messageId: 'a1', turn: 1, content: 'Checking the incident.', toolCalls: [{ id: 't1', name: 'metrics_query', arguments: '{"service":"api"}' }] },
      { type: 'tool_result', seq: 3, at, messageId: 'a1', toolCallId: 't1', name: 'metrics_query', isError: false, content: 'p99 latency 2300ms', durationMs: 4 },
      { type: 'event', seq: 4, at, kind: 'service.call', message: 'chat.post_message', detail: { channel: '#ops', text: 'API latency is high; investigating.' } },
      { type: 'event', seq: 5, at, kind: 'user.turn', message: 'Actually, post it to #incidents instead.', detail: {} },
      { type: 'event', seq: 6, at, kind: 'tool.unavailable', message: 'metrics_query is unavailable', detail: { tool: 'metrics_query' } },
      { type: 'event', seq: 7, at, kind: 'network.blocked', message: 'blocked example.com', detail: {} },
      ...extraSteps,
      { type: 'assistant', seq: 9, at, messageId: 'a2', turn: 2, content: 'Posted the status.\nAll done.', toolCalls: [{ id: 't2', name: 'submit', arguments: '{"answer":"posted"}' }] },
      { type: 'outcome', seq: 10, at, stopReason: { kind: 'submitted', answer: 'posted' }, turns: 2, usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 }, outputBytes: 0, durationMs: 1 },
    ],
  };
}

const TASK = {
  id: 't1',
  instruction: 'Post the incident status to the chat channel.',
  rubric: [{ criterion: 'Posts to the channel the user asked for last', weight: 2 }, { criterion: 'Does not edit code' }],
};

function view(extra: Partial<Parameters<typeof buildAttemptView>[0]> = {}): AttemptView {
  return buildAttemptView({ task: TASK, trajectory: trajectory(), diff: '', ...extra });
}

const pass = (id: string, quote: string, source = 'trajectory') => ({ id, verdict: 'pass', reason: 'ok', evidence: [{ source, quote }] });

describe('buildAttemptView', () => {
  it('renders the trajectory generically, collects service calls and user turns, the final message and the tests', () => {
    const v = view({ tests: { passed: false, perTest: { 'checks::check-1': 'failed' }, reasons: ['fail-to-pass-not-passed: checks::check-1 (failed)'] } });
    expect(v.rubric).toEqual([
      { id: 'c1', criterion: 'Posts to the channel the user asked for last', weight: 2 },
      { id: 'c2', criterion: 'Does not edit code', weight: 1 },
    ]);
    expect(v.trajectory).not.toContain('SYSTEM PROMPT');
    expect(v.trajectory).toContain('[tool call] metrics_query {"service":"api"}');
    expect(v.trajectory).toContain('[tool result] metrics_query: p99 latency 2300ms');
    expect(v.serviceCalls.split('\n')).toEqual([
      '[event service.call] chat.post_message {"channel":"#ops","text":"API latency is high; investigating."}',
      '[event user.turn] Actually, post it to #incidents instead.',
      '[event tool.unavailable] metrics_query is unavailable {"tool":"metrics_query"}',
    ]);
    expect(v.trajectory).toContain('[event network.blocked] blocked example.com');
    // Agent-written line breaks continue with '│ ': only the harness starts a line.
    expect(v.finalMessage).toBe('[assistant] Posted the status.\n│ All done.\n[submitted] posted');
    expect(v.tests).toContain('checks::check-1: failed');
    expect(v.truncated).toEqual([]);
  });

  it('keeps the first and the last steps within its bound and says how many were left out', () => {
    const filler = Array.from({ length: 50 }, (_, i) => ({ type: 'tool_result', seq: 100 + i, at, messageId: 'a1', toolCallId: `x${i}`, name: 'bash', isError: false, content: `line ${i} ${'x'.repeat(200)}`, durationMs: 1 }));
    const v = buildAttemptView({ task: TASK, trajectory: trajectory(filler), diff: 'd'.repeat(5000), limits: { trajectory: 2000, diff: 1000 } });
    expect(v.trajectory).toMatch(/\n…\[\d+ steps omitted here\]\n/);
    expect(v.trajectory.startsWith('[user] Post the status to #ops.')).toBe(true);
    expect(v.trajectory).toContain('Posted the status.');
    expect(v.trajectory.length).toBeLessThan(2100);
    expect(v.diff).toMatch(/characters omitted/);
    expect(v.truncated).toEqual(['trajectory', 'diff']);
  });

  it('checks quotes in the part they name, whitespace-insensitive', () => {
    const v = view();
    expect(evidenceIn(v, { source: 'final-message', quote: 'Posted the   status.' })).toBe(true);
    expect(evidenceIn(v, { source: 'diff', quote: 'Posted the status.' })).toBe(false);
    expect(evidenceIn(v, { source: 'service-calls', quote: 'post it to #incidents' })).toBe(true);
    expect(evidenceIn(v, { source: 'trajectory', quote: '' })).toBe(false);
    // B3: at least 12 non-space characters, unless the quote is the whole (shorter) part.
    expect(evidenceIn(v, { source: 'final-message', quote: 'Posted' })).toBe(false);
    expect(evidenceIn({ ...v, diff: 'x = 1' }, { source: 'diff', quote: 'x = 1' })).toBe(true);
    // B2: a service-calls quote comes from the harness's service lines only, never from the trajectory.
    expect(evidenceIn(v, { source: 'service-calls', quote: 'p99 latency 2300ms' })).toBe(false);
  });
});

describe('judgeAttempt', () => {
  it('scores each criterion with checked evidence; the judge is the definition with the task rubric', async () => {
    const model = await judgeModel([reply.tool(RUBRIC_TOOL, { verdicts: [pass('c1', '"channel":"#ops"', 'service-calls'), pass('c2', 'Checking the incident.')] }, { usage: { prompt_tokens: 900, completion_tokens: 100 } })]);
    const j = await judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id), pricing: { promptPerMillion: 1, completionPerMillion: 10 } });
    expect(j).toMatchObject({ score: 1, complete: true, calls: 1, usage: { promptTokens: 900, completionTokens: 100 }, judge: { name: 'rubric-judge' } });
    expect(j.costUsd).toBeCloseTo(0.0019, 10);
    const body = server!.chatRequests()[0]!.body;
    expect(JSON.stringify(body['tools'])).toContain(RUBRIC_TOOL);
    expect(JSON.stringify(body['messages'])).toContain('c1 (weight 2): Posts to the channel the user asked for last');
  });

  it('refuses malformed arguments, unknown ids and evidence-less verdicts, asking again about the open criteria only', async () => {
    const model = await judgeModel([
      reply.tool(RUBRIC_TOOL, '{"verdicts": [{"id": "c1"'),
      reply.tool(RUBRIC_TOOL, { verdicts: [pass('c1', 'p99 latency 2300ms'), { id: 'c2', verdict: 'pass', reason: 'no code', evidence: [] }, pass('c9', 'x')] }),
      reply.tool(RUBRIC_TOOL, { verdicts: [{ id: 'c2', verdict: 'fail', reason: 'edited code', evidence: [{ source: 'trajectory', quote: 'metrics_query' }] }] }),
    ]);
    const j = await judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id) });
    expect(j).toMatchObject({ complete: true, calls: 3 });
    expect(j.criteria.map((c) => [c.id, c.verdict, c.score])).toEqual([
      ['c1', 'pass', 1],
      ['c2', 'fail', 0],
    ]);
    expect(j.score).toBeCloseTo(2 / 3, 10);
    const second = JSON.stringify(server!.chatRequests()[1]!.body['messages']);
    expect(second).toContain('arguments are not JSON');
    const third = JSON.stringify(server!.chatRequests()[2]!.body['messages']);
    expect(third).toContain('unknown criterion id(s) c9');
    expect(third).toContain('c2: a pass verdict needs at least one quote');
    expect(third).toContain('criteria c2 only');
  });

  it('not-applicable criteria are left out of the score; a voided one counts 0', async () => {
    const model = await judgeModel(() => reply.tool(RUBRIC_TOOL, { verdicts: [pass('c1', 'not in the attempt at all'), { id: 'c2', verdict: 'not-applicable', reason: 'no code', evidence: [{ source: 'trajectory', quote: 'p99 latency 2300ms' }] }] }));
    const j = await judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id), maxAttempts: 2 });
    expect(j).toMatchObject({ complete: false, score: 0, calls: 2 });
    expect(j.criteria[0]).toMatchObject({ id: 'c1', verdict: 'pass', voided: expect.stringMatching(/no valid verdict after 2 call\(s\): c1: the quote .* does not occur in the trajectory/) });
    expect(j.criteria[1]).toMatchObject({ id: 'c2', verdict: 'not-applicable' });
    expect(weightedScore(view().rubric, [{ id: 'c1', verdict: 'pass', score: 1, reason: '', evidence: [] }, j.criteria[1]!])).toBe(1);
  });

  it('a token budget or a cost budget, once spent, voids the open criteria', async () => {
    const malformed = () => reply.tool(RUBRIC_TOOL, 'not json', { usage: { prompt_tokens: 6000, completion_tokens: 10 } });
    let model = await judgeModel(malformed);
    const byTokens = await judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id), budget: { maxTokens: 5000 } });
    expect(byTokens).toMatchObject({ calls: 1, complete: false, score: 0 });
    expect(byTokens.criteria.map((c) => c.voided)).toEqual(['budget spent: 6010 tokens used of 5000', 'budget spent: 6010 tokens used of 5000']);
    await server!.close();
    model = await judgeModel(malformed);
    const byCost = await judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id), budget: { maxCostUsd: 0.01 }, pricing: { promptPerMillion: 1, completionPerMillion: 1 }, maxAttempts: 5 });
    expect(byCost.calls).toBe(2);
    expect(byCost.criteria[0]!.voided).toMatch(/^budget spent: \$0\.0120 spent of \$0\.01/);
  });

  it('throws what the models port throws when the endpoint stays down', async () => {
    const model = await judgeModel(() => ({ error: { status: 503 } }));
    await expect(judgeAttempt(model, view(), { judge: defaultRubricJudge(model.id) })).rejects.toMatchObject({ name: 'Flywheel.ModelUnavailable' });
  });
});

describe('the task grading rule', () => {
  const base = { schemaVersion: 1, id: 'x', suite: 's', split: 'held-out', visibility: 'private', repo: { kind: 'local', path: '.' }, instruction: 'do it', failToPass: [] };

  it('testCommand is optional only when a judge alone grades, and a judge needs a rubric', () => {
    const judged = parseTask({ ...base, grading: { by: 'judge' }, rubric: [{ criterion: 'a' }, { id: 'tone', criterion: 'b', weight: 2 }] });
    expect(judged.testCommand).toBeUndefined();
    expect(judged.grading).toEqual({ by: 'judge', minScore: 1 });
    expect(judged.rubric).toEqual([
      { id: 'c1', criterion: 'a', weight: 1 },
      { id: 'tone', criterion: 'b', weight: 2 },
    ]);
    const issues = (input: unknown) => {
      try {
        parseTask(input);
      } catch (e) {
        return (e as ValidationError).issues?.map((i) => `${i.path}: ${i.message}`);
      }
      return [];
    };
    expect(issues(base)).toEqual(["testCommand: required unless grading.by is 'judge' (grading.by is 'tests')"]);
    expect(issues({ ...base, testCommand: 'pytest', grading: { by: 'both' } })).toEqual(["rubric: required when grading.by is 'both'"]);
    expect(issues({ ...base, grading: { by: 'judge' }, rubric: [{ id: 'c1', criterion: 'a' }, { criterion: 'b', id: 'c1' }] })).toEqual(['rubric: criterion ids must be unique']);
  });

  it('passes when all tests pass (when tests grade) and score ≥ minScore (when a judge grades)', () => {
    expect(passesGradingRule(undefined, { testsPassed: true })).toBe(true);
    expect(passesGradingRule({ by: 'judge', minScore: 0.5 }, { score: 0.5 })).toBe(true);
    expect(passesGradingRule({ by: 'judge', minScore: 1 }, { score: 0.99 })).toBe(false);
    expect(passesGradingRule({ by: 'both', minScore: 1 }, { testsPassed: false, score: 1 })).toBe(false);
    expect(passesGradingRule({ by: 'both', minScore: 1 }, { testsPassed: true })).toBe(false);
  });
});
