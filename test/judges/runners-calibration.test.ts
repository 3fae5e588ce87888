/**
 * Rubric and pairwise judges calibrated against people through their runners: a gold set of stored attempts (attempt
 * records with their trajectory and diff blobs, the task's rubric in the registry) labelled by people, judges scripted
 * over the scripted model server (real HTTP, the OpenAI driver) with known errors, `calibrateJudge` storing the report
 * in the judge registry. A rubric judge that errs on 4 of 40 attempts on one criterion has kappa 0.8 there; a voided
 * verdict gives no label. A pairwise judge swayed by position is inconsistent under swapping, an unbiased one is not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { evalPartition } from '../../lib/harness/attempt/record-keys.ts';
import { createGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { calibrateJudge } from '../../lib/judges/calibrate-judge.ts';
import { decideAcceptance } from '../../lib/judges/calibration/acceptance-rule.ts';
import { defaultPairwiseJudge, judgePair, PAIRWISE_TOOL } from '../../lib/judges/pairwise/judge-pair.ts';
import { latestCalibration } from '../../lib/judges/registry/calibrations.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { defaultRubricJudge, RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { loadAttemptView } from '../../lib/judges/runners/load-attempt-view.ts';
import { pairwiseJudgeRunner } from '../../lib/judges/runners/pairwise-runner.ts';
import { rubricJudgeRunner } from '../../lib/judges/runners/rubric-runner.ts';
import type { Subject } from '../../lib/judges/schemas.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptStep } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { labelGoldSetWith } from './support/annotation-fixture.ts';
import { seedAttempt, seedCalcTask, userMessage } from './support/attempt-fixture.ts';

const tempDir = tempDirs('flywheel-runners-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type AttemptRef = { runId: string; attemptId: string };
const RUBRIC = [
  { id: 'adds', criterion: 'add returns the sum of its arguments' },
  { id: 'quiet', criterion: 'no debug print is left in the code' },
];

async function openPorts(): Promise<LocalPorts> {
  const ports = openLocalPorts(tempDir());
  cleanups.push(() => ports.close());
  await seedCalcTask(ports, RUBRIC);
  return ports;
}

/** Stores attempt `n` of run `runId`: a diff (tagged `att-<n>`) that adds or subtracts, with or without a debug print, and its trajectory. */
async function seedCalcAttempt(ports: LocalPorts, runId: string, n: number, shape: { good: boolean; prints: boolean }): Promise<AttemptRef> {
  const tag = `att-${n}`;
  const diff = `--- a/calc.py\n+++ b/calc.py\n+# ${tag}\n+def add(a, b):\n${shape.prints ? '+    print("debug")\n' : ''}+    return a ${shape.good ? '+' : '-'} b\n`;
  const trajectory = [
    { type: 'header', format: 'flywheel-trajectory', schemaVersion: 1, attemptId: `${runId}.add.strict.${n}`, agent: { name: 'scripted', version: '1' } },
    { type: 'message', role: 'user', content: 'Write add(a, b) in calc.py returning the sum.' },
    { type: 'assistant', content: `I wrote add in calc.py (${tag}).`, toolCalls: [] },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
  return seedAttempt(ports, runId, n, { diff, trajectory });
}

/**
 * The scripted rubric judge: right on both criteria, except `adds` on the tags in `wrong` (the opposite verdict,
 * quoting the diff truly) and `quiet` on the tags in `badQuote` (a quote that is in no part of the attempt).
 */
function scriptedRubricJudge(wrong: ReadonlySet<string>, badQuote: ReadonlySet<string>): (request: RecordedRequest) => ScriptStep {
  return (request) => {
    const user = userMessage(request);
    const tag = /# (att-\d+)/.exec(user)![1]!;
    const good = user.includes('return a + b');
    const adds = good !== wrong.has(tag);
    const prints = user.includes('print("debug")');
    return reply.tool(RUBRIC_TOOL, {
      verdicts: [
        { id: 'adds', verdict: adds ? 'pass' : 'fail', reason: 'what add returns', evidence: [{ source: 'diff', quote: 'def add(a, b):' }] },
        {
          id: 'quiet',
          verdict: prints ? 'fail' : 'pass',
          reason: 'debug output',
          evidence: [{ source: 'diff', quote: badQuote.has(tag) ? 'console.log("debug")' : prints ? 'print("debug")' : 'def add(a, b):' }],
        },
      ],
    });
  };
}

function judgeModel(server: ScriptedModelServer) {
  return openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } });
}

async function serve(script: Parameters<typeof startScriptedModelServer>[0]): Promise<ScriptedModelServer> {
  const server = await startScriptedModelServer(script);
  cleanups.push(() => server.close());
  return server;
}

describe('rubric judge runner', () => {
  it('calibrates a rubric judge with a known error rate on a gold set of attempts: per-criterion kappa, stored', async () => {
    const ports = await openPorts();
    const truth = new Map<string, Record<string, string>>();
    const subjects: Subject[] = [];
    for (let n = 0; n < 40; n++) {
      const shape = { good: n % 2 === 0, prints: n % 4 >= 2 };
      const ref = await seedCalcAttempt(ports, 'r1', n, shape);
      subjects.push({ kind: 'attempt', ...ref });
      truth.set(ref.attemptId, { adds: shape.good ? 'pass' : 'fail', quiet: shape.prints ? 'fail' : 'pass' });
    }
    // Wrong on `adds` for two good and two bad attempts: confusion [[18, 2], [2, 18]], kappa (0.9 - 0.5) / 0.5 = 0.8.
    const server = await serve(scriptedRubricJudge(new Set(['att-1', 'att-2', 'att-5', 'att-6']), new Set(['att-3'])));
    const definition = defaultRubricJudge(`openai:judge@${server.baseUrl}`);
    const { ref } = await registerJudge(ports, { name: 'calc-judge', kind: 'rubric', model: definition.model, prompt: definition.prompt, outputSchema: definition.outputSchema });
    await createGoldSet(ports, { name: 'calc-gold', judge: 'calc-judge', labels: ['adds', 'quiet'], twoPersonFraction: 0.3, subjects });
    expect(await labelGoldSetWith(ports, 'calc-gold', (s) => truth.get((s as AttemptRef).attemptId)!)).toBe(40);

    const run = rubricJudgeRunner(ports, { model: judgeModel(server), definition, budget: { maxCalls: 3 } });
    const one = await run(subjects[3]!);
    expect(one.labels).toEqual({ adds: 'fail' }); // att-3's `quiet` quote is in no part of the attempt: voided, left out
    expect(one.latencyMs).toBeGreaterThanOrEqual(0);

    const report = await calibrateJudge(ports, { judge: ref, goldSet: 'calc-gold', run, seed: 7, resamples: 300, retestFraction: 0.25 });
    const adds = report.criteria.find((c) => c.id === 'adds')!;
    expect(adds.n).toBe(40);
    expect(adds.accuracy).toBeCloseTo(0.9, 10);
    expect(adds.kappa.estimate).toBeCloseTo(0.8, 10);
    expect(adds.kappa.low).toBeLessThan(0.8);
    expect(adds.kappa.high).toBeGreaterThan(0.8);
    expect(adds.perClass['pass']).toMatchObject({ precision: 0.9, recall: 0.9, support: 20 });
    expect(adds.humanCeiling?.estimate).toBe(1);
    const quiet = report.criteria.find((c) => c.id === 'quiet')!;
    expect(quiet.n).toBe(39);
    expect(quiet.kappa.estimate).toBe(1);
    expect(report.testRetest?.agreement).toBe(1);
    expect(report.positionSwap).toBeUndefined();
    expect(report.latencyMs?.p50).toBeGreaterThanOrEqual(0);
    expect((await latestCalibration(ports, ref))?.id).toBe(report.id);
    // The acceptance rule reads it: quiet clears 0.6 at its lower bound; adds (0.8, with 40 items) does not clear 0.85.
    expect(decideAcceptance(report, undefined, { minKappaLower: 0.85, maxKappaDrop: 0, minItems: 30, requireCheaper: false }).reasons.join('\n')).toMatch(/adds/);
  }, 60_000);

  it('shows the judge the test outcomes of a judge-graded attempt, never the earlier judge verdict', async () => {
    const ports = await openPorts();
    const ref = await seedCalcAttempt(ports, 'rg', 0, { good: true, prints: false });
    const key = { pk: evalPartition('rg'), sk: ref.attemptId };
    const stored = attemptRecord.decode((await ports.records.get(key.pk, key.sk))!);
    const grade = { passed: false, testsPassed: true, perTest: { 'test_add.py::test_sum': 'passed' }, reasons: ['judge-score-below-threshold: 0.5 < 0.8'], judgement: { score: 0.5 } };
    await ports.records.put(attemptRecord.encode({ ...stored, grade }));
    const view = await loadAttemptView(ports, ref);
    expect(view.tests).toBe('tests passed\ntest_add.py::test_sum: passed');
    expect(JSON.stringify(view)).not.toContain('judge-score');
    await ports.records.put(attemptRecord.encode({ ...stored, grade: { passed: false, reasons: ['judge-score-below-threshold: 0.5 < 0.8'], judgement: { score: 0.5 } } }));
    expect((await loadAttemptView(ports, ref)).tests).toBe('');
  });

  it('refuses a subject that is not an attempt, an attempt not stored, and a judge that is not a rubric judge', async () => {
    const ports = await openPorts();
    const server = await serve(() => reply.text('unused'));
    const definition = defaultRubricJudge(`openai:judge@${server.baseUrl}`);
    const run = rubricJudgeRunner(ports, { model: judgeModel(server), definition });
    await expect(run({ kind: 'signal', signalKey: 'feedback:x' })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'subject.kind' }] });
    await expect(run({ kind: 'attempt', runId: 'nope', attemptId: 'ATTEMPT#add#strict#0' })).rejects.toMatchObject({ issues: [{ path: 'subject.attemptId' }] });
    expect(() => rubricJudgeRunner(ports, { model: judgeModel(server), definition: defaultPairwiseJudge(definition.model) })).toThrow(/not a rubric judge/);
    expect(server.chatRequests()).toHaveLength(0);
  });
});

/** 30 pairs of one good and one bad attempt, the good one on side a for even pairs and on side b for odd ones. */
async function seedPairs(ports: LocalPorts): Promise<{ subjects: Subject[]; truth: Map<string, string> }> {
  const subjects: Subject[] = [];
  const truth = new Map<string, string>();
  for (let i = 0; i < 30; i++) {
    const good = await seedCalcAttempt(ports, 'rp', 2 * i, { good: true, prints: false });
    const bad = await seedCalcAttempt(ports, 'rp', 2 * i + 1, { good: false, prints: i % 3 === 0 });
    const [a, b] = i % 2 === 0 ? [good, bad] : [bad, good];
    subjects.push({ kind: 'pair', a: { kind: 'attempt', ...a }, b: { kind: 'attempt', ...b } });
    truth.set(`${a.attemptId}|${b.attemptId}`, i % 2 === 0 ? 'a' : 'b');
  }
  return { subjects, truth };
}

function sides(request: RecordedRequest): { a: string; b: string } {
  const [a, b] = userMessage(request).split('\n# Attempt B\n');
  return { a: a!, b: b! };
}

/** Prefers the attempt whose diff returns the sum, quoting it from that side. */
const unbiasedPairJudge = (request: RecordedRequest): ScriptStep => {
  const { a } = sides(request);
  const side = a.includes('return a + b') ? 'a' : 'b';
  return reply.tool(PAIRWISE_TOOL, { preference: side, reason: 'it returns the sum', evidence: [{ side, source: 'diff', quote: 'def add(a, b):' }] });
};

/** Always prefers the attempt shown first (quoting its tag truly, so its answers pass the evidence check). */
const firstPositionJudge = (request: RecordedRequest): ScriptStep => {
  const tag = /# (att-\d+)/.exec(sides(request).a)![1]!;
  return reply.tool(PAIRWISE_TOOL, { preference: 'a', reason: 'A looks fine', evidence: [{ side: 'a', source: 'diff', quote: `+# ${tag}\n+def add(a, b):` }] });
};

describe('pairwise judge', () => {
  it('shows position bias as low swap consistency, and an unbiased judge as high', async () => {
    const ports = await openPorts();
    const { subjects, truth } = await seedPairs(ports);
    const pairKey = (s: Subject) => (s.kind === 'pair' ? `${s.a.attemptId}|${s.b.attemptId}` : '');
    const results: Record<string, { consistency: number; kappa: number; accuracy: number }> = {};
    for (const [name, script] of [
      ['fair-judge', unbiasedPairJudge],
      ['first-judge', firstPositionJudge],
    ] as const) {
      const server = await serve(script);
      const definition = { ...defaultPairwiseJudge(`openai:judge@${server.baseUrl}`), name };
      const { ref } = await registerJudge(ports, { name, kind: 'pairwise', model: definition.model, prompt: definition.prompt, outputSchema: definition.outputSchema });
      await createGoldSet(ports, { name: `${name}-gold`, judge: name, labels: ['preference'], subjects });
      expect(await labelGoldSetWith(ports, `${name}-gold`, (s) => ({ preference: truth.get(pairKey(s))! }))).toBe(30);
      const run = pairwiseJudgeRunner(ports, { model: judgeModel(server), definition });
      const report = await calibrateJudge(ports, { judge: ref, goldSet: `${name}-gold`, run, seed: 2, resamples: 200, retestFraction: 0 });
      const preference = report.criteria.find((c) => c.id === 'preference')!;
      expect(preference.n).toBe(30);
      results[name] = { consistency: report.positionSwap!.consistency, kappa: preference.kappa.estimate, accuracy: preference.accuracy };
      expect(report.positionSwap!.n).toBe(30);
      expect((await latestCalibration(ports, ref))?.positionSwap?.consistency).toBe(report.positionSwap!.consistency);
      // Every pair was judged twice: once as labelled, once swapped (a and b exchanged in the prompt).
      expect(server.chatRequests()).toHaveLength(60);
    }
    expect(results['fair-judge']).toEqual({ consistency: 1, kappa: 1, accuracy: 1 });
    expect(results['first-judge']!.consistency).toBe(0);
    expect(results['first-judge']!.accuracy).toBeCloseTo(0.5, 10);
    expect(results['first-judge']!.kappa).toBeLessThan(0.2);
  }, 60_000);

  it('checks each quote against the side it names, asks again, and voids what stays wrong', async () => {
    const ports = await openPorts();
    const good = await seedCalcAttempt(ports, 'rq', 0, { good: true, prints: false });
    const bad = await seedCalcAttempt(ports, 'rq', 1, { good: false, prints: true });
    const [viewA, viewB] = [await loadAttemptView(ports, good), await loadAttemptView(ports, bad)];
    expect(viewA.rubric.map((c) => c.id)).toEqual(['adds', 'quiet']);
    expect(viewA.finalMessage).toContain('I wrote add in calc.py (att-0).');

    // First a quote of B's diff named as A's, then no evidence for a preference, then a right answer.
    const server = await serve([
      reply.tool(PAIRWISE_TOOL, { preference: 'a', reason: 'sum', evidence: [{ side: 'a', source: 'diff', quote: 'print("debug")' }] }),
      reply.tool(PAIRWISE_TOOL, { preference: 'a', reason: 'sum', evidence: [] }),
      reply.tool(PAIRWISE_TOOL, { preference: 'a', reason: 'A returns the sum', evidence: [{ side: 'a', source: 'diff', quote: 'def  add(a,   b):' }, { side: 'b', source: 'diff', quote: 'print("debug")' }] }),
    ]);
    const judge = defaultPairwiseJudge(`openai:judge@${server.baseUrl}`);
    const j = await judgePair(judgeModel(server), viewA, viewB, { judge });
    expect(j).toMatchObject({ preference: 'a', complete: true, calls: 3, reason: 'A returns the sum' });
    expect(j.voided).toBeUndefined();
    expect(j.evidence.map((e) => e.side)).toEqual(['a', 'b']);
    const requests = server.chatRequests();
    expect((requests[0]!.body['tools'] as Array<{ function: { name: string } }>)[0]!.function.name).toBe(PAIRWISE_TOOL);
    expect(JSON.stringify(requests[1]!.body['messages'])).toContain('does not occur in the diff of attempt A');
    expect(JSON.stringify(requests[2]!.body['messages'])).toContain('preferring a needs at least one quote');

    // A judge whose quote is never there is voided after its answers; the runner then gives no label.
    const liar = await serve(() => reply.tool(PAIRWISE_TOOL, { preference: 'b', reason: 'B', evidence: [{ side: 'b', source: 'diff', quote: 'return a * b' }] }));
    const liarJudge = defaultPairwiseJudge(`openai:judge@${liar.baseUrl}`);
    const voided = await judgePair(judgeModel(liar), viewA, viewB, { judge: liarJudge, maxAttempts: 2 });
    expect(voided).toMatchObject({ preference: 'b', complete: false, calls: 2 });
    expect(voided.voided).toMatch(/no valid answer after 2 call\(s\): the quote "return a \* b" does not occur/);
    const run = pairwiseJudgeRunner(ports, { model: judgeModel(liar), definition: liarJudge, budget: { maxCalls: 1 } });
    const labels = await run({ kind: 'pair', a: { kind: 'attempt', ...good }, b: { kind: 'attempt', ...bad } });
    expect(labels.labels).toEqual({});
    expect(liar.chatRequests()).toHaveLength(3);
    await expect(run({ kind: 'attempt', ...good })).rejects.toMatchObject({ issues: [{ path: 'subject.kind' }] });
    await expect(run({ kind: 'pair', a: { kind: 'attempt', ...good }, b: { kind: 'attempt', runId: 'rq', attemptId: 'ATTEMPT#add#strict#9' } })).rejects.toMatchObject({
      issues: [{ path: 'subject.b.attemptId' }],
    });
  }, 60_000);
});
