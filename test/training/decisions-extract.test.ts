/**
 * `extractDecisions` over the local ports: a run's attempts (harness events and sandbox observations, a judge's
 * failed criterion that leaks a hidden literal, a locator model over the scripted model server), feedback events (one
 * consented, one not), idempotence, and the queries (per attempt, per run, by status and hint class, one by id).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { Judgement } from '../../lib/judges/schemas.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { extractDecisions } from '../../lib/training/decisions/extract-decisions.ts';
import { getDecision } from '../../lib/training/decisions/get-decision.ts';
import { listDecisions, listUsableDecisions } from '../../lib/training/decisions/list-decisions.ts';
import { decisionRecord } from '../../lib/training/record-codecs.ts';
import { DecisionRecordSchema } from '../../lib/training/schemas.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { handTrajectory, realAgentTrajectory, seedAttempt, seedFeedback } from './decisions-support.ts';

const tempDir = tempDirs('flywheel-decisions-');
let ports: LocalPorts | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  ports?.close();
  ports = undefined;
  await server?.close();
  server = undefined;
});

const leakyJudgement: Judgement = {
  judge: { name: 'rubric', version: 'v1' },
  criteria: [{ id: 'c1', verdict: 'fail', score: 0, reason: 'It never checked that format prints three-point-zero.', evidence: [{ source: 'trajectory', quote: '[assistant] I will write without reading' }] }],
  score: 0,
  calls: 1,
  usage: { promptTokens: 1, completionTokens: 1 },
  latencyMs: 1,
  complete: true,
};

describe('extractDecisions', () => {
  it("a run's attempts: harness events, a leaking judge hint stored rejected, a located decision; idempotent; listed and shown", { timeout: 30_000 }, async () => {
    let clock = Date.parse('2026-12-03T12:00:00Z');
    ports = openLocalPorts(tempDir(), { now: () => new Date((clock += 1000)) });
    const real = await realAgentTrajectory('run-1.calc__add.strict.0');
    await seedAttempt(ports, real, { status: 'passed', n: 0 });
    const judged = handTrajectory('run-1.calc__add.strict.1', [
      { assistant: 'I will write without reading', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"echo > src/add.js"}' }] },
      { result: 'ok', toolCallId: 'c1', name: 'bash', startMs: 1500, durationMs: 400 },
      { assistant: 'done', calls: [{ id: 'c2', name: 'submit', arguments: '{}' }] },
    ]);
    await seedAttempt(ports, judged, {
      status: 'failed',
      n: 1,
      grade: { passed: false, judgement: leakyJudgement },
      observations: [{ kind: 'network.blocked', at: '2026-12-03T10:00:01.700Z', detail: { host: 'registry.npmjs.org' } }],
    });
    server = await startScriptedModelServer([reply.text('{"messageId": "run-1.calc__add.strict.1:m1", "hint": "Read src/add.js before you change it.", "reason": "it wrote blind"}')]);
    const locator = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'locator' });

    const result = await extractDecisions(ports, { runId: 'run-1', locatorModel: locator });
    expect(result.byStatus).toEqual({ usable: 5, rejected: 1 });
    expect(result.bySource).toEqual({ 'harness-event': { usable: 4, rejected: 0 }, judge: { usable: 0, rejected: 1 }, 'locator-model': { usable: 1, rejected: 0 } });
    expect(result).toMatchObject({ created: 6, existing: 0 });
    // Only the failed attempt is sent to the locator.
    expect(server.chatRequests()).toHaveLength(1);

    // Idempotent: the same decisions, found stored.
    const again = await extractDecisions(ports, { runId: 'run-1', sources: ['harness-event', 'judge'] });
    expect(again).toMatchObject({ created: 0, existing: 5 });
    expect(again.decisionIds).toEqual(result.decisionIds.slice(0, 5));

    const judge = result.decisionIds[4]!;
    const rejected = await getDecision(ports, judge);
    expect(DecisionRecordSchema.parse(rejected)).toEqual(rejected);
    expect(rejected).toMatchObject({
      status: 'rejected',
      hintClass: 'judge-criterion',
      hint: { text: 'The agent reads the code before it edits it.\n(It never checked that format prints three-point-zero.)' },
      leakage: { passed: false, findings: [{ kind: 'test-literal', text: "'three-point-zero'" }] },
      trajectory: { blobKey: 'trajectories/attempts/run-1.calc__add.strict.1.jsonl', attemptId: 'run-1.calc__add.strict.1', runId: 'run-1', taskId: 'calc/add', suite: 'calc', checkpoint: 'ckpt-1' },
      insertion: { at: 'before-decision', role: 'user' },
      lineage: { createdBy: 'flywheel.decisions/1', datasets: [] },
    });
    expect(rejected.decisionId).toMatch(/^dec-[0-9a-f]{20}$/);

    // What the dataset builder reads: the usable ones of one attempt.
    const usable = await listUsableDecisions(ports, 'run-1.calc__add.strict.1');
    expect(usable.map((d) => d.hintClass).sort()).toEqual(['model-located', 'sandbox-rules']);
    expect((await listUsableDecisions(ports, 'run-1.calc__add.strict.0')).map((d) => d.hintClass).sort()).toEqual(['available-tools', 'tool-arguments', 'tool-arguments']);

    const byRun = await listDecisions(ports, { run: 'run-1' });
    expect(byRun.items).toHaveLength(6);
    const times = byRun.items.map((d) => d.lineage.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect((await listDecisions(ports, { status: 'rejected' })).items.map((d) => d.decisionId)).toEqual([judge]);
    expect((await listDecisions(ports, { hintClass: 'available-tools' })).items).toHaveLength(1);
    expect((await listDecisions(ports, { run: 'run-2' })).items).toEqual([]);
    await expect(listDecisions(ports, { status: 'maybe' })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [expect.objectContaining({ path: 'status' })] });
    await expect(getDecision(ports, 'dec-00000000000000000000')).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
  });

  it('without the task in the registry, a judge or model hint is rejected; a rule hint is kept', async () => {
    ports = openLocalPorts(tempDir());
    const t = handTrajectory('run-3.calc__add.strict.0', [
      { assistant: 'I will write without reading', calls: [{ id: 'c1', name: 'nope', arguments: '{}' }] },
      { event: 'tool.unknown', detail: { tool: 'nope' }, toolCallId: 'c1' },
    ]);
    await seedAttempt(ports, t, { runId: 'run-3', task: false, grade: { passed: false, judgement: { ...leakyJudgement, criteria: [{ ...leakyJudgement.criteria[0]!, reason: 'blind' }] } } });
    const result = await extractDecisions(ports, { runId: 'run-3' });
    expect(result.bySource).toEqual({ 'harness-event': { usable: 1, rejected: 0 }, judge: { usable: 0, rejected: 1 } });
    const judge = await getDecision(ports, result.decisionIds[1]!);
    expect(judge.leakage.findings[0]!.kind).toBe('secrets-unavailable');
  });

  it('feedback: a consented comment on a message is stored; no consent is refused and said; bad requests name the field', async () => {
    ports = openLocalPorts(tempDir());
    const t = handTrajectory('prod-42', [
      { assistant: 'deleting the tests', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"rm -r test"}' }] },
      { result: 'ok', toolCallId: 'c1', name: 'bash' },
    ]);
    await seedFeedback(ports, t, { eventId: 'fb-yes', messageId: 'prod-42:m1', comment: 'Never delete tests; fix the code.' });
    await seedFeedback(ports, t, { eventId: 'fb-no', messageId: 'prod-42:m1', comment: 'Do not do this.', trainingConsent: false });
    const reads: string[] = [];
    const root = ports.blobs;
    const blobs: BlobsPort = { put: (k, b, o) => root.put(k, b, o), get: (k) => (reads.push(k), root.get(k)), list: (p, o) => root.list(p, o), delete: (k) => root.delete(k) };
    const result = await extractDecisions({ ...ports, blobs }, { feedbackEventIds: ['fb-yes', 'fb-no', 'fb-missing'] });
    // The trajectory of the event without consent was never read; the consented one was (stored as the ingest stores it).
    expect(reads).toEqual(['trajectories/feedback/fb-yes.json']);
    expect(result.bySource).toEqual({ person: { usable: 1, rejected: 0 } });
    expect(result.skipped).toEqual([
      { source: 'person', ref: 'fb-no', reason: 'no training consent: the trajectory is not read' },
      { source: 'person', ref: 'fb-missing', reason: 'no such feedback event' },
    ]);
    const [record] = (await listDecisions(ports, {})).items;
    expect(record).toMatchObject({ hintClass: 'person-comment', hint: { text: 'Never delete tests; fix the code.', by: 'person' }, trajectory: { attemptId: 'prod-42', feedbackEventId: 'fb-yes', blobKey: 'trajectories/feedback/fb-yes.json' } });
    const item = decisionRecord.encode(record!);
    // Feedback decisions are under a partition no run id can produce (a run named `feedback` is `DECISIONRUN#feedback`).
    expect(item).toMatchObject({ pk: 'DECISIONS#prod-42', gsi2pk: 'DECISIONFEEDBACK' });
    expect((await listDecisions(ports, { run: 'feedback' })).items).toEqual([]);
    // A hand-edited record fails where it is read, naming the record and the field.
    await ports.records.put({ ...item, status: 'maybe' });
    await expect(listUsableDecisions(ports, 'prod-42')).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', field: 'status' });

    await expect(extractDecisions(ports, {})).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [expect.objectContaining({ path: 'runId' })] });
    await expect(extractDecisions(ports, { runId: 'r', sources: ['locator-model'] })).rejects.toMatchObject({ issues: [expect.objectContaining({ path: 'locatorModel' })] });
  });
});
