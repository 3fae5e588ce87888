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

// DNS helpers of the forwarder (`egress-forwarder.ts`), which answers every query inside the namespace with REFUSED.

/** The first question of a DNS message: name and type (numbers as the wire has them). */
export function dnsQuestion(msg: Buffer): { name: string; type: number; end: number } | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let i = 12;
  while (i < msg.length) {
    const len = msg[i]!;
    if (len === 0) {
      i++;
      break;
    }
    if (len > 63 || i + 1 + len > msg.length) return undefined;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
  if (i + 4 > msg.length) return undefined;
  return { name: labels.join('.'), type: msg.readUInt16BE(i), end: i + 4 };
}

export const DNS_TYPES: Record<number, string> = { 1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 12: 'PTR', 15: 'MX', 16: 'TXT', 28: 'AAAA', 33: 'SRV', 65: 'HTTPS', 255: 'ANY' };

/** A REFUSED answer to `query` (same id, the question echoed), or undefined for something that is no query. */
export function refuseDns(query: Buffer): Buffer | undefined {
  const q = dnsQuestion(query);
  if (!q) return undefined;
  const out = Buffer.alloc(q.end);
  query.copy(out, 0, 0, q.end);
  const flags = query.readUInt16BE(2);
  // QR=1, the query's opcode and RD, RA=0, RCODE=5 (REFUSED).
  out.writeUInt16BE(0x8000 | (flags & 0x7900) | 5, 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return out;
}
