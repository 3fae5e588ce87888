/**
 * Acting from Slack through the local runtime: an admin starts a drafted experiment from a thread (the answer comes
 * in that thread); a click on a decision notice's "Ship" button ships the experiment (the registry's incumbent
 * changes), resolves the notice and updates the Slack message in place; a second click ships nothing twice and says
 * who answered; a reader's click is refused.
 */
import { describe, expect, it } from 'vitest';
import { analysisRecord } from '../../lib/experiments/analysis/analysis-record.ts';
import { getNotice } from '../../lib/people/notices/notice-store.ts';
import { raiseNotice } from '../../lib/people/notices/raise-notice.ts';
import { SlackWebApi } from '../../lib/people/slack/slack-web-api.ts';
import { listIncumbentHistory } from '../../lib/registry/incumbent.ts';
import { analysisOf, checkpointBody, comparison, metricAnalysis } from '../experiments/decisions-support.ts';
import { waitFor } from '../support/wait-for.ts';
import { ADMIN, CHANNEL, READER, useSlackRuntime, type SlackRuntime } from './slack-support.ts';

const { start } = useSlackRuntime('flywheel-slack-actions-');

async function draftExperiment(rt: SlackRuntime, id: string): Promise<Record<string, any>> {
  for (const c of ['ckpt-a', 'ckpt-b']) expect((await rt.call('POST', '/v1/checkpoints', checkpointBody(c))).status).toBeLessThan(300);
  const created = await rt.call('POST', '/v1/experiments', {
    id,
    name: 'b vs a',
    arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'treatment', checkpoint: 'ckpt-b' }],
    metrics: { primary: 'accepted' },
    plannedUnitsPerArm: 500,
    maxDurationDays: 14,
  });
  expect(created.status).toBe(201);
  return created.body.experiment;
}

describe('acting from Slack', () => {
  it('starts a drafted experiment from a thread, answering in that thread', async () => {
    const rt = await start();
    await draftExperiment(rt, 'exp-thread');
    const bot = new SlackWebApi({ token: rt.slack.token, baseUrl: rt.slack.apiUrl });
    const parent = await bot.postMessage({ channel: CHANNEL, text: 'Shall we try ckpt-b?' });
    const ack = await rt.command('experiment start exp-thread', { threadTs: parent.ts });
    expect(ack.body.text).toContain('Working on it');
    const replies = await waitFor(() => (rt.slack.thread(parent.ts).length >= 2 ? rt.slack.thread(parent.ts) : undefined), { what: 'the answers in the thread' });
    expect(replies[0]!.text).toBe(`Experiment exp-thread started (running), by <@${ADMIN}>`);
    expect(replies[1]!.text).toContain('flywheel experiment status exp-thread');
    const experiment = await rt.call('GET', '/v1/experiments/exp-thread');
    expect(experiment.body.experiment).toMatchObject({ status: 'running' });
    expect(experiment.body.changes.at(-1)).toMatchObject({ by: `slack:${ADMIN}` });

    // A use case's refusal is answered in the thread: an unknown experiment, a sweep of an unknown suite, a training
    // request that is not one (each through the use case its route calls).
    await rt.command('experiment start exp-nope', { threadTs: parent.ts });
    await rt.command('sweep no-such-suite ckpt-a', { threadTs: parent.ts });
    await rt.command('train {"base": "tiny:0", "dataset": {}}', { threadTs: parent.ts });
    const refusals = await waitFor(() => {
      const warnings = rt.slack.thread(parent.ts).filter((m) => m.text.startsWith(':warning: '));
      return warnings.length === 3 ? warnings.map((m) => m.text) : undefined;
    }, { what: 'three refusals in the thread' });
    expect(refusals.find((t) => t.includes('exp-nope'))).toBeDefined();
    expect(refusals.find((t) => t.includes('no-such-suite'))).toBeDefined();
    expect(refusals.find((t) => t.includes('the dataset selects nothing'))).toBeDefined();
  });

  it('ships an experiment from a notice button once, updates the message, and answers a second click', async () => {
    const rt = await start();
    const experiment = await draftExperiment(rt, 'exp-ship');
    expect((await rt.call('POST', '/v1/experiments/exp-ship/start', {})).status).toBe(200);
    const analysis = analysisOf({ ...(experiment as Parameters<typeof analysisOf>[0]), status: 'running', startedAt: new Date(Date.now() - 3600_000).toISOString() }, [
      metricAnalysis('accepted', 'primary', 'increase', [comparison('treatment', { relativeLift: 0.08, ci: { low: 0.03, high: 0.13 }, verdict: 'better', rule: 'fixed-horizon 95%' })]),
    ], {}, new Date().toISOString());
    analysis.experimentId = 'exp-ship';
    analysis.recommendation = { action: 'ship', arm: 'treatment', because: 'accepted +8%' };
    await rt.side.records.put(analysisRecord.encode(analysis));

    const bot = new SlackWebApi({ token: rt.slack.token, baseUrl: rt.slack.apiUrl });
    const { notice } = await raiseNotice(
      rt.side,
      {
        dedupKey: 'experiment.decide:exp-ship',
        kind: 'decision',
        severity: 'warning',
        title: 'Experiment exp-ship: ship treatment?',
        text: 'accepted +8% [+3%, +13%]',
        source: { capability: 'experiments', runKind: 'experiment', runId: 'exp-ship' },
        actions: [
          { id: 'ship', label: 'Ship', style: 'primary', operation: { kind: 'decide-experiment', experimentId: 'exp-ship', decision: 'ship' } },
          { id: 'rollback', label: 'Roll back', style: 'danger', operation: { kind: 'decide-experiment', experimentId: 'exp-ship', decision: 'rollback' } },
        ],
      },
      { slack: bot, slackChannel: CHANNEL, log: () => {} },
    );
    const posted = notice.delivery.slackMessage!;
    expect(posted.channel).toBe(CHANNEL);
    expect(JSON.stringify(rt.slack.messages.get(posted.ts)!.blocks)).toContain('notice:ship');

    // A reader may not answer.
    const refused = await rt.click({ noticeId: notice.noticeId, actionId: 'ship', messageTs: posted.ts, user: READER });
    expect(refused).toEqual({ status: 200, text: '' });
    await waitFor(() => rt.slack.thread(posted.ts).find((m) => m.text.includes(`<@${READER}> only the stage's Slack admins`)), { what: "the reader's refusal" });
    expect((await rt.call('GET', '/v1/incumbent')).status).toBe(404);

    const clicked = await rt.click({ noticeId: notice.noticeId, actionId: 'ship', messageTs: posted.ts });
    expect(clicked).toEqual({ status: 200, text: '' });
    const updated = await waitFor(() => (rt.slack.messages.get(posted.ts)!.updates > 0 ? rt.slack.messages.get(posted.ts) : undefined), { what: 'the message updated' });
    const blocks = JSON.stringify(updated!.blocks);
    expect(blocks).toContain(`Shipped treatment of exp-ship: ckpt-b is the incumbent, by <@${ADMIN}> at `);
    expect(blocks).not.toContain('notice:ship'); // the buttons are gone
    expect((await rt.call('GET', '/v1/incumbent')).body).toMatchObject({ checkpoint: 'ckpt-b', experimentId: 'exp-ship' });
    expect(await getNotice(rt.side.records, notice.noticeId)).toMatchObject({ status: 'resolved', resolution: { actionId: 'ship', by: `slack:${ADMIN}` } });

    // A second click (and a click on the other button) ships nothing twice, and says who answered.
    await rt.click({ noticeId: notice.noticeId, actionId: 'ship', messageTs: posted.ts, user: 'U0OTHERADMIN' });
    await rt.click({ noticeId: notice.noticeId, actionId: 'rollback', messageTs: posted.ts });
    const answered = await waitFor(() => {
      const replies = rt.slack.thread(posted.ts).filter((m) => m.text.startsWith('Already answered by'));
      return replies.length === 2 ? replies : undefined;
    }, { what: 'both later clicks answered' });
    expect(answered[0]!.text).toBe(`Already answered by <@${ADMIN}>: Shipped treatment of exp-ship: ckpt-b is the incumbent`);
    expect(await listIncumbentHistory(rt.side.records)).toHaveLength(1);
    const decided = await rt.call('GET', '/v1/experiments/exp-ship');
    expect(decided.body.experiment).toMatchObject({ status: 'decided', decision: { kind: 'ship', arm: 'treatment', by: `slack:${ADMIN}` } });
  });
});
