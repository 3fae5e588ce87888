/**
 * A Slack incoming webhook stand-in: a real HTTP server that records every JSON body posted to it (the path
 * `deliverNotice` takes when no bot token is set). The bot's Web API is the slack helper's `test/support/fake-slack.ts`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookRecorder {
  url: string;
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startWebhookRecorder(): Promise<WebhookRecorder> {
  const bodies: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      bodies.push(JSON.parse(data) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T0/B0/x`,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
