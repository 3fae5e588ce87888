/**
 * A proposal becomes a draft: the `experiment.proposed` event (EventBridge-shaped, as the SQS consumer receives it)
 * creates a DRAFT experiment over the real local drivers: control = the registry incumbent (else the proposal's first
 * incumbent), treatment = the new checkpoint, the default metrics, ramp and planned sample; people are told once how
 * to approve it; a redelivery drafts nothing twice; a malformed detail names its field; the SQS handler reports a
 * failing record only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { listChanges } from '../../lib/experiments/experiment-store.ts';
import { draftFromProposalEvent, makeProposedExperimentHandler } from '../../lib/experiments/proposals/proposed-experiment-consumer.ts';
import { PROPOSAL_DEFAULTS } from '../../lib/experiments/proposals/draft-proposed-experiment.ts';
import { ValidationError } from '../../lib/errors.ts';
import { setIncumbent } from '../../lib/registry/incumbent.ts';
import { EXPERIMENT_PROPOSED, type ExperimentProposedDetail } from '../../lib/training/runs/events.ts';
import { openHarness, sqsRecord, type Harness } from '../support/lambda-events.ts';
import { checkpointBody, fakeSlack } from './decisions-support.ts';

let slack: Awaited<ReturnType<typeof fakeSlack>>;
let h: Harness | undefined;
beforeAll(async () => {
  slack = await fakeSlack();
  vi.stubEnv('FLYWHEEL_SLACK_WEBHOOK_URL', slack.url);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await slack.close();
});
afterEach(() => {
  h?.close();
  h = undefined;
});

const detail = (over: Partial<ExperimentProposedDetail> = {}): ExperimentProposedDetail => ({
  runId: 'run-1',
  proposalId: 'exp-run-1-abc123',
  checkpointId: 'ckpt-new',
  incumbents: ['ckpt-old'],
  sweepId: 'sweep-1',
  evidence: [{ suite: 's', mode: 'strict', incumbent: 'ckpt-old', score: 0.7, incumbentScore: 0.6, difference: 0.1, ci: { low: 0.02, high: 0.18 }, n: 200 }],
  ...over,
});
const body = (d: unknown, type = EXPERIMENT_PROPOSED) => JSON.stringify({ version: '0', id: 'e1', 'detail-type': type, source: 'flywheel', detail: d });

async function register(harness: Harness, ...ids: string[]) {
  for (const id of ids) expect((await harness.request('POST', '/v1/checkpoints', { body: checkpointBody(id) })).status).toBeLessThan(300);
}

describe('experiment.proposed → a draft experiment', () => {
  it('drafts against the registry incumbent with the defaults, tells people once, and a redelivery changes nothing', async () => {
    h = openHarness();
    await register(h, 'ckpt-old', 'ckpt-registry', 'ckpt-new');
    await setIncumbent(h.ports.records, { checkpoint: 'ckpt-registry', by: 'setup' }, h.clock.now);
    const posts = slack.posts.length;
    const first = await draftFromProposalEvent(h.ports, body(detail()), { plannedUnitsPerArm: 4321 });
    expect(first).toMatchObject({ drafted: true });
    const e = first && 'experiment' in first ? first.experiment : undefined;
    expect(e?.status).toBe('draft');
    expect(e?.definition.arms.map((a) => [a.id, a.checkpoint, a.control])).toEqual([['control', 'ckpt-registry', true], ['treatment', 'ckpt-new', false]]);
    expect(e?.definition.metrics).toEqual({ primary: 'thumbs_up_rate', secondary: [], guardrails: PROPOSAL_DEFAULTS.guardrails });
    expect(e?.definition.ramp.map((s) => s.percent)).toEqual([5, 25, 50]);
    expect(e?.plannedUnitsPerArm).toBe(4321);
    expect(e?.origin).toMatchObject({ kind: 'training-proposal', runId: 'run-1', proposalId: 'exp-run-1-abc123', sweepId: 'sweep-1', checkpoint: 'ckpt-new' });
    expect(slack.posts.slice(posts)).toHaveLength(1);
    expect(JSON.stringify(slack.posts.at(-1))).toContain('flywheel experiment start exp-run-1-abc123');

    const again = await draftFromProposalEvent(h.ports, body(detail()), { plannedUnitsPerArm: 4321 });
    expect(again).toMatchObject({ drafted: false, reason: 'already-drafted' });
    expect(slack.posts.slice(posts)).toHaveLength(1);
    expect((await listChanges(h.ports.records, 'exp-run-1-abc123')).map((c) => c.change)).toEqual(['created']);
  });

  it("takes the proposal's first incumbent when the registry has none; drafts nothing without a control or against itself", async () => {
    h = openHarness();
    await register(h, 'ckpt-old', 'ckpt-new');
    const r = await draftFromProposalEvent(h.ports, body(detail({ proposalId: 'p-2' })), { plannedUnitsPerArm: 100 });
    expect(r && 'experiment' in r ? r.experiment.definition.arms[0]?.checkpoint : undefined).toBe('ckpt-old');
    expect(await draftFromProposalEvent(h.ports, body(detail({ proposalId: 'p-3', incumbents: [] })), { plannedUnitsPerArm: 100 })).toMatchObject({ drafted: false, reason: 'no-control' });
    expect(await draftFromProposalEvent(h.ports, body(detail({ proposalId: 'p-4', checkpointId: 'ckpt-old' })), { plannedUnitsPerArm: 100 })).toMatchObject({ drafted: false, reason: 'checkpoint-is-incumbent' });
    expect(await draftFromProposalEvent(h.ports, body(detail(), 'feedback.stored'), { plannedUnitsPerArm: 100 })).toBeUndefined();
  });

  it('a malformed detail names the field; the SQS handler reports that record only', async () => {
    h = openHarness();
    await register(h, 'ckpt-old', 'ckpt-new');
    const error = await draftFromProposalEvent(h.ports, body({ ...detail(), checkpointId: 7 }), { plannedUnitsPerArm: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['checkpointId']);
    const handler = makeProposedExperimentHandler(h.ports, { plannedUnitsPerArm: 100 });
    const response = await handler({ Records: [sqsRecord('good', body(detail({ proposalId: 'p-5' }))), sqsRecord('bad', body({ runId: 'r' })), sqsRecord('junk', 'not json')] });
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['bad', 'junk']);
  });
});
