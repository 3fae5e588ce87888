/**
 * The console's read routes over real HTTP (the local runtime, with its key check and tenant scoping): attempts as a
 * sweep writes them (the sweep steps driven over the local ports with the scripted rollout), the sweeps list, the
 * failure-mode timeline over tally rows, and the loop overview over feedback events, all seeded through the codecs the
 * real writers use.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { feedbackEventRecord } from '../../lib/feedback/record-codecs.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { getAttemptRecord } from '../../lib/harness/attempt/read-attempt-records.ts';
import { toJsonl, type Trajectory } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { startLocalRuntime } from '../../lib/local/runtime.ts';
import { modelSeenRecord, tallyRecord } from '../../lib/modes/record-codecs.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { storeDecision } from '../../lib/training/decisions/store-decision.ts';
import type { SweepExecutionInput } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { runScriptedShard } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

let fx: SweepFixture;
let runtime: Awaited<ReturnType<typeof startLocalRuntime>>;
let otherKey: string;

const input = (sweepId: string, requestedAt: string, extra: Partial<SweepExecutionInput> = {}): SweepExecutionInput => ({ sweepId, trigger: 'manual', requestedAt, ...extra });
// ck-0 fails every attempt of t000 and t001, passes the rest; ck-1 passes everything.
const script = ({ checkpoint, taskId }: { checkpoint: string; taskId: string }) => (checkpoint === 'ck-0' && (taskId === 't000' || taskId === 't001') ? 'failed' : 'passed');

async function get(path: string, key = runtime.apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${runtime.url}${path}`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  fx = openSweepFixture({ settings: { shardMaxTasks: 4, tasksPerChild: 2 } });
  await fx.seed({ checkpoints: 2, suites: 2, tasks: 6 });
  const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
  await driveSweep(steps, fx.ports, input('older', '2026-12-01T09:00:00.000Z', { modes: ['strict'], suites: ['suite-0'] }), { script });
  await driveSweep(steps, fx.ports, input('newer', '2026-12-02T09:00:00.000Z', { modes: ['strict', 'lenient'] }), { script });
  runtime = await startLocalRuntime({ dataDir: fx.dir, port: 0, consumerThread: false, logger: new Logger({ serviceName: 'test', logLevel: 'ERROR' }) });
  otherKey = (await createApiKey(fx.ports.records, { tenant: 'other', scopes: 'read' }, new Date())).key;
}, 60_000);

afterAll(async () => {
  await runtime?.close();
  fx?.close();
});

/** Every page of a listing, following `nextCursor`. */
async function allPages(path: string, key?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await get(`${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`, key);
    expect(r.status).toBe(200);
    out.push(...r.body.attempts);
    cursor = r.body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('too many pages');
}

describe('GET /v1/attempts', () => {
  it('pages through every attempt of every sweep once, newest sweep first, with checkpoint and sweep on each', async () => {
    const all = await allPages('/v1/attempts?limit=7');
    // older: 2 checkpoints × 1 suite × 6 tasks × strict; newer: 2 × 2 × 6 × 2 modes.
    expect(all).toHaveLength(12 + 48);
    expect(new Set(all.map((a) => a.id)).size).toBe(60);
    expect(all.slice(0, 48).every((a) => a.sweepId === 'newer')).toBe(true);
    expect(all.slice(48).every((a) => a.sweepId === 'older')).toBe(true);
    expect(all[0]).toMatchObject({ checkpoint: 'ck-0', suite: 'suite-0', mode: 'lenient', outcome: expect.any(String), model: 'scripted:ck-0' });
  });

  it('filters by sweep, checkpoint, suite, task, mode and outcome', async () => {
    const failed = await allPages('/v1/attempts?outcome=failed&limit=3');
    // t000 and t001 of ck-0: older 2 (strict), newer 2 suites × 2 modes × 2 tasks = 8.
    expect(failed).toHaveLength(10);
    expect(failed.every((a) => a.checkpoint === 'ck-0' && ['t000', 't001'].includes(a.taskId) && a.outcome === 'failed')).toBe(true);
    const one = await allPages('/v1/attempts?sweep=newer&checkpoint=ck-1&suite=suite-1&task=t003&mode=strict');
    expect(one.map((a) => [a.sweepId, a.checkpoint, a.suite, a.taskId, a.mode, a.outcome])).toEqual([['newer', 'ck-1', 'suite-1', 't003', 'strict', 'passed']]);
    const ck1 = await allPages('/v1/attempts?checkpoint=ck-1&mode=lenient');
    expect(ck1).toHaveLength(12);
    expect(await allPages('/v1/attempts?sweep=nope')).toEqual([]);
  });

  it('names the offending field of a bad query', async () => {
    const r = await get('/v1/attempts?outcome=great&limit=0');
    expect(r.status).toBe(400);
    expect(r.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['limit', 'outcome']);
    const c = await get('/v1/attempts?cursor=bogus');
    expect(c.status).toBe(400);
    expect(c.body.issues[0].path).toBe('cursor');
  });

  it("shows another tenant's key nothing", async () => {
    expect(await allPages('/v1/attempts', otherKey)).toEqual([]);
    const [first] = (await get('/v1/attempts?limit=1')).body.attempts;
    expect((await get(`/v1/attempts/${first.id}`, otherKey)).status).toBe(404);
  });
});

describe('GET /v1/attempts/{id}', () => {
  it('gives the trajectory a page at a time with long texts cut, the diff, tests, integrity flags and judge verdicts', async () => {
    const [a] = (await get('/v1/attempts?sweep=newer&checkpoint=ck-0&suite=suite-0&task=t000&mode=strict')).body.attempts;
    const stored = (await getAttemptRecord(fx.ports.records, a.runId, 't000', 'strict', 0))!;
    const steps: Trajectory['steps'] = [{ type: 'message', seq: 0, at: '2026-12-02T09:00:00Z', messageId: 'm0', role: 'user', content: 'fix t000' }];
    for (let t = 1; t <= 30; t++) {
      steps.push({
        type: 'assistant', seq: 2 * t - 1, at: '2026-12-02T09:00:01Z', messageId: `${stored.attemptId}:m${t}`, turn: t, content: t === 1 ? 'x'.repeat(40_000) : `turn ${t}`,
        toolCalls: [{ id: `c${t}`, name: 'bash', arguments: '{"cmd":"pytest"}' }], finishReason: 'tool_calls', model: 'scripted', sampling: {},
        usage: { promptTokens: 10, completionTokens: 5 }, timing: { startedAt: '2026-12-02T09:00:01Z', durationMs: 3, httpAttempts: 1 },
      });
      steps.push({ type: 'tool_result', seq: 2 * t, at: '2026-12-02T09:00:02Z', messageId: `${stored.attemptId}:m${t}`, toolCallId: `c${t}`, name: 'bash', isError: false, content: 'ok', truncated: false, exitCode: 0, durationMs: 4 });
    }
    const trajectory: Trajectory = {
      header: { type: 'header', format: 'flywheel.trajectory', schemaVersion: 1, attemptId: stored.attemptId, agent: { name: 'scripted', version: '1' }, model: { id: 'scripted' }, policy: { checkpoint: 'ck-0' }, sampling: {}, limits: {}, tools: [], startedAt: '2026-12-02T09:00:00Z' },
      steps,
    };
    await fx.ports.blobs.put('trajectories/attempts/t000.jsonl', new TextEncoder().encode(toJsonl(trajectory)));
    const patch = '--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a - b\n+a + b\n';
    await fx.ports.blobs.put('diffs/t000.patch', new TextEncoder().encode(patch));
    const { pk: _pk, sk: _sk, ...fields } = stored;
    await fx.ports.records.put(
      attemptRecord.encode({
        ...fields,
        trajectoryKey: 'trajectories/attempts/t000.jsonl',
        diffKey: 'diffs/t000.patch',
        grade: {
          passed: false,
          reasons: ['tests-failed'],
          perTest: { 'test_add': 'failed', 'test_sub': 'passed' },
          counts: { passed: 1, failed: 1, skipped: 0, error: 0 },
          integrity: [{ kind: 'test-file-edit', file: 'test_calc.py', line: 3, evidence: 'assert True', source: 'diff' }],
          judgement: {
            judge: { name: 'rubric', version: '3' }, score: 0.5, complete: true, calls: 1, usage: { promptTokens: 1, completionTokens: 1 }, latencyMs: 1,
            criteria: [{ id: 'c1', verdict: 'pass', score: 1, reason: 'fixed', evidence: [] }, { id: 'c2', verdict: 'fail', score: 0, reason: 'no test', evidence: [] }],
          },
        },
      }),
    );
    await storeDecision(fx.ports.records, {
      decisionId: 'dec-00000000000000000001',
      trajectory: { blobKey: 'trajectories/attempts/t000.jsonl', attemptId: stored.attemptId, taskId: 't000', suite: 'suite-0', runId: stored.runId, checkpoint: 'ck-0' },
      messageId: `${stored.attemptId}:m2`,
      turn: 2,
      charSpan: { field: 'tool-name', toolCallId: 'c2', start: 0, end: 4 },
      hintClass: 'sandbox-rules',
      hint: { text: 'Change the code under test, never the tests.', by: 'rule' },
      insertion: { at: 'before-decision', role: 'user' },
      source: { kind: 'harness-event', eventKind: 'test-file.edited', eventSeq: 5 },
      leakage: { passed: true, findings: [], checkedAt: '2026-12-02T10:00:00.000Z' },
      status: 'usable',
      lineage: { createdBy: 'test', createdAt: '2026-12-02T10:00:00.000Z', datasets: [] },
    });
    const first = await get(`/v1/attempts/${a.id}?stepLimit=25`);
    expect(first.status).toBe(200);
    const d = first.body;
    expect(d.attempt).toMatchObject({ id: a.id, checkpoint: 'ck-0', sweepId: 'newer', outcome: 'failed', integrityFlags: 1, judgeScore: 0.5 });
    expect(d.trajectory).toMatchObject({ available: true, policy: 'ck-0', totalSteps: 61, stepOffset: 0, nextStepOffset: 25 });
    expect(d.trajectory.steps).toHaveLength(25);
    const long = d.trajectory.steps[1];
    expect(long).toMatchObject({ type: 'assistant', turn: 1, content: { bytes: 40_000, truncated: true }, toolCalls: [{ id: 'c1', name: 'bash', arguments: { text: '{"cmd":"pytest"}', truncated: false } }] });
    expect(long.content.text.length).toBe(16 * 1024);
    const last = await get(`/v1/attempts/${a.id}?stepOffset=50&stepLimit=25`);
    expect(last.body.trajectory.steps.map((s: { seq: number }) => s.seq)).toEqual(Array.from({ length: 11 }, (_, i) => 50 + i));
    expect(last.body.trajectory.nextStepOffset).toBeUndefined();
    expect(d.diff).toEqual({ text: patch, bytes: patch.length, truncated: false });
    expect(d.grade.tests).toEqual([{ id: 'test_add', outcome: 'failed' }, { id: 'test_sub', outcome: 'passed' }]);
    expect(d.integrity.flags).toEqual([{ kind: 'test-file-edit', file: 'test_calc.py', line: 3, evidence: 'assert True', source: 'diff' }]);
    expect(d.judge).toEqual({ judge: 'rubric@3', score: 0.5, complete: true, criteria: [{ id: 'c1', verdict: 'pass', score: 1, reason: 'fixed' }, { id: 'c2', verdict: 'fail', score: 0, reason: 'no test' }] });
    expect(d.decisions).toEqual([
      { decisionId: 'dec-00000000000000000001', messageId: `${stored.attemptId}:m2`, turn: 2, hintClass: 'sandbox-rules', hint: 'Change the code under test, never the tests.', status: 'usable', toolCallId: 'c2' },
    ]);
  });

  it('answers 404 naming the id, and 400 naming a bad step field', async () => {
    const missing = Buffer.from(JSON.stringify(['sweep.newer.x.shard-0', 'nope', 'strict', 0])).toString('base64url');
    const r = await get(`/v1/attempts/${missing}`);
    expect(r.status).toBe(404);
    expect(r.body.message).toContain(missing);
    const junk = await get('/v1/attempts/not-an-id');
    expect(junk.status).toBe(404);
    expect(junk.body.message).toContain('not-an-id');
    const [a] = (await get('/v1/attempts?limit=1')).body.attempts;
    const bad = await get(`/v1/attempts/${a.id}?stepLimit=100000`);
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('stepLimit');
  });
});

describe('a running sweep', () => {
  it("lists the attempts its shards wrote before they are aggregated (from its plan), and is listed as running", async () => {
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](fx.ports, input('running', '2026-12-03T09:00:00.000Z', { modes: ['strict'], suites: ['suite-1'], checkpoints: ['ck-1'] }));
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'running' });
    await runScriptedShard(fx.ports, plan.shards[0]!.shardKey, () => 'passed');
    const attempts = await allPages('/v1/attempts?sweep=running');
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a.sweepId === 'running' && a.checkpoint === 'ck-1' && a.suite === 'suite-1')).toBe(true);
    expect((await get('/v1/sweeps?status=running')).body.sweeps.map((s: { sweepId: string }) => s.sweepId)).toEqual(['running']);
    // Newest sweep first in the unfiltered list too.
    expect((await get('/v1/attempts?limit=1')).body.attempts[0].sweepId).toBe('running');
    const detail = await get(`/v1/attempts/${attempts[0].id}`);
    expect(detail.body.attempt.checkpoint).toBe('ck-1');
    expect(detail.body.trajectory).toMatchObject({ available: false, problem: 'the attempt has no trajectory' });
  });
});

describe('GET /v1/sweeps', () => {
  it('lists sweeps newest first, by status and checkpoint, a page at a time', async () => {
    const all = await get('/v1/sweeps?status=succeeded');
    expect(all.body.sweeps.map((s: { sweepId: string }) => s.sweepId)).toEqual(['newer', 'older']);
    expect(all.body.sweeps[0]).toMatchObject({ status: 'succeeded', checkpoints: ['ck-0', 'ck-1'], modes: ['strict', 'lenient'] });
    const p1 = await get('/v1/sweeps?status=succeeded&limit=1');
    expect(p1.body.sweeps.map((s: { sweepId: string }) => s.sweepId)).toEqual(['newer']);
    const p2 = await get(`/v1/sweeps?status=succeeded&limit=1&cursor=${p1.body.nextCursor}`);
    expect(p2.body.sweeps.map((s: { sweepId: string }) => s.sweepId)).toEqual(['older']);
    expect(p2.body.nextCursor).toBeUndefined();
    expect((await get('/v1/sweeps?checkpoint=ck-0')).body.sweeps.map((s: { sweepId: string }) => s.sweepId)).toEqual(['newer', 'older']);
    expect((await get('/v1/sweeps?checkpoint=ck-9')).body.sweeps).toEqual([]);
    const bad = await get('/v1/sweeps?status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('status');
    expect((await get('/v1/sweeps', otherKey)).body.sweeps).toEqual([]);
  });
});

describe('GET /v1/failure-modes/timeline', () => {
  it('counts each mode per checkpoint and day with its rate over classified signals, and per week', async () => {
    const rows = [
      { day: '2026-11-30', modes: ['wrong-fix'], source: 'local' as const },
      { day: '2026-11-30', modes: ['wrong-fix', 'gave-up'], source: 'human' as const },
      { day: '2026-11-30', modes: [], source: 'local' as const },
      { day: '2026-11-30', modes: [], source: 'none' as const },
      { day: '2026-12-01', modes: ['gave-up'], source: 'judge' as const },
    ];
    await fx.ports.records.putMany([
      ...rows.map((r, i) =>
        tallyRecord.encode({ signalKey: `feedback:e${i}`, model: 'ck-0', day: r.day, receivedAt: `${r.day}T10:00:0${i}.000Z`, signalKind: 'comment', rating: 'down', modes: r.modes, source: r.source, confidence: 0.9 }),
      ),
      modelSeenRecord.encode({ model: 'ck-0' }),
    ]);
    const r = await get('/v1/failure-modes/timeline?from=2026-11-30&to=2026-12-01&checkpoint=ck-0');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      from: '2026-11-30',
      to: '2026-12-01',
      bucket: 'day',
      modes: ['gave-up', 'wrong-fix'],
      checkpoints: [
        {
          checkpoint: 'ck-0',
          points: [
            { start: '2026-11-30', signals: 4, classified: 3, modes: { 'wrong-fix': { count: 2, rate: 2 / 3 }, 'gave-up': { count: 1, rate: 1 / 3 } } },
            { start: '2026-12-01', signals: 1, classified: 1, modes: { 'gave-up': { count: 1, rate: 1 } } },
          ],
        },
      ],
    });
    // 2026-11-30 is a Monday: one week.
    const week = await get('/v1/failure-modes/timeline?from=2026-11-30&to=2026-12-01&bucket=week');
    expect(week.body.checkpoints[0].points).toEqual([{ start: '2026-11-30', signals: 5, classified: 4, modes: { 'wrong-fix': { count: 2, rate: 0.5 }, 'gave-up': { count: 2, rate: 0.5 } } }]);
    // Asked again (the settled day now comes from its stored count): the same answer.
    expect((await get('/v1/failure-modes/timeline?from=2026-11-30&to=2026-12-01&checkpoint=ck-0')).body).toEqual(r.body);
    const bad = await get('/v1/failure-modes/timeline?from=2026-12-05&to=2026-12-01&bucket=month');
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: { path: string }) => i.path)).toEqual(['bucket']);
    const reversed = await get('/v1/failure-modes/timeline?from=2026-12-05&to=2026-12-01');
    expect(reversed.status).toBe(400);
    expect(reversed.body.issues[0].path).toBe('from');
    expect((await get('/v1/failure-modes/timeline?from=2026-11-30&to=2026-12-01', otherKey)).body.checkpoints).toEqual([]);
  });
});

describe('GET /v1/overview', () => {
  it('counts feedback over 24 hours and 7 days, and names sweeps, checkpoints and suites', async () => {
    const now = Date.now();
    const events = [
      { h: 1, rating: 'down' }, { h: 2, rating: 'up' }, { h: 5, rating: 'down' }, { h: 30, rating: 'up' }, { h: 100, rating: 'none' }, { h: 200, rating: 'down' },
    ] as const;
    await fx.ports.records.putMany(
      events.map((e, i) => {
        const at = new Date(now - e.h * 3_600_000).toISOString();
        return feedbackEventRecord.encode({
          eventId: `ov-${i}`, feedbackKey: `k-${i}`, kind: 'rating', traceId: 't', sessionId: 's', turnId: `u${i}`, model: 'ck-0', rating: e.rating,
          source: 'user', reporter: 'r', trainingConsent: false, occurredAt: at, receivedAt: at, ingestId: `i-${i}`,
        });
      }),
    );
    const first = await get('/v1/overview');
    expect(first.status).toBe(200);
    const o = first.body;
    expect(o.feedback.last24h).toEqual({ events: 3, up: 1, down: 2, negativeShare: 2 / 3 });
    expect(o.feedback.last7d).toEqual({ events: 5, up: 2, down: 2, negativeShare: 0.5 });
    expect(o.sweeps.recent.map((s: { sweepId: string }) => s.sweepId)).toEqual(['running', 'newer', 'older']);
    expect(o.sweeps.running.map((s: { sweepId: string }) => s.sweepId)).toEqual(['running']);
    expect(o.checkpoints).toMatchObject({ total: 2, totalCapped: false, latest: { id: 'ck-1', model: 'm1' } });
    expect(o.suites).toEqual({ active: 2, saturated: 0 });
    // Settled hours are now stored counts: the same answer.
    const again = (await get('/v1/overview')).body;
    expect(again.feedback).toEqual(o.feedback);
    const other = (await get('/v1/overview', otherKey)).body;
    expect(other.feedback.last7d.events).toBe(0);
    expect(other.sweeps.recent).toEqual([]);
    expect((await get('/v1/overview?x=1')).body.issues[0].path).toBe('x');
  });
});
