/**
 * Notices over real HTTP: the local runtime as a child process (`flywheel start`, its bot pointed at a fake Slack),
 * notices raised through the use case on the runtime's data folder, then the routes with the runtime's admin key and a
 * read-only key (list with filters, read, acknowledge, answer a decision: the suite is retired and the Slack message
 * loses its buttons; a second answer is refused), then the `flywheel notices` CLI against the same runtime.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { raiseNotice } from '../../lib/people/notices/raise-notice.ts';
import type { RaiseNoticeInput } from '../../lib/people/notices/schemas.ts';
import { SlackWebApi } from '../../lib/people/slack/slack-web-api.ts';
import { runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';

let dataDir: string;
let rt: RuntimeProcess;
let readKey: string;
let slack: FakeSlack;

beforeAll(async () => {
  slack = await startFakeSlack({ channels: ['C-NOTICES'] });
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-notices-http-'));
  rt = await startRuntime({
    dataDir,
    env: { FLYWHEEL_SCHEDULE: 'off', FLYWHEEL_SLACK_BOT_TOKEN: slack.token, FLYWHEEL_SLACK_API_URL: slack.apiUrl, FLYWHEEL_SLACK_CHANNEL: 'C-NOTICES' },
  });
  const { stdout } = await runCli(['keys', 'create', '--tenant', 'default', '--scopes', 'read', '--name', 'dashboard', '--json', '--data-dir', dataDir]);
  readKey = (JSON.parse(stdout) as { key: string }).key;
}, 90_000);

afterAll(async () => {
  expect(await rt?.stop('SIGTERM')).toBe(0);
  rmSync(dataDir, { recursive: true, force: true });
  await slack?.close();
});

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': init.key ?? rt.apiKey, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Raises a notice through the use case on the runtime's data folder, posted by the bot to the fake Slack. */
async function raise(input: RaiseNoticeInput) {
  const ports = openLocalPorts(dataDir);
  try {
    return await raiseNotice(ports, input, { slack: new SlackWebApi({ token: slack.token, baseUrl: slack.apiUrl }), slackChannel: 'C-NOTICES', log: () => {} });
  } finally {
    ports.close();
  }
}

const saturated = (suite: string): RaiseNoticeInput => ({
  dedupKey: `suite.saturated:${suite}:v1`,
  kind: 'decision',
  severity: 'alert',
  title: `Suite ${suite} v1 is saturated`,
  text: 'ck-1 scored 95% in strict mode. Retire it, or forge harder tasks.',
  source: { capability: 'sweeps', runKind: 'sweep', runId: 's1' },
  link: `/suites/${suite}`,
  actions: [{ id: 'retire', label: 'Retire the suite', style: 'danger', operation: { kind: 'retire-suite', suiteId: suite } }],
});

describe('the notices API and CLI', () => {
  it('lists, reads, acknowledges and answers notices; reads need read, the rest admin; hostile input is refused naming the field', { timeout: 120_000 }, async () => {
    for (const id of ['forge-py', 'forge-ts']) {
      const suite = await api('/v1/suites', { method: 'POST', body: { id, visibility: 'private', owner: 'evals', description: 'forged tasks', tasks: { kind: 'records' }, taskIds: ['t1'] } });
      expect(suite.status).toBe(201);
    }
    const decision = await raise(saturated('forge-py'));
    const failure = await raise({ dedupKey: 'sweep.failed:s2', kind: 'failure', severity: 'warning', title: 'Sweep s2 failed: 0/4 shards', text: 'c0: exit 3 (harness error)', source: { capability: 'sweeps', runKind: 'sweep', runId: 's2' }, link: '/sweeps/s2' });
    expect(decision.delivered && failure.delivered).toBe(true);

    // Reads: newest first, filtered; the read key reads.
    const all = await api('/v1/notices', { key: readKey });
    expect(all.status).toBe(200);
    expect(all.body.notices.map((n: { noticeId: string }) => n.noticeId)).toEqual([failure.notice.noticeId, decision.notice.noticeId]);
    const decisions = await api('/v1/notices?status=open&kind=decision', { key: readKey });
    expect(decisions.body.notices.map((n: { title: string }) => n.title)).toEqual(['Suite forge-py v1 is saturated']);
    const one = await api(`/v1/notices/${decision.notice.noticeId}`, { key: readKey });
    expect(one).toMatchObject({ status: 200, body: { notice: { noticeId: decision.notice.noticeId, kind: 'decision', link: '/suites/forge-py', delivery: { slack: 'sent' } } } });

    // Hostile input: every field named.
    const badQuery = await api('/v1/notices?status=bogus&limit=0&colour=red', { key: readKey });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['colour', 'limit', 'status']);
    expect((await api('/v1/notices/not-a-notice', { key: readKey })).status).toBe(400);
    expect((await api('/v1/notices/n-000000000-00000000', { key: readKey })).status).toBe(404);
    expect((await api(`/v1/notices/${decision.notice.noticeId}/ack`, { method: 'POST', body: { by: '' } })).body.issues.map((i: { path: string }) => i.path)).toEqual(['by']);

    // Writes need admin.
    expect((await api(`/v1/notices/${failure.notice.noticeId}/ack`, { method: 'POST', body: {}, key: readKey })).status).toBe(403);
    const acked = await api(`/v1/notices/${failure.notice.noticeId}/ack`, { method: 'POST', body: {} });
    expect(acked).toMatchObject({ status: 200, body: { notice: { status: 'acknowledged', acknowledgedBy: expect.stringMatching(/^key:/) } } });

    // Answering: an action it does not offer is 404; the decision runs, the notice resolves, Slack loses the buttons.
    expect((await api(`/v1/notices/${decision.notice.noticeId}/actions/ship`, { method: 'POST', body: {} })).status).toBe(404);
    const answered = await api(`/v1/notices/${decision.notice.noticeId}/actions/retire`, { method: 'POST', body: { by: 'ana' } });
    expect(answered).toMatchObject({ status: 200, body: { outcome: 'Retired suite forge-py', notice: { status: 'resolved', resolution: { actionId: 'retire', by: 'ana', outcome: 'Retired suite forge-py' } } } });
    expect((await api('/v1/suites/forge-py')).body).toMatchObject({ id: 'forge-py', status: 'retired' });
    const message = slack.messages.get(decision.notice.delivery.slackMessage!.ts)!;
    expect(message.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(JSON.stringify(message.blocks)).toContain('*Retire the suite* by ana: Retired suite forge-py');
    const again = await api(`/v1/notices/${decision.notice.noticeId}/actions/retire`, { method: 'POST', body: {} });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('already answered by ana');

    // The CLI, against the same runtime.
    const cli = (args: string[]) => runCli([...args, '--data-dir', dataDir]);
    const listed = await cli(['notices', '--status', 'resolved']);
    expect(listed.stdout).toContain(decision.notice.noticeId);
    expect(listed.stdout.replace(/\s+/g, ' ')).toMatch(/decision alert resolved Suite/);
    expect(listed.stdout).not.toContain(failure.notice.noticeId);
    expect(listed.stdout).not.toContain('{');
    const asJson = JSON.parse((await cli(['notices', '--kind', 'failure', '--json'])).stdout) as { notices: Array<{ noticeId: string }> };
    expect(asJson.notices.map((n) => n.noticeId)).toEqual([failure.notice.noticeId]);
    const shown = await cli(['notices', 'show', failure.notice.noticeId]);
    expect(shown.stdout).toMatch(/link\s+\/sweeps\/s2/);
    expect(shown.stdout).toContain('c0: exit 3 (harness error)');

    const next = await raise(saturated('forge-ts'));
    expect((await cli(['notices', 'ack', next.notice.noticeId, '--by', 'bob'])).stdout).toContain(`${next.notice.noticeId} acknowledged by bob`);
    expect((await cli(['notices', 'answer', next.notice.noticeId, 'retire'])).stdout).toContain('answered retire: Retired suite forge-ts');
    const refused = await cli(['notices', '--status', 'bogus']).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain('--status:');
  });
});
