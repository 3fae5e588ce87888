import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ConflictError, ValidationError } from '../../lib/errors.ts';
import { deliverDeferredNotices } from '../../lib/people/notices/deliver-deferred-notices.ts';
import { noticeBlocks } from '../../lib/people/notices/notice-blocks.ts';
import { acknowledgeNotice, getNotice, listNotices, resolveNotice } from '../../lib/people/notices/notice-store.ts';
import { quietUntil } from '../../lib/people/notices/quiet-hours.ts';
import { raiseNotice, type NoticeDeliveryOptions } from '../../lib/people/notices/raise-notice.ts';
import type { RaiseNoticeInput } from '../../lib/people/notices/schemas.ts';
import { SlackWebApi } from '../../lib/people/slack/slack-web-api.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { startWebhookRecorder, type WebhookRecorder } from './support/notices-webhook.ts';

const tempDir = tempDirs('flywheel-notices-');
let slack: FakeSlack;
let hook: WebhookRecorder;
let ports: LocalPorts;
let clock: { now: Date };
let lines: string[];

beforeAll(async () => {
  slack = await startFakeSlack({ channels: ['C-NOTICES'] });
  hook = await startWebhookRecorder();
});
afterAll(async () => {
  await slack.close();
  await hook.close();
});
afterEach(() => ports?.close());

function open(start = '2026-12-04T12:00:00.000Z'): void {
  clock = { now: new Date(start) };
  ports = openLocalPorts(tempDir(), { now: () => clock.now });
  lines = [];
  slack.calls.length = 0;
  hook.bodies.length = 0;
}

function options(extra: Partial<NoticeDeliveryOptions> = {}): NoticeDeliveryOptions {
  return {
    slack: new SlackWebApi({ token: slack.token, baseUrl: slack.apiUrl }),
    slackChannel: 'C-NOTICES',
    consoleUrl: 'https://console.example.test/',
    log: (l) => lines.push(l),
    ...extra,
  };
}

const failure = (runId: string, extra: Partial<RaiseNoticeInput> = {}): RaiseNoticeInput => ({
  dedupKey: `training.failed:${runId}`,
  kind: 'failure',
  severity: 'alert',
  title: `Training run ${runId} failed`,
  text: 'Step train exited 137 (out of memory)',
  source: { capability: 'training', runKind: 'training-run', runId },
  link: `/training/${runId}`,
  fields: { step: 'train', exit: 137 },
  actions: [{ id: 'resume', label: 'Resume', style: 'primary', operation: { kind: 'resume-training-run', runId } }],
  ...extra,
});

const posts = () => slack.calls.filter((c) => c.method === 'chat.postMessage');

describe('raiseNotice: deduplication', () => {
  it('100 concurrent raises of one key make one notice seen 100 times, posted to Slack once', async () => {
    open();
    const results = await Promise.all(Array.from({ length: 100 }, () => raiseNotice(ports, failure('run-7'), options())));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.filter((r) => r.delivered)).toHaveLength(1);
    const { notices } = await listNotices(ports.records, {});
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ dedupKey: 'training.failed:run-7', occurrences: 100, status: 'open', delivery: { slack: 'sent', topic: 'sent' } });
    expect(posts()).toHaveLength(1);
    expect(notices[0]!.delivery.slackMessage).toEqual({ channel: 'C-NOTICES', ts: expect.stringMatching(/^\d+\.\d+$/) });
    // The bus got one notice.raised (the rule to the alarm topic on AWS).
    const raised = ports.events.recent({ type: 'notice.raised' });
    expect(raised).toHaveLength(1);
    expect(raised[0]!.detail).toMatchObject({ noticeId: notices[0]!.noticeId, kind: 'failure', link: 'https://console.example.test/#/training/run-7' });
    // One "notice" log line, with the cause and the link.
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === 'notice');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ title: 'Training run run-7 failed', text: 'Step train exited 137 (out of memory)', link: 'https://console.example.test/#/training/run-7' });
  });

  it('a repeat of an acknowledged notice folds in; once resolved, the next raise is a new notice, delivered again', async () => {
    open();
    const first = await raiseNotice(ports, failure('run-8'), options());
    const acked = await acknowledgeNotice(ports.records, first.notice.noticeId, 'ana', clock.now);
    expect(acked).toMatchObject({ status: 'acknowledged', acknowledgedBy: 'ana', acknowledgedAt: clock.now.toISOString() });
    // A second acknowledgement changes nothing.
    clock.now = new Date(clock.now.getTime() + 60_000);
    expect(await acknowledgeNotice(ports.records, first.notice.noticeId, 'bob', clock.now)).toMatchObject({ acknowledgedBy: 'ana' });
    const repeat = await raiseNotice(ports, failure('run-8'), options());
    expect(repeat).toMatchObject({ created: false, delivered: false, notice: { noticeId: first.notice.noticeId, occurrences: 2, status: 'acknowledged', lastSeenAt: clock.now.toISOString() } });
    expect(posts()).toHaveLength(1);

    const resolved = await resolveNotice(ports.records, first.notice.noticeId, { actionId: 'resume', by: 'ana', outcome: 'Run run-8 resumed' }, clock.now);
    expect(resolved).toMatchObject({ status: 'resolved', resolution: { actionId: 'resume', by: 'ana', outcome: 'Run run-8 resumed' } });
    await expect(resolveNotice(ports.records, first.notice.noticeId, { by: 'bob', outcome: 'again' })).rejects.toBeInstanceOf(ConflictError);

    clock.now = new Date(clock.now.getTime() + 60_000);
    const next = await raiseNotice(ports, failure('run-8'), options());
    expect(next).toMatchObject({ created: true, delivered: true, notice: { occurrences: 1, status: 'open' } });
    expect(next.notice.noticeId).not.toBe(first.notice.noticeId);
    expect(posts()).toHaveLength(2);
    expect((await getNotice(ports.records, first.notice.noticeId)).status).toBe('resolved');
  });

  it('rejects a malformed notice naming the field', async () => {
    open();
    const bad = { ...failure('run-9'), severity: 'loud' } as unknown as RaiseNoticeInput;
    const error = await raiseNotice(ports, bad, options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['severity']);
  });
});

describe('raiseNotice: severity and quiet hours', () => {
  const quiet = { start: '22:00', end: '07:00', timeZone: 'Europe/Paris' };

  it('quietUntil understands hours that wrap past midnight in a time zone', () => {
    // 23:30 in Paris (UTC+1 in December) is 22:30Z; quiet until 07:00 Paris = 06:00Z next day.
    expect(quietUntil(new Date('2026-12-04T22:30:00Z'), quiet)?.toISOString()).toBe('2026-12-05T06:00:00.000Z');
    expect(quietUntil(new Date('2026-12-05T05:59:30Z'), quiet)?.toISOString()).toBe('2026-12-05T06:00:00.000Z');
    expect(quietUntil(new Date('2026-12-05T06:00:00Z'), quiet)).toBeUndefined();
    expect(quietUntil(new Date('2026-12-04T12:00:00Z'), quiet)).toBeUndefined();
    expect(quietUntil(new Date('2026-12-04T12:00:00Z'), undefined)).toBeUndefined();
  });

  it('a warning inside quiet hours waits and is delivered by the schedule after; an alert goes at once', async () => {
    open('2026-12-04T23:00:00.000Z'); // midnight in Paris
    const warning = await raiseNotice(ports, failure('run-q', { dedupKey: 'sweep.partial:s1', severity: 'warning', actions: [] }), options({ quietHours: quiet }));
    expect(warning).toMatchObject({ created: true, delivered: false, notice: { delivery: { slack: 'deferred', topic: 'deferred', deferredUntil: '2026-12-05T06:00:00.000Z' } } });
    const alert = await raiseNotice(ports, failure('run-a'), options({ quietHours: quiet }));
    expect(alert).toMatchObject({ delivered: true, notice: { delivery: { slack: 'sent' } } });
    expect(posts()).toHaveLength(1);
    // Still quiet: the schedule sends nothing. A repeat folds in meanwhile.
    clock.now = new Date('2026-12-05T03:00:00.000Z');
    await raiseNotice(ports, failure('run-q', { dedupKey: 'sweep.partial:s1', severity: 'warning', actions: [] }), options({ quietHours: quiet }));
    expect(await deliverDeferredNotices(ports, options({ quietHours: quiet }))).toEqual({ delivered: [] });
    expect(posts()).toHaveLength(1);
    // After the quiet hours, one run of the schedule (or two at once) delivers it once, with its repeat count.
    clock.now = new Date('2026-12-05T06:05:00.000Z');
    const runs = await Promise.all([deliverDeferredNotices(ports, options({ quietHours: quiet })), deliverDeferredNotices(ports, options({ quietHours: quiet }))]);
    expect(runs.flatMap((r) => r.delivered)).toEqual([warning.notice.noticeId]);
    expect(posts()).toHaveLength(2);
    expect(posts()[1]!.args.text).toContain('(×2)');
    expect(await getNotice(ports.records, warning.notice.noticeId)).toMatchObject({ occurrences: 2, delivery: { slack: 'sent', topic: 'sent' } });
  });

  it('without a bot, the incoming webhook carries the message', async () => {
    open();
    const r = await raiseNotice(ports, failure('run-w'), { webhookUrl: hook.url, log: (l) => lines.push(l) });
    expect(r.notice.delivery.slack).toBe('sent');
    expect(hook.bodies).toHaveLength(1);
    expect(hook.bodies[0]!.text).toContain('Training run run-w failed');
  });
});

describe('listNotices', () => {
  it('lists newest first, filters by status, kind and severity, and pages with a cursor', async () => {
    open();
    const ids: string[] = [];
    const kinds = ['failure', 'stall', 'decision', 'failure', 'budget', 'decision', 'failure'] as const;
    for (const [i, kind] of kinds.entries()) {
      clock.now = new Date(clock.now.getTime() + 1000);
      const r = await raiseNotice(ports, { ...failure(`run-${i}`), dedupKey: `k-${i}`, kind, severity: i % 2 ? 'warning' : 'alert' }, options({ slack: undefined }));
      ids.push(r.notice.noticeId);
    }
    await acknowledgeNotice(ports.records, ids[0]!, 'ana');
    await resolveNotice(ports.records, ids[2]!, { by: 'bob', outcome: 'done' });

    const all = await listNotices(ports.records, {});
    expect(all.notices.map((n) => n.noticeId)).toEqual([...ids].reverse());
    expect(all.nextCursor).toBeUndefined();

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listNotices(ports.records, { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.notices.map((n) => n.noticeId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);

    expect((await listNotices(ports.records, { kind: 'failure' })).notices.map((n) => n.noticeId)).toEqual([ids[6], ids[3], ids[0]]);
    expect((await listNotices(ports.records, { status: 'open', kind: 'decision' })).notices.map((n) => n.noticeId)).toEqual([ids[5]]);
    expect((await listNotices(ports.records, { status: 'resolved' })).notices.map((n) => n.noticeId)).toEqual([ids[2]]);
    expect((await listNotices(ports.records, { status: 'acknowledged' })).notices.map((n) => n.noticeId)).toEqual([ids[0]]);
    expect((await listNotices(ports.records, { severity: 'warning' })).notices).toHaveLength(3);
    const page1 = await listNotices(ports.records, { kind: 'failure', limit: 2 });
    expect(page1.notices.map((n) => n.noticeId)).toEqual([ids[6], ids[3]]);
    expect((await listNotices(ports.records, { kind: 'failure', limit: 2, cursor: page1.nextCursor! })).notices.map((n) => n.noticeId)).toEqual([ids[0]]);

    const bad = await listNotices(ports.records, { cursor: 'not-a-cursor' }).catch((e: unknown) => e);
    expect((bad as ValidationError).issues.map((i) => i.path)).toEqual(['cursor']);
  });
});

describe('noticeBlocks', () => {
  it('has the header, text, fields, a console link and the action buttons; a resolved notice says who answered, without buttons', async () => {
    open();
    const { notice } = await raiseNotice(ports, failure('run-b'), options());
    const posted = slack.messages.get(notice.delivery.slackMessage!.ts)!;
    expect(posted.blocks).toEqual(noticeBlocks(notice, 'https://console.example.test/').blocks);
    const json = JSON.stringify(posted.blocks);
    expect(posted.blocks[0]).toMatchObject({ type: 'header', text: { text: 'Training run run-b failed' } });
    expect(json).toContain('Step train exited 137');
    expect(json).toContain('*exit*\\n137');
    const actions = posted.blocks.find((b) => (b as { type: string }).type === 'actions') as { elements: Array<Record<string, unknown>> };
    expect(actions.elements).toEqual([
      expect.objectContaining({ url: 'https://console.example.test/#/training/run-b' }),
      expect.objectContaining({ action_id: 'notice:resume', value: notice.noticeId, style: 'primary', text: expect.objectContaining({ text: 'Resume' }) }),
    ]);
    const resolved = await resolveNotice(ports.records, notice.noticeId, { actionId: 'resume', by: 'ana', outcome: 'Run run-b resumed' });
    const after = noticeBlocks(resolved, 'https://console.example.test/');
    expect(after.blocks.some((b) => (b as { type: string }).type === 'actions')).toBe(false);
    expect(JSON.stringify(after.blocks)).toContain('*Resume* by ana: Run run-b resumed');
  });
});

describe('malformed notice records', () => {
  it('a hand-edited notice fails where it is read, naming the record and the field', async () => {
    open();
    const { notice } = await raiseNotice(ports, failure('run-m'), options({ slack: undefined }));
    const key = { pk: `NOTICE#${notice.noticeId}`, sk: 'NOTICE' };
    const stored = (await ports.records.get(key.pk, key.sk))!;
    await ports.records.put({ ...stored, occurrences: 'many' });
    const error = await getNotice(ports.records, notice.noticeId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toMatchObject({ field: 'occurrences', pk: key.pk });
  });
});
