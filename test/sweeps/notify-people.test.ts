import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { notifyOptionsFromEnv, notifyPeople } from '../../lib/people/notify.ts';

async function server(statuses: number[]) {
  const bodies: any[] = [];
  const s = createServer((req, res) => {
    let d = '';
    req.on('data', (c) => (d += c));
    req.on('end', () => {
      bodies.push({ contentType: req.headers['content-type'], body: JSON.parse(d) });
      const status = statuses.shift() ?? 200;
      res.writeHead(status).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, bodies, close: () => new Promise<void>((r) => s.close(() => r())) };
}

describe('notifyPeople (log + Slack incoming webhook)', () => {
  it('logs, posts a Slack message, and retries a 5xx', async () => {
    const hook = await server([503]);
    const lines: string[] = [];
    try {
      const r = await notifyPeople({ title: 'Sweep s1 partial', text: 'Failed shards: c0', severity: 'warning', fields: { shards: 3 } }, { webhookUrl: hook.url, log: (l) => lines.push(l) });
      expect(r).toEqual({ logged: true, delivered: true, attempts: 2 });
      expect(hook.bodies).toHaveLength(2);
      expect(hook.bodies[1].contentType).toBe('application/json');
      expect(hook.bodies[1].body.text).toBe(':warning: Sweep s1 partial');
      expect(hook.bodies[1].body.blocks[2].fields).toEqual([{ type: 'mrkdwn', text: '*shards*\n3' }]);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'WARN', message: 'notice', title: 'Sweep s1 partial' });
    } finally {
      await hook.close();
    }
  });

  it('never throws when Slack refuses or is down: delivered false, the error logged', async () => {
    const hook = await server([400]);
    const lines: string[] = [];
    try {
      const refused = await notifyPeople({ title: 't', text: 'x', severity: 'info' }, { webhookUrl: hook.url, log: (l) => lines.push(l) });
      expect(refused).toEqual({ logged: true, delivered: false, attempts: 1, error: 'HTTP 400' });
    } finally {
      await hook.close();
    }
    const down = await notifyPeople({ title: 't', text: 'x', severity: 'info' }, { webhookUrl: hook.url, log: (l) => lines.push(l), timeoutMs: 500 });
    expect(down.delivered).toBe(false);
    expect(down.attempts).toBe(3);
    expect(lines.filter((l) => JSON.parse(l).message === 'notice not delivered to Slack')).toHaveLength(2);
    expect(notifyOptionsFromEnv({ FLYWHEEL_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/x' })).toEqual({ webhookUrl: 'https://hooks.slack.com/services/x' });
    expect(notifyOptionsFromEnv({})).toEqual({});
  });
});
