/**
 * The failure-mode chain judges with the registry's promoted `failure-mode` version when there is one (its model,
 * built from its spec, and its taxonomy version), else with the environment's judge model; a demoted version stops
 * being used once the chain's short cache of the promoted version has expired. Labels and `judge.verdict` events name
 * the version that actually judged. Two scripted model servers over real HTTP: the environment's judge and another
 * model the promoted version names.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JUDGE_VERDICT, JudgeVerdictDetailSchema } from '../../lib/judges/events.ts';
import { demoteJudge, promoteJudge } from '../../lib/judges/registry/promote-judge.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { classifySignal, JUDGE_REGISTRY_TTL_MS } from '../../lib/modes/classify-signal.ts';
import { fixedClassifier } from '../../lib/modes/current-classifier.ts';
import { failureModeJudgeDefinition, JUDGE_TOOL } from '../../lib/modes/judge-signal.ts';
import { loadSignal } from '../../lib/modes/signal.ts';
import { ensureTaxonomy } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { alwaysUnsure, defaultModel, storeFeedback, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let servers: ScriptedModelServer[] = [];
beforeAll(() => {
  defaultModel();
}, 120_000);
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  env?.cleanup();
  env = undefined;
});

const COMMENT = 'I asked for a one-line null check and it rewrote the whole validation module.';
const answer = () => reply.tool(JUDGE_TOOL, { modes: [{ mode: 'scope-calibration', severity: 'medium' }], evidence: 'rewrote the whole validation module', evidenceSource: 'comment', confidence: 0.9 });

async function setup() {
  let clock = Date.UTC(2026, 11, 3, 12, 0, 0);
  env = tempPorts(() => new Date(clock));
  const envServer = await startScriptedModelServer(() => answer());
  const otherServer = await startScriptedModelServer(() => answer());
  servers.push(envServer, otherServer);
  const ports = env.ports;
  const judge = openAiCompatibleModel({ baseUrl: envServer.baseUrl, model: 'env-judge', retry: { maxAttempts: 1 } });
  const deps = { ports, classifier: fixedClassifier(alwaysUnsure(defaultModel())), judge };
  const classify = async () => {
    const id = await storeFeedback(ports, { comment: COMMENT });
    return classifySignal(deps, (await loadSignal(ports, 'feedback', id))!);
  };
  const taxonomy = await ensureTaxonomy(ports.records);
  const otherSpec = `openai:other-judge@${otherServer.baseUrl}`;
  const { ref: otherRef } = await registerJudge(ports, { ...failureModeJudgeDefinition(otherSpec, taxonomy), by: 'ana' });
  const advance = (ms: number) => {
    clock += ms;
  };
  const verdicts = () => ports.events.recent({ type: JUDGE_VERDICT }).map((e) => JudgeVerdictDetailSchema.parse(e.detail));
  return { ports, judge, classify, envServer, otherServer, otherSpec, otherRef, advance, verdicts };
}

describe('the failure-mode chain runs the promoted judge version', () => {
  it('judges with the promoted version’s model, and with the environment’s again once it is demoted', async () => {
    const { ports, classify, envServer, otherServer, otherSpec, otherRef, advance, verdicts } = await setup();

    const before = await classify();
    expect(before.outcome).toBe('judge');
    expect(envServer.chatRequests()).toHaveLength(1);
    const envRef = before.label.judge!;
    expect(envRef).not.toEqual(otherRef);

    await promoteJudge(ports, otherRef, { by: 'ana', force: true, reason: 'test: promoted by hand' });
    advance(JUDGE_REGISTRY_TTL_MS); // the chain's cache of the promoted version has expired
    const promoted = await classify();
    expect(promoted.outcome).toBe('judge');
    expect(otherServer.chatRequests()).toHaveLength(1);
    expect(envServer.chatRequests()).toHaveLength(1);
    expect(promoted.label.judge).toEqual(otherRef);
    expect(promoted.label.judgeModel).toBe(otherSpec);
    expect(verdicts().map((v) => v.judge)).toEqual([envRef, otherRef]);

    // Demoted: within the cache's lifetime the promoted version may still judge; after it, the environment's model.
    await demoteJudge(ports, otherRef, 'test: agreement dropped', { by: 'drift-watch' });
    advance(JUDGE_REGISTRY_TTL_MS);
    const after = await classify();
    expect(after.label.judge).toEqual(envRef);
    expect(after.label.judgeModel).toBe(before.label.judgeModel);
    expect(otherServer.chatRequests()).toHaveLength(1);
    expect(envServer.chatRequests()).toHaveLength(2);
    expect(verdicts().map((v) => v.judge)).toEqual([envRef, otherRef, envRef]);
  });

  it('reads the registry again only after the cache expires (judgeRegistryTtlMs 0: every signal)', async () => {
    const { ports, judge, envServer, otherServer, otherRef, advance } = await setup();
    await promoteJudge(ports, otherRef, { by: 'ana', force: true, reason: 'test' });
    const classifyWith = async (ttl?: number) => {
      const id = await storeFeedback(ports, { comment: COMMENT });
      return classifySignal({ ports, classifier: fixedClassifier(alwaysUnsure(defaultModel())), judge, ...(ttl !== undefined ? { judgeRegistryTtlMs: ttl } : {}) }, (await loadSignal(ports, 'feedback', id))!);
    };
    expect((await classifyWith()).label.judge).toEqual(otherRef);
    await demoteJudge(ports, otherRef, 'test: dropped');
    advance(1_000);
    expect((await classifyWith()).label.judge).toEqual(otherRef); // cached for JUDGE_REGISTRY_TTL_MS
    expect((await classifyWith(0)).label.judge).not.toEqual(otherRef); // read again: demoted, the environment's
    expect(otherServer.chatRequests()).toHaveLength(2);
    expect(envServer.chatRequests()).toHaveLength(1);
  });

  it('judges with a promoted version when no environment judge is configured', async () => {
    const { ports, otherServer, otherRef, advance } = await setup();
    await promoteJudge(ports, otherRef, { by: 'ana', force: true, reason: 'test' });
    advance(JUDGE_REGISTRY_TTL_MS);
    const id = await storeFeedback(ports, { comment: COMMENT });
    const { outcome, label } = await classifySignal({ ports, classifier: fixedClassifier(alwaysUnsure(defaultModel())) }, (await loadSignal(ports, 'feedback', id))!);
    expect(outcome).toBe('judge');
    expect(label.judge).toEqual(otherRef);
    expect(otherServer.chatRequests()).toHaveLength(1);
  });
});
