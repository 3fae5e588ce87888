/**
 * The egress proxy of a strict sandbox: an HTTP proxy (CONNECT tunnels and plain absolute-URI forwarding) that runs
 * in the harness, OUTSIDE the sandbox's network namespace, listening on a unix socket. The only route out of the
 * namespace is a forwarder inside it that pipes 127.0.0.1:<port> to this socket, so every request the sandbox makes
 * passes here, is checked against the allow-list and logged as an observation, allowed or blocked.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import type { SandboxObservation } from './sandbox.ts';
import { makeAllowList } from './allow-list.ts';

export interface EgressProxy {
  socketPath: string;
  close(): Promise<void>;
}

function record(
  sink: (o: SandboxObservation) => void,
  allowed: boolean,
  detail: { host: string; port: number; method: string; url?: string; reason?: string },
): void {
  sink({ kind: allowed ? 'network.allowed' : 'network.blocked', at: new Date().toISOString(), detail });
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  return { host: m?.[1] ?? authority, port: m?.[2] ? Number(m[2]) : defaultPort };
}

/**
 * @example
 * const proxy = await startEgressProxy({ socketPath: '/run/fw/a1.sock', allowList: ['pypi.org'], onObservation: push });
 */
export async function startEgressProxy(input: {
  socketPath: string;
  allowList: readonly string[];
  onObservation: (o: SandboxObservation) => void;
}): Promise<EgressProxy> {
  const allowed = makeAllowList(input.allowList);
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('flywheel egress proxy: absolute URL required\n');
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('flywheel egress proxy: use CONNECT for https\n');
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port ? Number(url.port) : 80;
    const ok = allowed(host, port);
    record(input.onObservation, ok, { host, port, method: req.method ?? 'GET', url: url.href });
    if (!ok) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`flywheel egress proxy: ${host}:${port} is not on the allow-list\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = httpRequest({ host, port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`flywheel egress proxy: upstream error ${error.message}\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const { host, port } = splitHostPort(req.url ?? '', 443);
    const ok = allowed(host, port);
    record(input.onObservation, ok, { host, port, method: 'CONNECT' });
    if (!ok) {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nflywheel egress proxy: ${host}:${port} is not on the allow-list\n`);
      return;
    }
    const upstream = connect({ host, port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await rm(input.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(input.socketPath, () => resolve());
  });
  return {
    socketPath: input.socketPath,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(input.socketPath, { force: true });
    },
  };
}
