/**
 * The failure-mode chain uses the judge registry: the judge it runs (model, system prompt, tool schema, taxonomy
 * version) is registered once per process as a version of `failure-mode`, every label the judge gives (or fails to
 * give) names that version, and each verdict is published as `judge.verdict` for the drift watch. The judge is the
 * OpenAI driver against the scripted model server over real HTTP; the local classifier is a real trained one.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JUDGE_VERDICT, JudgeVerdictDetailSchema } from '../../lib/judges/events.ts';
import { judgeIdentity, parseJudgeDefinition } from '../../lib/judges/judge-identity.ts';
import { getJudge, listJudges, resolveJudge } from '../../lib/judges/registry/read-judges.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { classifySignal } from '../../lib/modes/classify-signal.ts';
import { fixedClassifier } from '../../lib/modes/current-classifier.ts';
import { FAILURE_MODE_JUDGE, failureModeJudgeDefinition, JUDGE_TOOL, judgeTool } from '../../lib/modes/judge-signal.ts';
import { readLabel } from '../../lib/modes/write-label.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { ensureTaxonomy } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type Script, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { alwaysUnsure, defaultModel, storeFeedback, tempPorts } from '../modes/support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let server: ScriptedModelServer | undefined;
beforeAll(() => {
  defaultModel();
}, 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
  env?.cleanup();
  env = undefined;
});

async function chain(script: Script) {
  server = await startScriptedModelServer(script);
  env = tempPorts();
  const judge = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { maxAttempts: 1 } });
  const deps = { ports: env.ports, classifier: fixedClassifier(alwaysUnsure(defaultModel())), judge };
  const classify = async (fields: Record<string, unknown>) => {
    const id = await storeFeedback(env!.ports, fields);
    return classifySignal(deps, (await loadSignal(env!.ports, 'feedback', id))!);
  };
  return { ports: env.ports, judge, classify };
}

const COMMENT = 'I asked for a one-line null check and it rewrote the whole validation module.';

describe('the failure-mode chain and the judge registry', () => {
  it('registers the judge it runs once, and every label it gives names that version', async () => {
    const { ports, judge, classify } = await chain((req) => {
      const text = JSON.stringify(req.body.messages);
      return text.includes('rewrote the whole')
        ? reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'medium' }], evidence: 'rewrote the whole validation module', evidenceSource: 'comment', confidence: 0.9 })
        : reply.tool(JUDGE_TOOL, { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.95 });
    });
    const first = await classify({ comment: COMMENT });
    const second = await classify({ comment: 'Thanks, that was exactly the fix I wanted.', rating: 'up' });
    expect(first.outcome).toBe('judge');
    expect(second.outcome).toBe('judge');

    const taxonomy = await ensureTaxonomy(ports.records);
    const expected = judgeIdentity(parseJudgeDefinition(failureModeJudgeDefinition(judge.id, taxonomy)));
    const ref = { name: FAILURE_MODE_JUDGE, version: expected.version };
    expect(first.label.judge).toEqual(ref);
    expect(second.label.judge).toEqual(ref);
    expect((await readLabel(ports, first.label.signalKey))?.judge).toEqual(ref);

    // The registry lists the chain's judge: one version, its full definition.
    expect((await listJudges(ports, {})).items).toEqual([expect.objectContaining({ name: FAILURE_MODE_JUDGE, kind: 'failure-mode', versions: 1 })]);
    const registered = await resolveJudge(ports, ref);
    expect(registered).toMatchObject({ status: 'candidate', registeredBy: 'failure-mode-chain', identity: { model: judge.id, taxonomyVersion: taxonomy.version, decoding: { temperature: 0 } } });
    expect(registered.definition.outputSchema).toEqual(judgeTool(taxonomy).parameters);
    expect(registered.definition.prompt).toContain(`taxonomy version ${taxonomy.version}`);
    expect(registered.definition.prompt).toContain('scope-calibration');
    expect((await getJudge(ports, FAILURE_MODE_JUDGE)).versionCount).toBe(1);

    // One judge.verdict per verdict: every mode of the taxonomy in the gold vocabulary, fine when none, the user's rating.
    const verdicts = ports.events.recent({ type: JUDGE_VERDICT }).map((e) => JudgeVerdictDetailSchema.parse(e.detail));
    expect(verdicts).toHaveLength(2);
    const [bad, fine] = verdicts;
    expect(bad).toMatchObject({ judge: ref, subject: { kind: 'signal', signalKey: first.label.signalKey }, fine: false, userRating: 'down' });
    expect(bad!.labels['mode:scope-calibration']).toBe('yes');
    expect(Object.keys(bad!.labels).sort()).toEqual(taxonomy.modes.map((m) => `mode:${m.id}`).sort());
    expect(Object.entries(bad!.labels).filter(([, v]) => v === 'yes')).toHaveLength(1);
    expect(fine).toMatchObject({ judge: ref, fine: true, userRating: 'up' });
    expect(Object.values(fine!.labels).every((v) => v === 'no')).toBe(true);
  });

  it('names the judge on a label it failed to give, and publishes no verdict for it', async () => {
    const { ports, classify } = await chain(() => reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'low' }], evidence: 'words that are not there', evidenceSource: 'comment', confidence: 0.9 }));
    const { outcome, label } = await classify({ comment: COMMENT });
    expect(outcome).toBe('review');
    expect(label.review?.reason).toBe('judge-evidence-not-found');
    expect(label.judge?.name).toBe(FAILURE_MODE_JUDGE);
    expect(label.judge?.version).toMatch(/^[0-9a-f]{12}$/);
    expect(ports.events.recent({ type: JUDGE_VERDICT })).toHaveLength(0);
  });
});
