/**
 * A judge derivation end to end, locally: registering a checkpoint marked as the new top model starts the derivation
 * workflow (the same ASL the CDK app deploys, under the local workflows driver); its prompted judge (a scripted model
 * server as the top model's endpoint) is calibrated on a gold set people labelled through the annotation queue; the
 * trainer runs as a real Python process with torch and the distilled judge is calibrated too; the cheaper one that
 * passes is promoted, and the report names its agreement with its teacher and with people. A derivation whose
 * candidates fail promotes nothing.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { feedbackEventRecord } from '../../lib/feedback/record-codecs.ts';
import { enqueueAnnotation, labelAnnotation } from '../../lib/judges/annotation/annotation-queue.ts';
import { addToGoldSet, createGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { DEFAULT_DERIVE_SETTINGS, type DeriveSettings } from '../../lib/judges/derive/judge-runners.ts';
import { getDerivation, listDerivations } from '../../lib/judges/derive/read-derivations.ts';
import { derivationBlobs } from '../../lib/judges/derive/record-keys.ts';
import type { DerivationReport } from '../../lib/judges/derive/schemas.ts';
import { localTrainerJobDefinition, startLocalDerivations, type LocalDerivations } from '../../lib/judges/local/local-derive-judges.ts';
import { getJudge } from '../../lib/judges/registry/read-judges.ts';
import { promoteJudge } from '../../lib/judges/registry/promote-judge.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { DERIVE_WORKFLOW } from '../../lib/judges/workflow/derive-judges.asl.ts';
import { derivationIdOf } from '../../lib/judges/workflow/derive-steps.ts';
import { JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import type { Notice } from '../../lib/people/notify.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-derive-');
const LABEL = 'mode:scope-calibration';

const SCOPE = ['it rewrote the whole module when I asked for one line', 'changed every file in the repo for a typo fix', 'refactored the entire api instead of the one bug', 'touched unrelated config files and rewrote the tests', 'rewrote the whole validation layer for a small fix'];
const OTHER = ['the answer was correct and quick thanks', 'it explained the error message clearly', 'nice fix for the login bug', 'the commit message was short and plain', 'it ran the tests before answering'];

/** 40 gold comments and 60 production ones, half about scope: the student learns from production items only. */
const comments = (n: number, offset: number) => Array.from({ length: n }, (_, i) => ({ text: `${(i % 2 === 0 ? SCOPE : OTHER)[(i >> 1) % 5]} case ${offset + i}`, scope: i % 2 === 0 }));
const gold = comments(40, 0);
const production = comments(60, 100);

/** A judge that reads the comment and names scope-calibration when (it thinks) the comment is about scope. */
function judgeServer(says: (scope: boolean) => boolean): Promise<ScriptedModelServer> {
  return startScriptedModelServer((request: RecordedRequest) => {
    const asked = JSON.stringify(request.body['messages']);
    const comment = [...gold, ...production].find((c) => asked.includes(c.text));
    if (!comment || !says(comment.scope)) return reply.tool(JUDGE_TOOL, { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.9 });
    return reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'medium' }], evidence: comment.text.split(' case ')[0]!, evidenceSource: 'comment', confidence: 0.9 });
  });
}

let ports: LocalPorts;
let derivations: LocalDerivations;
let incumbentServer: ScriptedModelServer;
let topServer: ScriptedModelServer;
let badServer: ScriptedModelServer;
const notices: Notice[] = [];
let incumbentVersion: string;
let settings: DeriveSettings;

async function storeSignal(id: string, text: string): Promise<string> {
  const at = new Date().toISOString();
  await ports.records.put(
    feedbackEventRecord.encode({
      eventId: id, feedbackKey: `t-${id}:1:u`, kind: 'comment', traceId: `t-${id}`, sessionId: 's', turnId: '1', model: 'coder', rating: 'down',
      comment: text, source: 'user', reporter: 'u', trainingConsent: true, occurredAt: at, receivedAt: at, ingestId: 'test',
    }),
  );
  return `feedback:${id}`;
}

async function derive(checkpointId: string, server: ScriptedModelServer): Promise<{ status: string; report: DerivationReport }> {
  await registerCheckpoint(ports, { id: checkpointId, model: 'top', serving: { kind: 'endpoint', model: `openai:top@${server.baseUrl}` }, sweep: false, topModel: true });
  const derivationId = derivationIdOf(checkpointId);
  const executionId = LocalWorkflows.executionId(DERIVE_WORKFLOW, derivationId);
  // The subscriber starts it on the event: wait until the execution exists, then until it ends.
  const deadline = Date.now() + 30_000;
  while ((await derivations.workflows.list(DERIVE_WORKFLOW)).every((e) => e.executionId !== executionId)) {
    if (Date.now() > deadline) throw new Error('no derivation started');
    await new Promise((r) => setTimeout(r, 20));
  }
  const done = await derivations.workflows.waitFor(executionId, { timeoutMs: 240_000, pollMs: 100 });
  const bytes = await ports.blobs.get(derivationBlobs.report(derivationId));
  return { status: done.status, report: JSON.parse(Buffer.from(bytes ?? new Uint8Array()).toString('utf8') || '{}') as DerivationReport };
}

beforeAll(async () => {
  const dataDir = tempDir();
  ports = openLocalPorts(dataDir, { jobs: { definitions: { trainer: localTrainerJobDefinition() }, pollMs: 50 } });
  incumbentServer = await judgeServer((scope) => scope);
  topServer = await judgeServer((scope) => scope);
  badServer = await judgeServer(() => true);
  settings = {
    ...DEFAULT_DERIVE_SETTINGS,
    // The top model is the pricier endpoint: its prompted judge is no cheaper than the incumbent's.
    pricing: [
      { prefix: `openai:incumbent@`, usdPerVerdict: 0.002 },
      { prefix: `openai:top@`, usdPerVerdict: 0.003 },
    ],
    epochs: 200,
    resamples: 200,
    concurrency: 4,
  };
  derivations = startLocalDerivations({ dataDir, ports, jobs: ports.jobs!, logger: new Logger({ serviceName: 'derive-test', logLevel: 'WARN' }), settings, notify: async (n) => notices.push(n), pollMs: 50, workflows: { retryPauseOverrides: { TrainDistilled: 0 } } });

  // The incumbent failure-mode judge, promoted; its gate: kappa lower bound ≥ 0.6 on ≥ 30 items.
  const { ref } = await registerJudge(ports, { name: 'fm-judge', kind: 'failure-mode', model: `openai:incumbent@${incumbentServer.baseUrl}`, prompt: 'label failure modes', acceptanceRule: { minItems: 30, minKappaLower: 0.6 } });
  incumbentVersion = ref.version;
  await promoteJudge(ports, ref, { by: 'test', force: true, reason: 'the judge in service before gold sets existed' });

  // People label the gold set through the annotation queue; production items wait unlabelled.
  await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: [LABEL], twoPersonFraction: 0 });
  const subjects = await Promise.all(gold.map(async (c, i) => ({ kind: 'signal' as const, signalKey: await storeSignal(`g${i}`, c.text) })));
  const { items } = await addToGoldSet(ports, 'fm-gold', { subjects });
  for (const [i, item] of items.entries()) await labelAnnotation(ports, item.id, { annotator: 'ana', labels: { [LABEL]: gold[i]!.scope ? 'yes' : 'no' } });
  for (const [i, c] of production.entries()) {
    await enqueueAnnotation(ports, { subject: { kind: 'signal', signalKey: await storeSignal(`p${i}`, c.text) }, reason: 'production-sample', labels: [LABEL] });
  }
}, 60_000);

afterAll(async () => {
  await derivations?.close();
  await ports?.jobs?.close();
  ports?.close();
  await Promise.all([incumbentServer?.close(), topServer?.close(), badServer?.close()]);
});

describe('judge derivation from a new top model', () => {
  it('calibrates the prompted and the distilled judge, promotes the cheaper one that passes, and reports teacher and people agreement', async () => {
    const { status, report } = await derive('top-1', topServer);
    expect(status).toBe('SUCCEEDED');
    expect(report.checkpointId).toBe('top-1');
    const part = report.judges.find((j) => j.name === 'fm-judge')!;
    expect(part.failed).toBeUndefined();

    // The prompted judge: the incumbent's definition on the top model's endpoint; as good as people, but pricier.
    expect(part.prompted?.people?.criteria[0]).toMatchObject({ id: LABEL, n: 40 });
    expect(part.prompted!.people!.criteria[0]!.kappa.low).toBeGreaterThanOrEqual(0.6);
    expect(part.prompted?.costPerVerdictUsd).toBeCloseTo(0.003, 10);
    expect(part.prompted?.decision).toMatchObject({ accepted: false, promoted: false });
    expect(part.prompted!.decision!.reasons.join('\n')).toContain('cost');

    // The distilled judge: trained by the Python trainer on the teacher's verdicts on the 60 production items (some
    // held out to measure it against its teacher), never on a gold item; calibrated on all 40 gold items.
    expect(part.teacherItems).toMatchObject({ gold: 40, production: 60 });
    expect(part.teacherItems!.train + part.teacherItems!.holdout).toBe(60);
    expect(part.teacherItems!.train).toBeGreaterThanOrEqual(40);
    expect(part.distilled).toMatchObject({ trainedOn: part.teacherItems!.train, calibratedOn: 40 });
    const trainingSet = Buffer.from((await ports.blobs.get(derivationBlobs.teacher(report.derivationId, 'fm-judge')))!).toString('utf8').trim().split('\n');
    expect(trainingSet).toHaveLength(part.teacherItems!.train);
    const goldKeys = new Set(gold.map((_, i) => `feedback:g${i}`));
    expect(trainingSet.filter((line) => goldKeys.has((JSON.parse(line) as { subject: { signalKey: string } }).subject.signalKey))).toEqual([]);
    expect(part.distilled?.ref.name).toBe('fm-judge-distilled');
    expect(part.distilled?.teacher?.labels[0]).toMatchObject({ id: LABEL });
    expect(part.distilled!.teacher!.labels[0]!.agreement).toBeGreaterThanOrEqual(0.9);
    expect(part.distilled!.people!.criteria[0]!.kappa.low).toBeGreaterThanOrEqual(0.6);
    expect(part.distilled!.costPerVerdictUsd!).toBeLessThan(0.002);
    expect(part.distilled?.decision).toMatchObject({ accepted: true, promoted: true });
    expect(part.incumbentPeople?.costPerVerdictUsd).toBeCloseTo(0.002, 10);
    expect(report.promoted).toEqual([part.distilled!.ref]);

    // The registry says the same: the distilled judge is promoted; the incumbent prompted judge stays.
    const distilled = await getJudge(ports, 'fm-judge-distilled');
    expect(distilled.promoted).toBe(part.distilled!.ref.version);
    expect(distilled.versions[0]?.definition.derivedFrom).toMatchObject({ checkpoint: 'top-1' });
    expect((await getJudge(ports, 'fm-judge')).promoted).toBe(incumbentVersion);

    // It can be read back by its checkpoint, and is listed.
    const read = await getDerivation(ports, { checkpointId: 'top-1' });
    expect(read.derivation).toMatchObject({ status: 'finished', checkpointId: 'top-1', promoted: [part.distilled!.ref] });
    expect(read.report?.judges[0]?.name).toBe('fm-judge');
    expect((await listDerivations(ports)).items.map((d) => d.derivationId)).toContain(report.derivationId);

    // People were told, with both comparisons.
    const notice = notices.find((n) => n.id === `derivation:${report.derivationId}`)!;
    expect(notice.title).toContain('1 promoted');
    expect(notice.text).toContain('vs teacher');
    expect(notice.text).toContain('vs people');
    expect(notice.text).toContain(`trained on ${part.teacherItems!.train} teacher verdicts, calibrated on 40 gold items`);
    // Both models are priced: nothing to warn about.
    expect(report.warnings).toBeUndefined();
  }, 300_000);

  it('promotes nothing when the candidates fail the acceptance rule', async () => {
    const before = (await getJudge(ports, 'fm-judge-distilled')).promoted;
    const { status, report } = await derive('top-2', badServer);
    expect(status).toBe('SUCCEEDED');
    const part = report.judges.find((j) => j.name === 'fm-judge')!;
    expect(part.prompted?.decision).toMatchObject({ accepted: false, promoted: false });
    expect(part.prompted!.decision!.reasons.join('\n')).toMatch(/kappa/);
    expect(part.distilled?.decision).toMatchObject({ accepted: false, promoted: false });
    expect(report.promoted).toEqual([]);
    expect((await getJudge(ports, 'fm-judge-distilled')).promoted).toBe(before);
    expect((await getJudge(ports, 'fm-judge')).promoted).toBe(incumbentVersion);
  }, 300_000);

  it('records a judge whose trainer job failed, and still reports and promotes nothing for it', async () => {
    // The trainer refuses 0 epochs (exit 2, bad input): the job fails, is not retried, and the iteration's Catch records it.
    settings.epochs = 0;
    try {
      const { status, report } = await derive('top-3', topServer);
      expect(status).toBe('SUCCEEDED');
      const part = report.judges.find((j) => j.name === 'fm-judge')!;
      expect(part.failed?.error).toBe('States.TaskFailed');
      expect(part.prompted?.people?.criteria[0]?.n).toBe(40);
      expect(part.distilled).toBeUndefined();
      expect(report.promoted).toEqual([]);
      expect(notices.find((n) => n.id === `derivation:${report.derivationId}`)?.text).toContain('failed: States.TaskFailed');
    } finally {
      settings.epochs = 200;
    }
  }, 300_000);

  it('starts no derivation for a checkpoint that is not a top model', async () => {
    await registerCheckpoint(ports, { id: 'plain-1', model: 'top', serving: { kind: 'endpoint', model: `openai:top@${topServer.baseUrl}` }, sweep: false });
    // The same bus delivered a top model's event after it: once that one has started, the plain one had its turn.
    await registerCheckpoint(ports, { id: 'top-1', model: 'top', serving: { kind: 'endpoint', model: `openai:top@${topServer.baseUrl}` }, sweep: false, topModel: true });
    const names = (await derivations.workflows.list(DERIVE_WORKFLOW)).map((e) => e.name);
    expect(names).not.toContain(derivationIdOf('plain-1'));
    expect(names.filter((n) => n === derivationIdOf('top-1'))).toHaveLength(1);
  });
});
