/**
 * Calibrating a judge against people: a gold set of signals labelled by people (a two-person slice among them), the
 * failure-mode chain's judge scripted over the scripted model server (real HTTP, the OpenAI driver) with known
 * errors, `calibrateJudge` with bounded concurrency, test–retest and, for a pairwise judge, position swap; the report
 * is stored in the judge registry.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { calibrateJudge, CalibrationErrorNames, failureModeJudgeRunner, JudgeNoVerdictError } from '../../lib/judges/calibrate-judge.ts';
import { latestCalibration } from '../../lib/judges/registry/calibrations.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import type { JudgeRunner, Subject } from '../../lib/judges/schemas.ts';
import { labelAnnotation, listAllAnnotations } from '../../lib/judges/annotation/annotation-queue.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { ValidationError } from '../../lib/errors.ts';
import { ModelErrorNames, ModelRequestError, ModelUnavailableError } from '../../lib/models/model-errors.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempPorts } from '../modes/support/modes-fixture.ts';
import { labelGoldSet, SCOPE_LABEL, scriptedFailureModeJudge, storeSignals } from './support/annotation-fixture.ts';

let env: ReturnType<typeof tempPorts> | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  env?.cleanup();
});

describe('calibrateJudge', () => {
  it('calibrates the failure-mode judge on a labelled gold set and stores the report', async () => {
    env = tempPorts();
    const ports = env.ports;
    const signals = await storeSignals(ports, 20);
    // The judge misses two scope-creep signals and flags one praise: 37 of 40 right.
    const wrong = new Set(['s-yes-0', 's-yes-1', 's-no-0']);
    server = await startScriptedModelServer(scriptedFailureModeJudge(wrong));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } });
    const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: `openai:judge@${server.baseUrl}`, taxonomyVersion: 1 });
    await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL], subjects: signals.map((s) => ({ kind: 'signal', signalKey: s.key })) });
    const truth = new Map(signals.map((s) => [s.key, s.truth]));
    expect(await labelGoldSet(ports, 'fm-gold', (k) => truth.get(k)!)).toBe(40);

    const runner = failureModeJudgeRunner(ports, { model });
    let inFlight = 0;
    let maxInFlight = 0;
    const counted: JudgeRunner = async (subject) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        return await runner(subject);
      } finally {
        inFlight--;
      }
    };
    const report = await calibrateJudge(ports, { judge: ref, goldSet: 'fm-gold', run: counted, concurrency: 4, retestFraction: 0.25, seed: 3, resamples: 200 });

    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(maxInFlight).toBeGreaterThan(1);
    const scope = report.criteria.find((c) => c.id === SCOPE_LABEL)!;
    expect(scope.n).toBe(40);
    expect(scope.accuracy).toBeCloseTo(37 / 40, 10);
    // Rows the people's label, columns the judge's.
    const at = (gold: string, judge: string) => scope.confusion.matrix[scope.confusion.labels.indexOf(gold)]![scope.confusion.labels.indexOf(judge)];
    expect([at('yes', 'yes'), at('yes', 'no'), at('no', 'yes'), at('no', 'no')]).toEqual([18, 2, 1, 19]);
    expect(scope.kappa.estimate).toBeCloseTo(0.85, 10);
    expect(scope.kappa.low).toBeLessThanOrEqual(scope.kappa.estimate);
    expect(scope.humanCeiling?.estimate).toBe(1);
    // The retest sample was judged again (the scripted judge is deterministic: perfect agreement).
    expect(report.testRetest!.n).toBeGreaterThan(0);
    expect(report.testRetest!.agreement).toBe(1);
    // Test–retest pools every label the judge gives (one per mode of the taxonomy) over the items judged again.
    const modes = Object.keys((await runner({ kind: 'signal', signalKey: signals[0]!.key })).labels).length;
    expect(modes).toBe(8);
    expect(server.chatRequests().length - 41).toBe(report.testRetest!.n / modes);
    expect(report.latencyMs!.p50).toBeGreaterThan(0);
    expect(report.positionSwap).toBeUndefined();
    expect(await latestCalibration(ports, ref)).toEqual(report);
  });

  it('judges every pair twice, a and b swapped, for position-swap consistency', async () => {
    env = tempPorts();
    const ports = env.ports;
    const { ref } = await registerJudge(ports, { name: 'pair-judge', kind: 'pairwise', model: 'openai:judge@http://127.0.0.1:9/v1', prompt: 'Which attempt is better?' });
    const attempt = (n: number) => ({ kind: 'attempt' as const, runId: 'r', attemptId: `ATTEMPT#t#strict#${n}` });
    const subjects: Subject[] = Array.from({ length: 10 }, (_, i) => ({ kind: 'pair', a: attempt(2 * i), b: attempt(2 * i + 1) }));
    await createGoldSet(ports, { name: 'pairs', judge: 'pair-judge', labels: ['preference'], twoPersonFraction: 0, subjects });
    for (const item of await listAllAnnotations(ports, { queue: 'gold:pairs', status: 'pending' })) {
      await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { preference: 'a' } });
    }
    // A judge with a position bias: whatever is shown first wins, except on pair 0, where it picks the better attempt.
    const seen: Subject[] = [];
    const biased: JudgeRunner = async (subject) => {
      seen.push(subject);
      const first = subject.kind === 'pair' ? Number(subject.a.attemptId.split('#').at(-1)) : 0;
      return { labels: { preference: first === 1 ? 'b' : 'a' }, latencyMs: 1, costUsd: 0.001 };
    };
    const report = await calibrateJudge(ports, { judge: ref, goldSet: 'pairs', run: biased, retestFraction: 0, resamples: 100 });
    expect(seen).toHaveLength(20);
    // Swapped, only pair 0 flips its choice with the positions (a, then b): one pair of ten is consistent.
    expect(report.positionSwap).toEqual({ n: 10, consistency: 0.1 });
    expect(report.costPerVerdictUsd).toBeCloseTo(0.001, 10);
    expect(report.testRetest).toBeUndefined();
  });

  it('refuses a gold set without labelled items, and leaves out an item the judge cannot answer', async () => {
    env = tempPorts();
    const ports = env.ports;
    const signals = await storeSignals(ports, 2, 'x');
    const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: 'openai:judge@http://127.0.0.1:9/v1' });
    await createGoldSet(ports, { name: 'g', judge: 'fm-judge', labels: [SCOPE_LABEL], twoPersonFraction: 0, subjects: signals.map((s) => ({ kind: 'signal', signalKey: s.key })) });
    const error = await calibrateJudge(ports, { judge: ref, goldSet: 'g', run: async () => ({ labels: {}, latencyMs: 1 }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]!.path).toBe('goldSet');

    const truth = new Map(signals.map((s) => [s.key, s.truth]));
    await labelGoldSet(ports, 'g', (k) => truth.get(k)!);
    // The judge never answers validly on x-no-1: three answers of an unknown mode, then the runner gives up.
    server = await startScriptedModelServer((request) => {
      const user = (request.body['messages'] as Array<{ role: string; content: string }>).find((m) => m.role === 'user')!.content;
      if (user.includes('[x-no-1]')) return reply.tool(JUDGE_TOOL, { modes: [{ mode: 'made-up', severity: 'low' }], evidence: 'x', evidenceSource: 'comment', confidence: 1 });
      return scriptedFailureModeJudge(new Set())(request);
    });
    const run = failureModeJudgeRunner(ports, { model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } }) });
    const bad = signals.find((s) => s.tag === 'x-no-1')!;
    const refused = await run({ kind: 'signal', signalKey: bad.key }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JudgeNoVerdictError);
    expect((refused as Error).name).toBe(CalibrationErrorNames.noVerdict);
    const report = await calibrateJudge(ports, { judge: ref, goldSet: 'g', run, retestFraction: 0, resamples: 100 });
    expect(report.criteria[0]).toMatchObject({ id: SCOPE_LABEL, n: 3, accuracy: 1, goldItems: 4, coverage: 0.75 });
    // The item it could not answer counts as unanswered: the acceptance rule sees the coverage.
    expect(report.coverage).toEqual({ goldItems: 4, answered: 3, share: 0.75 });
  });

  it('fails on a model endpoint that stays down (for the state machine to retry), storing no report', async () => {
    env = tempPorts();
    const ports = env.ports;
    const signals = await storeSignals(ports, 3, 'y');
    const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: 'openai:judge@http://127.0.0.1:9/v1' });
    await createGoldSet(ports, { name: 'g', judge: 'fm-judge', labels: [SCOPE_LABEL], twoPersonFraction: 0, subjects: signals.map((s) => ({ kind: 'signal', signalKey: s.key })) });
    const truth = new Map(signals.map((s) => [s.key, s.truth]));
    await labelGoldSet(ports, 'g', (k) => truth.get(k)!);
    // The endpoint answers 503 on one signal, through every retry of the models port: an infrastructure error.
    server = await startScriptedModelServer((request) => {
      const user = (request.body['messages'] as Array<{ role: string; content: string }>).find((m) => m.role === 'user')!.content;
      return user.includes('[y-yes-1]') ? reply.error(503) : scriptedFailureModeJudge(new Set())(request);
    });
    const run = failureModeJudgeRunner(ports, { model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } }) });
    const error = await calibrateJudge(ports, { judge: ref, goldSet: 'g', run, concurrency: 1, retestFraction: 0, resamples: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).name).toBe(ModelErrorNames.unavailable);
    expect(await latestCalibration(ports, ref)).toBeUndefined();
    // A request the endpoint refuses for good is rethrown too (not counted as a missing verdict).
    const refused = await calibrateJudge(ports, {
      judge: ref,
      goldSet: 'g',
      retestFraction: 0,
      run: async () => {
        throw new ModelRequestError('401 from the endpoint', 401);
      },
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ModelRequestError);
    expect(await latestCalibration(ports, ref)).toBeUndefined();
  });
});
