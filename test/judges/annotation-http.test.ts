/**
 * Annotation, gold sets, calibration and the drift watch through the local runtime (`startLocalRuntime`, real HTTP
 * with the key check and scopes) and the CLI as a child process: people label a gold set, the failure-mode judge
 * (scripted over the scripted model server) is calibrated over HTTP and promoted, and production verdicts published
 * on the event log reach the drift queue through the runtime's own tail.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { DRIFT_SAMPLE_FRACTION_ENV } from '../../lib/judges/drift/consumers/watch-verdicts-consumer.ts';
import { JUDGE_VERDICT } from '../../lib/judges/events.ts';
import { MODE_IDS } from '../../lib/modes/taxonomy/taxonomy.ts';
import { startScriptedModelServer } from '../support/scripted-model-server.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';
import { SCOPE_LABEL, scriptedFailureModeJudge, storeSignals } from './support/annotation-fixture.ts';
import { setEnvFor, useLocalRuntime } from './support/http-runtime.ts';

const run = promisify(execFile);
const { tempDir, cleanups, start } = useLocalRuntime('flywheel-annotation-http-');

const ANNOTATION_ROUTES = ['listAnnotations', 'postAnnotation', 'postAnnotationLabels', 'postGoldSet', 'getGoldSet', 'calibrateJudge', 'checkJudgeDrift'];

describe('annotation over HTTP', () => {
  it('reads need the read scope, the rest admin, all on judges/api', () => {
    const mine = routes.filter((r) => ANNOTATION_ROUTES.includes(r.operationId));
    expect(mine).toHaveLength(7);
    for (const r of mine) {
      expect(r.lambda).toBe('judges/api');
      expect(r.scope).toBe(r.method === 'GET' ? 'read' : 'admin');
    }
  });

  it(
    'labels a gold set, calibrates and promotes the failure-mode judge, and queues drifting verdicts',
    async () => {
      const dataDir = tempDir();
      const server = await startScriptedModelServer(scriptedFailureModeJudge(new Set(['s-yes-0'])));
      cleanups.push(() => server.close());
      // The judge's version hashes its model spec, and so the scripted server's port: which subjects fall in the
      // drift watch's 5% sample would change from run to run. With no sample, the disagreement is always queued as one.
      setEnvFor(cleanups, DRIFT_SAMPLE_FRACTION_ENV, '0');
      const { side, call } = await start(dataDir);

      const signals = await storeSignals(side, 16);
      const truth = new Map(signals.map((s) => [s.key, s.truth]));
      const registered = await call('POST', '/v1/judges', { name: 'fm-judge', kind: 'failure-mode', model: `openai:judge@${server.baseUrl}` });
      expect(registered.status).toBe(201);
      const version = registered.body.ref.version as string;

      const created = await call('POST', '/v1/gold-sets', { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL], twoPersonFraction: 0.3, subjects: signals.slice(0, 30).map((s) => ({ kind: 'signal', signalKey: s.key })) });
      expect(created.status).toBe(201);
      expect(created.body.added).toBe(30);
      const more = await call('POST', '/v1/annotations', { goldSet: 'fm-gold', subject: { kind: 'signal', signalKey: signals[30]!.key } });
      expect(more.status).toBe(201);
      expect((await call('POST', '/v1/annotations', { goldSet: 'fm-gold', subject: { kind: 'signal', signalKey: signals[30]!.key } })).status).toBe(200);
      expect((await call('POST', '/v1/gold-sets', { name: 'fm-gold', judge: 'fm-judge', labels: [SCOPE_LABEL] })).status).toBe(409);

      const page1 = await call('GET', '/v1/annotations?queue=gold:fm-gold&limit=20');
      const page2 = await call('GET', `/v1/annotations?queue=gold:fm-gold&limit=20&cursor=${encodeURIComponent(page1.body.cursor as string)}`);
      const items = [...page1.body.items, ...page2.body.items] as Array<Record<string, any>>;
      expect(items).toHaveLength(31);
      const bad = await call('POST', `/v1/annotations/${items[0]!.id}/labels`, { annotator: 'ana', labels: { c2: 'pass' } });
      expect(bad.status).toBe(400);
      expect(bad.body.issues.map((i: { path: string }) => i.path)).toEqual(['labels.c2']);
      for (const item of items) {
        const labels = { [SCOPE_LABEL]: truth.get(item.subject.signalKey)! };
        expect((await call('POST', `/v1/annotations/${item.id}/labels`, { annotator: 'ana', labels })).status).toBe(200);
        if (item.needs === 2) {
          expect((await call('POST', `/v1/annotations/${item.id}/labels`, { annotator: 'ana', labels })).status).toBe(409);
          const second = await call('POST', `/v1/annotations/${item.id}/labels`, { annotator: 'bob', labels });
          expect(second.body.item).toMatchObject({ status: 'done', secondAnnotator: 'bob' });
        }
      }
      const shown = await call('GET', '/v1/gold-sets/fm-gold');
      expect(shown.body).toMatchObject({ pending: 0, done: 31 });
      expect(shown.body.twoPerson).toBeGreaterThan(0);

      // Calibrated over HTTP with the model its definition names (the scripted judge errs once in 31).
      const calibrated = await call('POST', '/v1/judges/fm-judge/calibrate', { goldSet: 'fm-gold', version, seed: 5, resamples: 200 });
      expect(calibrated.status).toBe(200);
      const scope = (calibrated.body.criteria as Array<Record<string, any>>).find((c) => c.id === SCOPE_LABEL)!;
      expect(scope).toMatchObject({ n: 31 });
      expect(scope.accuracy).toBeCloseTo(30 / 31, 10);
      expect(scope.humanCeiling.estimate).toBe(1);
      const reports = await call('GET', '/v1/judges/fm-judge/calibrations');
      expect(reports.body.items.map((r: { id: string }) => r.id)).toEqual([calibrated.body.id]);
      expect((await call('POST', '/v1/judges/fm-judge/promote', { version, by: 'ana' })).status).toBe(200);

      // Other kinds are refused naming `kind`; a gold set nobody labelled names `goldSet`.
      await call('POST', '/v1/judges', { name: 'scope-judge', kind: 'rubric', model: `openai:judge@${server.baseUrl}`, rubric: [{ id: 'scope', criterion: 'stays in scope' }] });
      const rubric = await call('POST', '/v1/judges/scope-judge/calibrate', { goldSet: 'fm-gold', version: (await call('GET', '/v1/judges/scope-judge')).body.latestVersion });
      expect(rubric.status).toBe(400);
      expect(rubric.body.issues[0].path).toBe('kind');
      await call('POST', '/v1/gold-sets', { name: 'empty', judge: 'fm-judge', labels: [SCOPE_LABEL] });
      const empty = await call('POST', '/v1/judges/fm-judge/calibrate', { goldSet: 'empty' });
      expect(empty.status).toBe(400);
      expect(empty.body.issues[0].path).toBe('goldSet');

      const check = await call('POST', '/v1/judges/fm-judge/drift-check', { minN: 5 });
      expect(check.status).toBe(200);
      expect(check.body).toMatchObject({ judge: 'fm-judge', status: 'too-few-pairs', ref: { name: 'fm-judge', version }, demoted: false });

      // A production verdict the user disagreed with, published on the event log: the runtime's tail queues it.
      const detail = { judge: { name: 'fm-judge', version }, subject: { kind: 'signal', signalKey: signals[31]!.key }, labels: Object.fromEntries(MODE_IDS.map((m) => [`mode:${m}`, 'no'])), fine: true, userRating: 'down', at: new Date().toISOString() };
      await side.events.publish([{ type: JUDGE_VERDICT, detail }]);
      const queued = await waitFor(async () => {
        const r = await call('GET', '/v1/annotations?queue=drift:fm-judge&reason=disagreement');
        return r.body.items.length > 0 ? r.body.items : undefined;
      }, { what: 'the disagreement to be queued by the drift watch' });
      expect(queued[0]).toMatchObject({ subjectKey: `signal:${signals[31]!.key}`, judge: { fine: true, userRating: 'down' } });
      const labelled = await call('POST', `/v1/annotations/${queued[0].id}/labels`, { annotator: 'ana', labels: { [SCOPE_LABEL]: 'yes' } });
      // A disagreement is reported apart from the sampled pairs the kappa is computed on; the person sided with the user.
      expect(labelled.body.drift).toMatchObject({ status: 'too-few-pairs', pairs: 0, disagreements: { pairs: 1, agreedWithUser: 1 } });

      // The CLI against the same runtime.
      const cli = (args: string[]) => run('npx', ['node', 'bin/flywheel.ts', 'annotate', ...args, '--data-dir', dataDir], { cwd: process.cwd() });
      const show = await cli(['gold', 'show', 'fm-gold']);
      expect(show.stdout).toContain('31 done, 0 pending');
      const refused = await cli(['label', queued[0].id as string, '--label', 'c2=pass', '--annotator', 'cy']).catch((e: { stderr: string; code: number }) => e);
      expect((refused as { code: number }).code).toBe(1);
      expect((refused as { stderr: string }).stderr).toContain('labels.c2');
      const list = await cli(['list', '--queue', 'drift:fm-judge', '--status', 'done']);
      expect(list.stdout).toContain(`signal:${signals[31]!.key}`);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
