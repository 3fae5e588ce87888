/**
 * Rubric and pairwise judges calibrated over HTTP through the local runtime (`startLocalRuntime`, real HTTP with the
 * key check) and the CLI as a child process: stored attempts are put in gold sets and labelled by people over the API,
 * a rubric judge naming its model (scripted over the scripted model server) is calibrated by
 * `POST /v1/judges/{name}/calibrate`, a pairwise judge on the configured `FLYWHEEL_JUDGE_MODEL` is calibrated
 * through `flywheel annotate calibrate`, and a judge on a gold set of another subject kind is
 * refused naming `kind`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { PAIRWISE_TOOL } from '../../lib/judges/pairwise/judge-pair.ts';
import { RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { JUDGE_MODEL_ENV } from '../../lib/modes/modes-models.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type ScriptStep } from '../support/scripted-model-server.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';
import { seedAttempt, seedCalcTask, userMessage } from './support/attempt-fixture.ts';
import { setEnvFor, useLocalRuntime } from './support/http-runtime.ts';

const execFileAsync = promisify(execFile);
const { tempDir, cleanups, start } = useLocalRuntime('flywheel-runners-http-');

const RUBRIC = [{ id: 'adds', criterion: 'add returns the sum of its arguments' }];

/** Stores attempt `n` of run `runId` (a diff tagged `att-<n>` that adds or subtracts, and its trajectory). */
async function seedCalcAttempt(ports: LocalPorts, runId: string, n: number, good: boolean): Promise<{ kind: 'attempt'; runId: string; attemptId: string }> {
  const diff = `--- a/calc.py\n+++ b/calc.py\n+# att-${n}\n+def add(a, b):\n+    return a ${good ? '+' : '-'} b\n`;
  const trajectory = [{ type: 'message', role: 'user', content: 'Write add(a, b).' }, { type: 'assistant', content: `Done (att-${n}).`, toolCalls: [] }].map((l) => JSON.stringify(l)).join('\n');
  return { kind: 'attempt', ...(await seedAttempt(ports, runId, n, { diff, trajectory })) };
}

/** Right on `adds` except on att-1 and att-2 (of 32: 30 right). */
const rubricJudge = (request: RecordedRequest): ScriptStep => {
  const user = userMessage(request);
  const tag = /# (att-\d+)/.exec(user)![1]!;
  const good = user.includes('return a + b');
  const pass = good !== (tag === 'att-1' || tag === 'att-2');
  return reply.tool(RUBRIC_TOOL, { verdicts: [{ id: 'adds', verdict: pass ? 'pass' : 'fail', reason: 'what add returns', evidence: [{ source: 'diff', quote: `def add(a, b):\n+    return a ${good ? '+' : '-'} b` }] }] });
};

/** Prefers the attempt that returns the sum. */
const pairJudge = (request: RecordedRequest): ScriptStep => {
  const [a] = userMessage(request).split('\n# Attempt B\n');
  const side = a!.includes('return a + b') ? 'a' : 'b';
  return reply.tool(PAIRWISE_TOOL, { preference: side, reason: 'it returns the sum', evidence: [{ side, source: 'diff', quote: 'def add(a, b):\n+    return a + b' }] });
};

describe('calibrating rubric and pairwise judges over HTTP', () => {
  it(
    'calibrates a rubric judge by the API and a pairwise judge with the configured judge model by the CLI',
    async () => {
      const dataDir = tempDir();
      const rubricServer = await startScriptedModelServer(rubricJudge);
      cleanups.push(() => rubricServer.close());
      const pairServer = await startScriptedModelServer(pairJudge);
      cleanups.push(() => pairServer.close());
      setEnvFor(cleanups, JUDGE_MODEL_ENV, `openai:house-judge@${pairServer.baseUrl}`);
      const { side, call } = await start(dataDir);
      const labelAll = async (goldSet: string, labelsOf: (subject: Record<string, any>) => Record<string, string>) => {
        let cursor: string | undefined;
        let n = 0;
        do {
          const page = await call('GET', `/v1/annotations?queue=gold:${goldSet}&status=pending&limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          for (const item of page.body.items as Array<Record<string, any>>) {
            expect((await call('POST', `/v1/annotations/${item.id}/labels`, { annotator: 'ana', labels: labelsOf(item.subject) })).status).toBe(200);
            if (item.needs === 2) expect((await call('POST', `/v1/annotations/${item.id}/labels`, { annotator: 'bob', labels: labelsOf(item.subject) })).status).toBe(200);
            n++;
          }
          cursor = page.body.cursor as string | undefined;
        } while (cursor);
        return n;
      };

      await seedCalcTask(side, RUBRIC);
      const attempts: Array<{ kind: 'attempt'; runId: string; attemptId: string; good: boolean }> = [];
      for (let n = 0; n < 32; n++) attempts.push({ ...(await seedCalcAttempt(side, 'r1', n, n % 2 === 0)), good: n % 2 === 0 });
      const goodOf = new Map(attempts.map((a) => [a.attemptId, a.good]));

      // A rubric judge that names its model: calibrated over HTTP on a gold set of attempts labelled over HTTP.
      const registered = await call('POST', '/v1/judges', { name: 'calc-judge', kind: 'rubric', model: `openai:judge@${rubricServer.baseUrl}` });
      expect(registered.status).toBe(201);
      const version = registered.body.ref.version as string;
      const subjects = attempts.map(({ kind, runId, attemptId }) => ({ kind, runId, attemptId }));
      expect((await call('POST', '/v1/gold-sets', { name: 'calc-gold', judge: 'calc-judge', labels: ['adds'], twoPersonFraction: 0.25, subjects })).status).toBe(201);
      expect(await labelAll('calc-gold', (s) => ({ adds: goodOf.get(s.attemptId as string) ? 'pass' : 'fail' }))).toBe(32);
      const calibrated = await call('POST', '/v1/judges/calc-judge/calibrate', { goldSet: 'calc-gold', version, seed: 3, resamples: 200 });
      expect(calibrated.status).toBe(200);
      expect(calibrated.body.judge).toEqual({ name: 'calc-judge', version });
      const adds = (calibrated.body.criteria as Array<Record<string, any>>).find((c) => c.id === 'adds')!;
      expect(adds.n).toBe(32);
      expect(adds.accuracy).toBeCloseTo(30 / 32, 10);
      // Confusion [[15, 1], [1, 15]]: kappa (30/32 - 1/2) / (1/2) = 0.875.
      expect(adds.kappa.estimate).toBeCloseTo(0.875, 10);
      expect(adds.humanCeiling.estimate).toBe(1);
      const reports = await call('GET', '/v1/judges/calc-judge/calibrations');
      expect(reports.body.items.map((r: { id: string }) => r.id)).toEqual([calibrated.body.id]);
      expect(rubricServer.chatRequests().length).toBeGreaterThanOrEqual(32);
      expect(pairServer.chatRequests()).toHaveLength(0);

      // A pairwise judge on the configured FLYWHEEL_JUDGE_MODEL, calibrated through the CLI.
      const pairs = Array.from({ length: 16 }, (_, i) => {
        const [good, bad] = [subjects[2 * i]!, subjects[2 * i + 1]!];
        return i % 2 === 0 ? { kind: 'pair', a: good, b: bad } : { kind: 'pair', a: bad, b: good };
      });
      const pairRegistered = await call('POST', '/v1/judges', { name: 'calc-pair-judge', kind: 'pairwise', model: `openai:house-judge@${pairServer.baseUrl}` });
      expect(pairRegistered.status).toBe(201);
      expect((await call('POST', '/v1/gold-sets', { name: 'calc-pairs', judge: 'calc-pair-judge', labels: ['preference'], subjects: pairs })).status).toBe(201);
      expect(await labelAll('calc-pairs', (s) => ({ preference: goodOf.get(s.a.attemptId as string) ? 'a' : 'b' }))).toBe(16);
      const cli = await execFileAsync('npx', ['node', 'bin/flywheel.ts', 'annotate', 'calibrate', 'calc-pair-judge', '--gold-set', 'calc-pairs', '--version', pairRegistered.body.ref.version as string, '--retest', '0', '--data-dir', dataDir], {
        cwd: process.cwd(),
      });
      expect(cli.stdout).toMatch(/report cal-[0-9a-f]+: calc-pair-judge@[0-9a-f]{12} on calc-pairs/);
      expect(cli.stdout).toContain('position swap: 1 consistent over 16 pairs');
      expect(pairServer.chatRequests()).toHaveLength(32);
      expect(pairServer.chatRequests()[0]!.body['model']).toBe('house-judge');
      const pairReports = await call('GET', '/v1/judges/calc-pair-judge/calibrations');
      expect(pairReports.body.items[0].criteria[0]).toMatchObject({ id: 'preference', n: 16, accuracy: 1 });

      // A judge on a gold set of another subject kind is refused naming `kind`.
      const wrongKind = await call('POST', '/v1/judges/calc-judge/calibrate', { goldSet: 'calc-pairs', version });
      expect(wrongKind.status).toBe(400);
      expect(wrongKind.body.issues[0].path).toBe('kind');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
