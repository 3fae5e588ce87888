/**
 * The drift watch: every judge–user disagreement is queued for people and a deterministic sample of the other
 * verdicts; through the local runtime's tail of the event log (the twin of EventBridge → SQS → Lambda), tenants kept
 * apart; people's labels of drift items form a rolling window whose kappa, once it drops below the judge's
 * calibration, demotes the judge and tells people (once, through a real webhook).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scopePortsToTenant } from '../../lib/auth/tenant-ports.ts';
import { inFraction, subjectKey } from '../../lib/judges/annotation/annotation-item.ts';
import { listAllAnnotations, listAnnotations } from '../../lib/judges/annotation/annotation-queue.ts';
import { createGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { calibrateJudge, failureModeJudgeRunner } from '../../lib/judges/calibrate-judge.ts';
import { checkDrift } from '../../lib/judges/drift/check-drift.ts';
import { buildCalibrationReport } from '../../lib/judges/calibration/build-calibration-report.ts';
import { saveCalibrationReport } from '../../lib/judges/registry/calibrations.ts';
import { labelAnnotationAndWatch } from '../../lib/judges/drift/label-and-watch.ts';
import { startLocalDriftWatch } from '../../lib/judges/drift/local/local-drift-watch.ts';
import { DEFAULT_SAMPLE_FRACTION, watchVerdict } from '../../lib/judges/drift/watch-verdicts.ts';
import { JUDGE_VERDICT, type JudgeVerdictDetail } from '../../lib/judges/events.ts';
import { judgeRefString, type JudgeRef } from '../../lib/judges/judge-identity.ts';
import { promoteJudge } from '../../lib/judges/registry/promote-judge.ts';
import { getJudge } from '../../lib/judges/registry/read-judges.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { MODE_IDS } from '../../lib/modes/taxonomy/taxonomy.ts';
import { ValidationError } from '../../lib/errors.ts';
import { makeWatchVerdictsHandler } from '../../lib/judges/drift/consumers/watch-verdicts-consumer.ts';
import { sqsRecord } from '../support/lambda-events.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempPorts } from '../modes/support/modes-fixture.ts';
import { labelGoldSet, SCOPE, SCOPE_LABEL, scriptedFailureModeJudge, storeSignals } from './support/annotation-fixture.ts';

let env: ReturnType<typeof tempPorts> | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  env?.cleanup();
  env = undefined;
});

const REF: JudgeRef = { name: 'fm-judge', version: 'aaaaaaaaaaaa' };
const fineLabels = () => Object.fromEntries(MODE_IDS.map((m) => [`mode:${m}`, 'no']));

function verdict(signalKey: string, fine: boolean, userRating: 'up' | 'down', ref: JudgeRef = REF): JudgeVerdictDetail {
  const labels = fineLabels();
  if (!fine) labels[SCOPE_LABEL] = 'yes';
  return { judge: ref, subject: { kind: 'signal', signalKey }, labels, fine, userRating, at: '2026-12-01T00:00:00Z' };
}

async function startWebhook(): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

describe('the drift watch queues production verdicts', () => {
  it('queues a deterministic 5% sample of all verdicts and every disagreement outside it, with the judge labels', async () => {
    env = tempPorts();
    const ports = env.ports;
    const keys = Array.from({ length: 400 }, (_, i) => `feedback:ev-${i}`);
    const outcomes: string[] = [];
    for (const [i, key] of keys.entries()) outcomes.push((await watchVerdict(ports, verdict(key, true, i < 40 ? 'down' : 'up'))).outcome);
    // A judge that found something wrong agrees with a thumbs-down: no disagreement, only the sample.
    for (const key of keys.slice(0, 10)) outcomes.push((await watchVerdict(ports, verdict(`${key}-x`, false, 'down'))).outcome);
    const inSample = (k: string) => inFraction(`${judgeRefString(REF)}\nsignal:${k}`, DEFAULT_SAMPLE_FRACTION);
    // The sample is drawn over every verdict, disagreements included (it stays unbiased); the rest of the
    // disagreements are queued as such.
    expect(outcomes.slice(0, 40)).toEqual(keys.slice(0, 40).map((k) => (inSample(k) ? 'production-sample' : 'disagreement')));
    const sampled = [...keys, ...keys.slice(0, 10).map((k) => `${k}-x`)].filter(inSample);
    expect(outcomes.filter((o) => o === 'production-sample')).toHaveLength(sampled.length);
    expect(sampled.length).toBeGreaterThan(5);
    expect(sampled.length).toBeLessThan(45);
    const disagreeing = keys.slice(0, 40).filter((k) => !inSample(k)).length;
    expect(disagreeing).toBeGreaterThan(30);

    const disagreements = await listAllAnnotations(ports, { queue: 'drift:fm-judge', reason: 'disagreement', status: 'pending' });
    expect(disagreements).toHaveLength(disagreeing);
    expect(disagreements[0]!.judge).toMatchObject({ ref: REF, fine: true, userRating: 'down', labels: { [SCOPE_LABEL]: 'no' } });
    expect(disagreements[0]!.asks).toEqual(MODE_IDS.map((m) => `mode:${m}`));
    const samples = await listAllAnnotations(ports, { queue: 'drift:fm-judge', reason: 'production-sample', status: 'pending' });
    expect(samples.map((i) => i.subjectKey).sort()).toEqual(sampled.map((k) => `signal:${k}`).sort());
    // The same verdict again queues nothing new.
    await watchVerdict(ports, verdict(keys[0]!, true, 'down'));
    expect(await listAllAnnotations(ports, { reason: 'disagreement', status: 'pending' })).toHaveLength(disagreeing);
    const bad = await watchVerdict(ports, { ...verdict(keys[0]!, true, 'down'), fine: 'yes' }).catch((e: unknown) => e);
    expect((bad as ValidationError).issues.map((i) => i.path)).toEqual(['detail.fine']);
  });

  it('reads judge.verdict from the local event log, per tenant, resuming from its cursor', async () => {
    env = tempPorts();
    const ports = env.ports;
    const watch = startLocalDriftWatch(ports, { pollMs: 20, watch: { sampleFraction: 0 } });
    closers.push(() => watch.stop());
    await ports.events.publish([{ type: JUDGE_VERDICT, detail: verdict('feedback:a', true, 'down') }, { type: JUDGE_VERDICT, detail: verdict('feedback:b', true, 'up') }]);
    await scopePortsToTenant(ports, 'acme').events.publish([{ type: JUDGE_VERDICT, detail: verdict('feedback:c', true, 'down') }]);
    await watch.drain();
    const mine = await listAnnotations(ports, { queue: 'drift:fm-judge' });
    expect(mine.items.map((i) => i.subjectKey)).toEqual(['signal:feedback:a']);
    const theirs = await listAnnotations(scopePortsToTenant(ports, 'acme'), { queue: 'drift:fm-judge' });
    expect(theirs.items.map((i) => i.subjectKey)).toEqual(['signal:feedback:c']);
    await watch.stop();
    // Published while the watch is down: picked up by the next one, and nothing is queued twice.
    await ports.events.publish([{ type: JUDGE_VERDICT, detail: verdict('feedback:d', true, 'down') }]);
    const again = startLocalDriftWatch(ports, { pollMs: 20, watch: { sampleFraction: 0 } });
    closers.push(() => again.stop());
    await again.drain();
    expect((await listAnnotations(ports, { queue: 'drift:fm-judge' })).items.map((i) => i.subjectKey).sort()).toEqual(['signal:feedback:a', 'signal:feedback:d']);
  });
});

describe('the judges/drift-watch Lambda handler', () => {
  it('queues what each EventBridge event on SQS names and reports only the malformed record as failed', async () => {
    env = tempPorts();
    const ports = env.ports;
    const handler = makeWatchVerdictsHandler(ports, { sampleFraction: 0 });
    const event = (detail: unknown) => JSON.stringify({ version: '0', id: 'e', 'detail-type': JUDGE_VERDICT, source: 'flywheel', detail });
    const response = await handler({
      Records: [
        sqsRecord('m1', event(verdict('feedback:one', true, 'down'))),
        sqsRecord('m2', event({ ...verdict('feedback:two', true, 'down'), tenant: 'acme' })),
        sqsRecord('m3', event({ ...verdict('feedback:three', true, 'down'), subject: { kind: 'signal' } })),
        sqsRecord('m4', JSON.stringify({ 'detail-type': 'feedback.stored', detail: { eventIds: ['x'] } })),
      ],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm3' }]);
    expect((await listAnnotations(ports, { reason: 'disagreement' })).items.map((i) => i.subjectKey)).toEqual(['signal:feedback:one']);
    expect((await listAnnotations(scopePortsToTenant(ports, 'acme'), { reason: 'disagreement' })).items.map((i) => i.subjectKey)).toEqual(['signal:feedback:two']);
  });
});

describe('a kappa drop on the rolling window', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('demotes the judge and tells people, once', async () => {
    env = tempPorts();
    const ports = env.ports;
    // Calibrated on a gold set where it agrees with people (kappa 1), then promoted through the acceptance rule.
    const gold = await storeSignals(ports, 20, 'g');
    server = await startScriptedModelServer(scriptedFailureModeJudge(new Set()));
    const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: `openai:judge@${server.baseUrl}` });
    await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL], subjects: gold.map((s) => ({ kind: 'signal', signalKey: s.key })) });
    const truth = new Map(gold.map((s) => [s.key, s.truth]));
    await labelGoldSet(ports, 'fm-gold', (k) => truth.get(k)!);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } });
    const report = await calibrateJudge(ports, { judge: ref, goldSet: 'fm-gold', run: failureModeJudgeRunner(ports, { model }), resamples: 200 });
    expect(report.criteria[0]!.kappa.estimate).toBe(1);
    await promoteJudge(ports, ref, { by: 'ana' });
    expect(await checkDrift(ports, 'fm-judge')).toMatchObject({ status: 'too-few-pairs', pairs: 0, demoted: false });

    // In production it drifts: it finds nothing wrong with scope creep that users thumb down.
    const production = await storeSignals(ports, 15, 'p');
    const watch = startLocalDriftWatch(ports, { pollMs: 20, watch: { sampleFraction: 1 } });
    closers.push(() => watch.stop());
    await ports.events.publish(production.map((s) => ({ type: JUDGE_VERDICT, detail: verdict(s.key, true, s.truth === 'yes' ? 'down' : 'up', ref) })));
    await watch.drain();
    // Everything is sampled here (fraction 1): the 15 disagreements too are sample items, and count in the kappa.
    const items = await listAllAnnotations(ports, { queue: 'drift:fm-judge', status: 'pending' });
    expect(items.filter((i) => i.reason === 'disagreement')).toHaveLength(0);
    expect(items.filter((i) => i.reason === 'production-sample')).toHaveLength(30);

    // People label them, alternating; each label of a drift item runs the check.
    const hook = await startWebhook();
    const log: string[] = [];
    const byKey = new Map(items.map((i) => [i.subjectKey, i]));
    const statuses: string[] = [];
    for (const s of production) {
      const item = byKey.get(subjectKey({ kind: 'signal', signalKey: s.key }))!;
      const { drift } = await labelAnnotationAndWatch(
        ports,
        item.id,
        { annotator: 'ana', labels: s.truth === 'yes' ? { [SCOPE_LABEL]: 'yes' } : {} },
        { drift: { window: 50, maxDrop: 0.2, minN: 10 }, notify: { webhookUrl: hook.url, log: (line) => log.push(line) } },
      );
      statuses.push(drift!.status);
      if (drift!.status === 'dropped') {
        expect(drift).toMatchObject({ demoted: true, notified: true, ref });
        expect(drift!.labels.find((l) => l.id === SCOPE_LABEL)).toMatchObject({ n: 10, kappa: 0, baseline: 1, dropped: true });
      }
    }
    expect(statuses.slice(0, 9).every((s) => s === 'too-few-pairs')).toBe(true);
    expect(statuses[9]).toBe('dropped');
    expect(statuses.slice(10).every((s) => s === 'no-promoted-version')).toBe(true);

    const judge = await getJudge(ports, 'fm-judge');
    expect(judge.promoted).toBeUndefined();
    expect(JSON.stringify(judge)).toContain('drift-watch');
    expect(hook.bodies).toHaveLength(1);
    expect(JSON.stringify(hook.bodies[0])).toContain(`Judge ${judgeRefString(ref)} demoted`);
    expect(log.filter((l) => l.includes('"notice"'))).toHaveLength(1);
    expect(JSON.stringify(log)).toContain(SCOPE);
    const demoted = ports.events.recent({ type: 'judge.demoted' });
    expect(demoted).toHaveLength(1);
    expect(demoted[0]!.detail).toMatchObject({ judge: ref, by: 'drift-watch' });
  });
});

describe('the rolling kappa is computed on the unbiased sample only', () => {
  /** Truth alternates yes/no; the judge is wrong on the items `wrong(i)` names. */
  const truthOf = (i: number): 'yes' | 'no' => (i % 2 === 0 ? 'yes' : 'no');
  const judgeSays = (i: number, wrong: (i: number) => boolean): 'yes' | 'no' => (wrong(i) ? (truthOf(i) === 'yes' ? 'no' : 'yes') : truthOf(i));

  /** A promoted judge calibrated at kappa 0.84 (8% errors on a balanced gold set of 200). */
  async function promotedAt084(ports: ReturnType<typeof tempPorts>['ports']): Promise<JudgeRef> {
    const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: 'openai:judge@http://127.0.0.1:9/v1' });
    const calibrationErrors = (i: number) => i % 25 < 2;
    const items = Array.from({ length: 200 }, (_, i) => ({
      id: `gold-${i}`,
      subject: { kind: 'signal' as const, signalKey: `feedback:gold-${i}` },
      labels: { [SCOPE_LABEL]: truthOf(i) },
      annotators: ['ana'],
    }));
    const verdicts = new Map(items.map((item, i) => [item.id, { labels: { [SCOPE_LABEL]: judgeSays(i, calibrationErrors) }, latencyMs: 1 }]));
    const report = buildCalibrationReport({ id: 'cal-084', judge: ref, goldSet: 'fm-gold', createdAt: '2026-12-01T00:00:00.000Z', items, verdicts, resamples: 500 });
    expect(report.criteria[0]!.kappa.estimate).toBeCloseTo(0.84, 10);
    await saveCalibrationReport(ports, report);
    await promoteJudge(ports, ref, { by: 'ana' });
    return ref;
  }

  /**
   * 800 production verdicts of the judge (wrong on `wrong(i)`), users thumbing down scope creep; the watch samples
   * 15% of them and queues every disagreement outside the sample; people label every queued item with the truth,
   * disagreements first, each label running the drift check.
   */
  async function production(ports: ReturnType<typeof tempPorts>['ports'], ref: JudgeRef, wrong: (i: number) => boolean) {
    const truth = new Map<string, 'yes' | 'no'>();
    for (let i = 0; i < 800; i++) {
      const key = `feedback:prod-${i}`;
      truth.set(`signal:${key}`, truthOf(i));
      const detail = verdict(key, judgeSays(i, wrong) === 'no', truthOf(i) === 'yes' ? 'down' : 'up', ref);
      detail.labels[SCOPE_LABEL] = judgeSays(i, wrong);
      await watchVerdict(ports, detail, { sampleFraction: 0.15 });
    }
    const queued = await listAllAnnotations(ports, { queue: 'drift:fm-judge', status: 'pending' });
    queued.sort((a, b) => (a.reason === b.reason ? 0 : a.reason === 'disagreement' ? -1 : 1));
    const statuses: string[] = [];
    let last: Awaited<ReturnType<typeof checkDrift>> | undefined;
    for (const item of queued) {
      const { drift } = await labelAnnotationAndWatch(ports, item.id, { annotator: 'ana', labels: { [SCOPE_LABEL]: truth.get(item.subjectKey)! } }, { drift: { window: 200, maxDrop: 0.15, minN: 30 } });
      statuses.push(drift!.status);
      last = drift;
    }
    return { queued, statuses, last: last! };
  }

  it('keeps a sound judge (kappa 0.84) promoted however many disagreements people label', async () => {
    env = tempPorts();
    const ports = env.ports;
    const ref = await promotedAt084(ports);
    const { queued, statuses, last } = await production(ports, ref, (i) => i % 25 < 2);
    const disagreements = queued.filter((i) => i.reason === 'disagreement').length;
    const sampled = queued.length - disagreements;
    // Many disagreements beside the sample: all of them the judge's misses, people siding with the user.
    expect(disagreements).toBeGreaterThan(20);
    expect(sampled).toBeGreaterThan(90);
    expect(statuses).not.toContain('dropped');
    expect(statuses.slice(0, disagreements).every((s) => s === 'too-few-pairs')).toBe(true);
    expect(last).toMatchObject({ status: 'ok', pairs: sampled, demoted: false, disagreements: { pairs: disagreements, agreedWithUser: 1 } });
    const scope = last.labels.find((l) => l.id === SCOPE_LABEL)!;
    expect(scope.baseline).toBeCloseTo(0.84, 10);
    expect(scope.kappa!).toBeGreaterThan(0.69);
    expect((await getJudge(ports, 'fm-judge')).promoted).toEqual(ref.version);
  });

  it('still demotes a judge that really degraded (30% wrong in production)', async () => {
    env = tempPorts();
    const ports = env.ports;
    const ref = await promotedAt084(ports);
    const { statuses } = await production(ports, ref, (i) => i % 10 < 3);
    expect(statuses).toContain('dropped');
    expect(statuses.at(-1)).toBe('no-promoted-version');
    expect((await getJudge(ports, 'fm-judge')).promoted).toBeUndefined();
    expect(ports.events.recent({ type: 'judge.demoted' })).toHaveLength(1);
  });
});
