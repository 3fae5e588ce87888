import { describe, expect, it } from 'vitest';
import { ChatWorkspace } from '../../lib/harness/services/chat-workspace.ts';
import { IncidentService } from '../../lib/harness/services/incident-service.ts';
import { createServices } from '../../lib/harness/services/service-tools.ts';
import { parseTaskBehaviour } from '../../lib/harness/task/behaviour-schema.ts';

const now = () => new Date('2026-12-03T12:00:00Z');
const config = parseTaskBehaviour({
  services: {
    chat: {
      channels: [{ name: 'ops', messages: [{ id: 'm2', user: 'bo', text: 'pager went off' }, { user: 'cy', text: 'looking', threadId: 'm2' }] }],
      replies: [{ channel: 'ops', match: 'rollback', user: 'bo', text: 'approved' }, { channel: 'ops', user: 'cy', text: 'ack' }],
    },
    incidents: {
      metrics: [
        { name: 'latency_ms', labels: { region: 'eu' }, points: [{ at: '2026-12-03T10:00:00Z', value: 100 }, { at: '2026-12-03T11:00:00Z', value: 900 }] },
        { name: 'latency_ms', labels: { region: 'us' }, points: [{ at: '2026-12-03T10:00:00Z', value: 120 }] },
      ],
      incidents: [
        { id: 'INC-1', title: 'slow eu', openedAt: '2026-12-03T11:01:00Z' },
        { id: 'INC-2', title: 'old', status: 'resolved', openedAt: '2026-12-01T11:01:00Z' },
      ],
    },
  },
}).services!;

describe('the chat workspace', () => {
  it('reads channels and threads, posts, and answers a matching post once with a scripted reply', () => {
    const chat = new ChatWorkspace(config.chat!, now);
    expect(chat.listChannels()).toEqual([{ name: 'ops', messages: 2 }]);
    const read = chat.read('#ops');
    expect(read.ok && read.value.map((m) => m.id)).toEqual(['m2', 'm1']);
    const thread = chat.read('ops', { threadId: 'm2' });
    expect(thread.ok && thread.value).toHaveLength(2);
    const first = chat.post('ops', 'Proposing a rollback');
    expect(first.ok && first.value.replies.map((r) => `${r.user}: ${r.text}`)).toEqual(['bo: approved', 'cy: ack']);
    const second = chat.post('ops', 'rollback done', 'm2');
    expect(second.ok && second.value).toMatchObject({ message: { user: 'flywheel-agent', threadId: 'm2', at: '2026-12-03T12:00:00.000Z' }, replies: [] });
    expect(chat.post('ops', 'x', 'nope')).toEqual({ ok: false, error: 'no message nope in ops to answer in a thread' });
    expect(chat.read('general')).toEqual({ ok: false, error: 'no channel "general"; channels: ops' });
    expect(chat.state().channels[0]!.messages).toHaveLength(6);
    expect(chat.state().repliesUsed).toEqual([0, 1]);
    // Ids never collide with scripted ones.
    expect(new Set(chat.state().channels[0]!.messages.map((m) => m.id)).size).toBe(6);
  });

  it("matches a reply by plain case-insensitive text or keywords, never running the drafter's text as a regular expression", () => {
    const chat = new ChatWorkspace(
      parseTaskBehaviour({
        services: {
          chat: {
            channels: [{ name: 'eng' }],
            replies: [
              { channel: 'eng', match: '(a+)+$', user: 'ana', text: 'literal' },
              { channel: 'eng', match: ['shipped', 'DEPLOYED'], user: 'bo', text: 'keywords' },
            ],
          },
        },
      }).services!.chat!,
      now,
    );
    // A catastrophic pattern as a regex; as text it simply is not in the post, and the post returns at once.
    const started = Date.now();
    const miss = chat.post('eng', `${'a'.repeat(5000)}!`);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(miss.ok && miss.value.replies).toEqual([]);
    const hit = chat.post('eng', 'It is deployed; the pattern (A+)+$ was literal');
    expect(hit.ok && hit.value.replies.map((r) => r.text)).toEqual(['literal', 'keywords']);
  });
});

describe('the metrics and incident service', () => {
  it('queries series by name, labels and range; lists, reads and updates incidents', () => {
    const svc = new IncidentService(config.incidents!, now);
    expect(svc.listMetrics().map((m) => `${m.name}${JSON.stringify(m.labels)}:${m.points}`)).toEqual(['latency_ms{"region":"eu"}:2', 'latency_ms{"region":"us"}:1']);
    const eu = svc.query({ name: 'latency_ms', labels: { region: 'eu' }, from: '2026-12-03T10:30:00Z' });
    expect(eu.ok && eu.value).toEqual([{ name: 'latency_ms', labels: { region: 'eu' }, stats: { min: 900, max: 900, avg: 900, last: 900 }, points: [{ at: '2026-12-03T11:00:00Z', value: 900 }] }]);
    expect(svc.query({ name: 'latency_ms' }).ok && (svc.query({ name: 'latency_ms' }) as { value: unknown[] }).value).toHaveLength(2);
    expect(svc.query({ name: 'cpu' })).toEqual({ ok: false, error: 'no series cpu; metrics: latency_ms' });
    expect(svc.query({ name: 'latency_ms', from: 'soon' })).toEqual({ ok: false, error: 'from and to are ISO 8601 date-times' });
    expect(svc.list('open').map((i) => i.id)).toEqual(['INC-1']);
    expect(svc.update({ id: 'INC-1' })).toEqual({ ok: false, error: 'nothing to update: give status, severity or note' });
    expect(svc.update({ id: 'INC-9', status: 'resolved' })).toEqual({ ok: false, error: 'no incident INC-9; incidents: INC-1, INC-2' });
    const updated = svc.update({ id: 'INC-1', status: 'mitigated', severity: 'sev2', note: 'rolled back' });
    expect(updated.ok && updated.value).toMatchObject({ status: 'mitigated', severity: 'sev2', notes: [{ at: '2026-12-03T12:00:00.000Z', author: 'flywheel-agent', text: 'rolled back' }] });
    expect(svc.state().incidents[0]!.status).toBe('mitigated');
    // The task's configuration is untouched.
    expect(config.incidents!.incidents[0]!.status).toBe('open');
  });

  it('createServices exposes only the configured services as tools', () => {
    expect(createServices(undefined).tools).toEqual([]);
    expect(createServices({ chat: config.chat }).tools.map((t) => t.name)).toEqual(['chat_list_channels', 'chat_read', 'chat_post']);
    expect(createServices(config).tools.every((t) => t.service === 'chat' || t.service === 'incidents')).toBe(true);
    expect(Object.keys(createServices(config).states())).toEqual(['chat', 'incidents']);
  });
});
