/**
 * Gold-set creation and calibration limits over HTTP through the local runtime (real HTTP, the key check): a request
 * adds at most 100 subjects (400 naming `subjects` beyond), posting an existing set with the same definition queues
 * the subjects not queued yet (a retry after a timeout finishes the job) while another definition is a 409, and a
 * judge version whose model is not runnable here is refused naming `model`, never calibrated with a stand-in model.
 */
import { describe, expect, it } from 'vitest';
import { GOLD_SET_SUBJECTS_PER_REQUEST } from '../../lib/judges/http/annotation-handlers.ts';
import { JUDGE_MODEL_ENV } from '../../lib/modes/modes-models.ts';
import { startScriptedModelServer } from '../support/scripted-model-server.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';
import { SCOPE_LABEL, scriptedFailureModeJudge, storeSignals } from './support/annotation-fixture.ts';
import { setEnvFor, useLocalRuntime } from './support/http-runtime.ts';

const { cleanups, start } = useLocalRuntime('flywheel-registry-annotation-http-');

async function runtimeWithSignals(n: number) {
  const { side, call } = await start();
  const signals = await storeSignals(side, n);
  return { call, subjects: signals.map((s) => ({ kind: 'signal', signalKey: s.key })) };
}

describe('gold sets over HTTP', () => {
  it(
    'caps subjects per request, and adds the rest when the same set is posted again',
    async () => {
      const { call, subjects } = await runtimeWithSignals(60); // 120 signals
      const set = { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL], twoPersonFraction: 0.25 };

      const tooMany = await call('POST', '/v1/gold-sets', { ...set, subjects: subjects.slice(0, GOLD_SET_SUBJECTS_PER_REQUEST + 1) });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.issues.map((i: { path: string }) => i.path)).toEqual(['subjects']);
      expect((await call('GET', '/v1/gold-sets/fm-gold')).status).toBe(404);

      const first = await call('POST', '/v1/gold-sets', { ...set, subjects: subjects.slice(0, 60) });
      expect(first.status).toBe(201);
      expect(first.body.added).toBe(60);
      // A retry of a request that timed out half way, or the next batch: what is queued already is not queued twice.
      const resumed = await call('POST', '/v1/gold-sets', { ...set, labels: [SCOPE_LABEL, SCOPE_LABEL], subjects: subjects.slice(20, 120) });
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({ added: 60, goldSet: { name: 'fm-gold', judge: 'fm-judge', twoPersonFraction: 0.25 } });
      const again = await call('POST', '/v1/gold-sets', { ...set, subjects: subjects.slice(100, 120) });
      expect(again).toMatchObject({ status: 200, body: { added: 0 } });
      expect((await call('POST', '/v1/gold-sets', set)).status).toBe(200);
      expect((await call('GET', '/v1/gold-sets/fm-gold')).body).toMatchObject({ pending: 120, done: 0 });

      // Another definition under the name is still a conflict.
      expect((await call('POST', '/v1/gold-sets', { ...set, twoPersonFraction: 0.5, subjects: subjects.slice(0, 1) })).status).toBe(409);
      expect((await call('POST', '/v1/gold-sets', { ...set, judge: 'other-judge' })).status).toBe(409);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('calibrating over HTTP', () => {
  it(
    'refuses a version whose model is not runnable here, naming model, even with a judge model configured',
    async () => {
      const server = await startScriptedModelServer(scriptedFailureModeJudge(new Set()));
      cleanups.push(() => server.close());
      const spec = `openai:judge@${server.baseUrl}`;
      setEnvFor(cleanups, JUDGE_MODEL_ENV, spec);
      const { call, subjects } = await runtimeWithSignals(2);
      expect((await call('POST', '/v1/gold-sets', { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL], subjects })).status).toBe(201);

      const local = await call('POST', '/v1/judges', { name: 'fm-judge', kind: 'failure-mode', model: 'qwen-judge-local' });
      expect(local.status).toBe(201);
      const refused = await call('POST', '/v1/judges/fm-judge/calibrate', { goldSet: 'fm-gold', version: local.body.ref.version });
      expect(refused.status).toBe(400);
      expect(refused.body.issues.map((i: { path: string }) => i.path)).toEqual(['model']);
      expect(server.chatRequests()).toHaveLength(0);
      expect((await call('GET', '/v1/judges/fm-judge/calibrations')).body.items).toEqual([]);

      // The configured judge model's own spec runs (here it stops at the gold set nobody labelled yet).
      const configured = await call('POST', '/v1/judges', { name: 'fm-judge', kind: 'failure-mode', model: spec });
      const unlabelled = await call('POST', '/v1/judges/fm-judge/calibrate', { goldSet: 'fm-gold', version: configured.body.ref.version });
      expect(unlabelled.status).toBe(400);
      expect(unlabelled.body.issues.map((i: { path: string }) => i.path)).toEqual(['goldSet']);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
