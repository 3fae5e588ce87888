/**
 * Extraction over time and across task shapes: a locator model is asked once per trajectory, a stored verdict is
 * checked again when the task's secrets (or the checker) change, a request-sized bound on attempts, hidden tests given
 * as files (Harbor) and tasks stored under a suite's blob prefix feed the leakage check, feedback votes that changed
 * or withdrew consent, and what the student saw includes tool changes and its own call.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import { currentVoteRecord } from '../../lib/feedback/record-codecs.ts';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import type { Judgement } from '../../lib/judges/schemas.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { suiteRecord, taskRecord } from '../../lib/registry/record-codecs.ts';
import { LEAKAGE_CHECKER } from '../../lib/training/decisions/check-hint-leakage.ts';
import { seenBefore } from '../../lib/training/decisions/decision-candidate.ts';
import { extractDecisions } from '../../lib/training/decisions/extract-decisions.ts';
import { getDecision } from '../../lib/training/decisions/get-decision.ts';
import { decisionRecord } from '../../lib/training/record-codecs.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { handTrajectory, seedAttempt, seedFeedback, TASK } from './decisions-support.ts';

const tempDir = tempDirs('flywheel-decisions-recheck-');
let ports: LocalPorts | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  ports?.close();
  ports = undefined;
  await server?.close();
  server = undefined;
});

const judgementSaying = (reason: string): Judgement => ({
  judge: { name: 'rubric', version: 'v1' },
  criteria: [{ id: 'c1', verdict: 'fail', score: 0, reason, evidence: [{ source: 'trajectory', quote: 'I will write without reading' }] }],
  score: 0,
  calls: 1,
  usage: { promptTokens: 1, completionTokens: 1 },
  latencyMs: 1,
  complete: true,
});

const blind = (attemptId: string) =>
  handTrajectory(attemptId, [
    { assistant: 'I will write without reading', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"echo > src/add.js"}' }] },
    { result: 'ok', toolCallId: 'c1', name: 'bash' },
  ]);

describe('extraction over time', () => {
  it('asks the locator model once per trajectory and model; a second run finds the record', async () => {
    ports = openLocalPorts(tempDir());
    await seedAttempt(ports, blind('lr.calc__add.strict.0'), { runId: 'lr', status: 'failed' });
    server = await startScriptedModelServer(() => reply.text('{"messageId": "lr.calc__add.strict.0:m1", "hint": "Read src/add.js before you change it.", "reason": "blind"}'));
    const locator = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'locator' });
    const first = await extractDecisions(ports, { runId: 'lr', sources: ['locator-model'], locatorModel: locator });
    const second = await extractDecisions(ports, { runId: 'lr', sources: ['locator-model'], locatorModel: locator });
    expect(first).toMatchObject({ created: 1, existing: 0, byStatus: { usable: 1, rejected: 0 } });
    expect(second).toMatchObject({ created: 0, existing: 1, rechecked: 0, byStatus: { usable: 1, rejected: 0 }, decisionIds: first.decisionIds });
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('re-checks a stored verdict when the task’s secrets or the checker changed, keeping createdAt; counts stored statuses', async () => {
    let clock = Date.parse('2026-12-03T12:00:00Z');
    ports = openLocalPorts(tempDir(), { now: () => new Date((clock += 1000)) });
    await seedAttempt(ports, blind('rc.calc__add.strict.0'), { runId: 'rc', task: false, grade: { passed: false, judgement: judgementSaying('blind') } });
    const before = await extractDecisions(ports, { runId: 'rc', sources: ['judge'] });
    expect(before.byStatus).toEqual({ usable: 0, rejected: 1 });
    const id = before.decisionIds[0]!;
    const stored = await getDecision(ports, id);
    expect(stored.leakage).toMatchObject({ passed: false, checker: LEAKAGE_CHECKER, secretsDigest: expect.stringMatching(/^sha256:/) });

    await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'calc/add', task: TASK }));
    const after = await extractDecisions(ports, { runId: 'rc', sources: ['judge'] });
    expect(after).toMatchObject({ created: 0, existing: 1, rechecked: 1, byStatus: { usable: 1, rejected: 0 } });
    const rechecked = await getDecision(ports, id);
    expect(rechecked).toMatchObject({ status: 'usable', leakage: { passed: true }, revision: 1, lineage: { createdAt: stored.lineage.createdAt } });

    expect(await extractDecisions(ports, { runId: 'rc', sources: ['judge'] })).toMatchObject({ rechecked: 0, byStatus: { usable: 1, rejected: 0 } });
    // A verdict of an older checker is checked again.
    await ports.records.put(decisionRecord.encode({ ...rechecked, leakage: { ...rechecked.leakage, checker: 'flywheel.leakage/1' } }));
    expect(await extractDecisions(ports, { runId: 'rc', sources: ['judge'] })).toMatchObject({ rechecked: 1 });
    expect((await getDecision(ports, id)).leakage.checker).toBe(LEAKAGE_CHECKER);
  });

  it('refuses a run over the bound without attemptIds, naming attemptIds; with them it extracts', async () => {
    ports = openLocalPorts(tempDir());
    await seedAttempt(ports, blind('big.calc__add.strict.0'), { runId: 'big', n: 0 });
    await seedAttempt(ports, blind('big.calc__add.strict.1'), { runId: 'big', n: 1 });
    await expect(extractDecisions(ports, { runId: 'big' }, { maxAttemptsWithoutIds: 1 })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [expect.objectContaining({ path: 'attemptIds' })] });
    expect((await extractDecisions(ports, { runId: 'big', attemptIds: ['big.calc__add.strict.0'] }, { maxAttemptsWithoutIds: 1 })).skipped).toEqual([]);
  });
});

describe('where the secrets come from', () => {
  it('hidden tests as files (Harbor): read by content, a leaking hint is rejected; unreadable files reject a judge hint', async () => {
    ports = openLocalPorts(tempDir());
    const folder = tempDir();
    await mkdir(join(folder, 'tests'), { recursive: true });
    await writeFile(join(folder, 'tests', 'test_outputs.py'), 'def test_total():\n    assert total("ledger.csv") == "EUR 1,234.56 net"\n');
    const harbor = { ...TASK, testPatch: undefined, failToPass: ['tests/test.sh'], testFiles: ['tests/test_outputs.py'], origin: { kind: 'harbor', ref: folder } };
    await seedAttempt(ports, blind('hb.calc__add.strict.0'), { runId: 'hb', task: false, grade: { passed: false, judgement: judgementSaying('it never printed EUR 1,234.56 net') } });
    await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'calc/add', task: harbor }));
    const leaked = await extractDecisions(ports, { runId: 'hb', sources: ['judge'] });
    expect((await getDecision(ports, leaked.decisionIds[0]!)).leakage.findings.map((f) => f.kind)).toContain('test-literal');

    await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'calc/add', task: { ...harbor, testFiles: ['tests/gone.py'] } }));
    const unreadable = await extractDecisions(ports, { runId: 'hb', sources: ['judge'] });
    expect(unreadable.byStatus).toEqual({ usable: 0, rejected: 1 });
    expect((await getDecision(ports, unreadable.decisionIds[0]!)).leakage.findings[0]).toMatchObject({ kind: 'secrets-unavailable', text: expect.stringContaining('tests/gone.py') });
  });

  it('a suite whose tasks are JSON under its blob prefix', async () => {
    ports = openLocalPorts(tempDir());
    await seedAttempt(ports, blind('bp.calc__add.strict.0'), { runId: 'bp', task: false, grade: { passed: false, judgement: judgementSaying('format must print three-point-zero') } });
    await ports.records.put(
      suiteRecord.encode({ kind: 'suite', id: 'calc', version: 1, visibility: 'private', status: 'active', owner: 'me', tasks: { kind: 'blobs', prefix: 'suites/calc/' }, taskCount: 1, taskIds: ['calc/add'], createdAt: '2026-12-01T00:00:00.000Z' }),
    );
    await ports.blobs.put('suites/calc/calc/add.json', JSON.stringify(TASK));
    const result = await extractDecisions(ports, { runId: 'bp', sources: ['judge'] });
    expect((await getDecision(ports, result.decisionIds[0]!)).leakage.findings.map((f) => f.kind)).toEqual(['test-literal']);
  });
});

describe('feedback votes', () => {
  const t = handTrajectory('prod-9', [
    { assistant: 'deleting the tests', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"rm -r test"}' }] },
    { result: 'ok', toolCallId: 'c1', name: 'bash' },
  ]);
  const current = (feedbackKey: string, eventId: string, occurredAt: string) => currentVoteRecord.encode({ feedbackKey, eventId, order: feedbackKeys.voteOrder(occurredAt, eventId), occurredAt });

  it('a changed vote: only the current event gives a decision; a later vote without consent withdraws it and nothing is read', async () => {
    ports = openLocalPorts(tempDir());
    const blobKey = 'trajectories/feedback/prod-9.json';
    await seedFeedback(ports, t, { eventId: 'v1', feedbackKey: 'k-9', messageId: 'prod-9:m1', comment: 'Do not delete tests.', trajectory: { blobKey }, occurredAt: '2026-12-03T09:00:00.000Z' });
    await seedFeedback(ports, t, { eventId: 'v2', feedbackKey: 'k-9', messageId: 'prod-9:m1', comment: 'Never delete tests; fix the code.', trajectory: { blobKey }, occurredAt: '2026-12-03T10:00:00.000Z' });
    await ports.records.put(current('k-9', 'v2', '2026-12-03T10:00:00.000Z'));
    const changed = await extractDecisions(ports, { feedbackEventIds: ['v1', 'v2'] });
    expect(changed.skipped).toEqual([{ source: 'person', ref: 'v1', reason: 'superseded by the newer vote v2' }]);
    expect(changed.byStatus).toEqual({ usable: 1, rejected: 0 });
    expect((await getDecision(ports, changed.decisionIds[0]!)).hint.text).toBe('Never delete tests; fix the code.');

    await seedFeedback(ports, t, { eventId: 'w1', feedbackKey: 'k-w', messageId: 'prod-9:m1', comment: 'Do not delete tests.', trajectory: { blobKey: 'trajectories/feedback/w.json' }, occurredAt: '2026-12-03T09:00:00.000Z' });
    await seedFeedback(ports, t, { eventId: 'w2', feedbackKey: 'k-w', rating: 'up', trainingConsent: false, trajectory: { blobKey: 'trajectories/feedback/w.json' }, occurredAt: '2026-12-03T11:00:00.000Z' });
    await ports.records.put(current('k-w', 'w2', '2026-12-03T11:00:00.000Z'));
    const reads: string[] = [];
    const root = ports.blobs;
    const blobs: BlobsPort = { put: (k, b, o) => root.put(k, b, o), get: (k) => (reads.push(k), root.get(k)), list: (p, o) => root.list(p, o), delete: (k) => root.delete(k) };
    const withdrawn = await extractDecisions({ ...ports, blobs }, { feedbackEventIds: ['w1'] });
    expect(withdrawn.skipped).toEqual([{ source: 'person', ref: 'w1', reason: 'training consent withdrawn by the newer vote w2: the trajectory is not read' }]);
    expect(withdrawn.decisionIds).toEqual([]);
    expect(reads).toEqual([]);
  });
});

describe('what the student saw', () => {
  it('includes tools added or removed before the decision and the decision’s own call', () => {
    const t = handTrajectory('s1', [
      { event: 'tool.added', detail: { tool: 'grep_repo_v2' } },
      { assistant: 'calling it', calls: [{ id: 'c1', name: 'fetch_patch_from_upstream', arguments: '{"ref":"deadbeef"}' }] },
      { assistant: 'later', calls: [{ id: 'c2', name: 'never_seen_before', arguments: '{}' }] },
    ]);
    const seen = seenBefore(t, 's1:m1');
    expect(seen).toContain('grep_repo_v2');
    expect(seen).toContain('fetch_patch_from_upstream');
    expect(seen).toContain('deadbeef');
    expect(seen).not.toContain('never_seen_before');
  });
});
