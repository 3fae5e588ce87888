/**
 * The egress proxy of a strict sandbox: an HTTP proxy (CONNECT tunnels and plain absolute-URI forwarding) that runs
 * in the harness, OUTSIDE the sandbox's network namespace, listening on a unix socket. The only route out of the
 * namespace is a forwarder inside it that pipes 127.0.0.1:<port> to this socket, so every request the sandbox makes
 * passes here, is checked against the allow-list and logged as an observation, allowed or blocked.
 *
 * The proxy connects from the HOST's network, so an allowed name must not lead to what only the host should reach:
 * the name is resolved once, here, and the connection goes to that address (no second lookup a rebinding DNS server
 * could answer differently). A host-only address (`HOST_ONLY_RANGES`: link-local — the EC2 instance metadata service
 * 169.254.169.254, the ECS task metadata and credentials endpoint 169.254.170.2 —, the IPv6 metadata address
 * fd00:ec2::254, loopback, private, multicast and NAT64 ranges) is refused (`network.blocked`, with the reason),
 * IPv4-mapped forms included, unless the allow-list names that literal address (or `localhost`, for loopback).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, connect, isIP, type Socket } from 'node:net';
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
  detail: { host: string; port: number; method: string; url?: string; reason?: string; address?: string },
): void {
  sink({ kind: allowed ? 'network.allowed' : 'network.blocked', at: new Date().toISOString(), detail });
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  return { host: m?.[1] ?? authority, port: m?.[2] ? Number(m[2]) : defaultPort };
}

/** Resolves a host name to its addresses (`dns.lookup` with `all: true` by default). */
export type EgressLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

const defaultLookup: EgressLookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Addresses the proxy never connects to unless the allow-list names them literally: link-local and metadata
 * addresses, and everything that is the host's or its private network's rather than the internet's — loopback,
 * unspecified, private (RFC 1918, CGNAT, IPv6 unique-local), multicast and reserved ranges, and NAT64 prefixes (which
 * embed an IPv4 address, metadata included). An allowed name whose first answer is already internal (a wildcard zone
 * someone else controls) reaches none of them.
 */
export const HOST_ONLY_RANGES: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']> = [
  ['169.254.0.0', 16, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
];

function hostOnlyAddresses(): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of HOST_ONLY_RANGES) list.addSubnet(net, prefix, type);
  return list;
}

const HOST_ONLY = hostOnlyAddresses();

function family(address: string): 'ipv4' | 'ipv6' | undefined {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : undefined;
}

function withoutZone(address: string): string {
  const i = address.indexOf('%');
  return i < 0 ? address : address.slice(0, i);
}

/** Whether the allow-list names this address and port literally (so a host-only address may be reached). */
type NamedLiteral = (address: string, port: number) => boolean;

/**
 * The IP literals an allow-list names, each with its port (`169.254.169.254` — ports 80 and 443, as any entry —,
 * `169.254.170.2:80`, `[fe80::1]:8080`, `localhost:8080` for loopback). Per port: naming `127.0.0.1:8080` opens that
 * one service of the host, not every port of its loopback (which matters in lenient mode, whose list is `*`).
 */
function namedLiterals(entries: readonly string[]): NamedLiteral {
  const named: Array<{ list: BlockList; port: number | null }> = [];
  for (const raw of entries) {
    const text = raw.trim().toLowerCase();
    const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
    let host = bracket ? bracket[1]! : text;
    let port: number | null = bracket?.[2] ? Number(bracket[2]) : null;
    if (!bracket && text.indexOf(':') > 0 && text.indexOf(':') === text.lastIndexOf(':')) {
      host = text.slice(0, text.indexOf(':'));
      port = Number(text.slice(text.indexOf(':') + 1));
    }
    host = withoutZone(host);
    const list = new BlockList();
    // Naming `localhost` is a deliberate opt-in to the host's loopback (a test server), as naming 127.0.0.1 is.
    if (host === 'localhost') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
    } else {
      const f = family(host);
      if (!f) continue;
      list.addAddress(host, f);
    }
    named.push({ list, port });
  }
  return (address, port) => {
    const bare = withoutZone(address);
    const f = family(bare);
    return !!f && named.some((n) => (n.port === null ? port === 80 || port === 443 : port === n.port) && n.list.check(bare, f));
  };
}

/** Why `address` must not be connected to, or undefined when it may. */
function refusal(address: string, port: number, named: NamedLiteral): string | undefined {
  const bare = withoutZone(address);
  const f = family(bare);
  if (!f) return `not an IP address: ${address}`;
  if (!HOST_ONLY.check(bare, f)) return undefined;
  if (named(bare, port)) return undefined;
  const what = HOST_ONLY_NAMES[bare] ?? describeRange(bare, f);
  return `resolves to ${address}: ${what}, reachable only from the host`;
}

/** The range an internal address falls in, in words. */
function describeRange(address: string, f: 'ipv4' | 'ipv6'): string {
  for (const [net, prefix, type] of HOST_ONLY_RANGES) {
    const one = new BlockList();
    one.addSubnet(net, prefix, type);
    if (!one.check(address, f)) continue;
    return net === '169.254.0.0' || net === 'fe80::' ? `a link-local address (${net}/${prefix})` : `an address in ${net}/${prefix}`;
  }
  return 'a host-only address';
}

const HOST_ONLY_NAMES: Record<string, string> = {
  '169.254.169.254': 'the instance metadata service',
  '169.254.170.2': 'the ECS task metadata and credentials endpoint',
  'fd00:ec2::254': 'the IPv6 instance metadata address',
};

type Resolved = Array<{ address: string; family: 4 | 6 }>;

/**
 * The addresses a request to `host` may connect to: the literal itself, or those the name resolves to (one lookup),
 * less the host-only ones. `refused` when every address is host-only; `failed` when the name does not resolve
 * (allowed, answered 502, as a connection that fails).
 */
async function resolveTarget(host: string, port: number, lookup: EgressLookup, named: NamedLiteral): Promise<{ addresses: Resolved } | { refused: string } | { failed: string }> {
  let found: Array<{ address: string; family: number }>;
  const f = family(withoutZone(host));
  try {
    found = f ? [{ address: host, family: f === 'ipv4' ? 4 : 6 }] : await lookup(host);
  } catch (error) {
    return { failed: `lookup of ${host} failed: ${(error as Error).message}` };
  }
  if (found.length === 0) return { failed: `${host} resolves to no address` };
  const reasons: string[] = [];
  const ok: Resolved = [];
  for (const { address } of found) {
    const why = refusal(address, port, named);
    if (why) reasons.push(why);
    else ok.push({ address, family: isIP(withoutZone(address)) === 6 ? 6 : 4 });
  }
  return ok.length > 0 ? { addresses: ok } : { refused: reasons[0]! };
}

/**
 * A `lookup` for `net.connect`/`http.request` that answers with the addresses already checked, never asking DNS
 * again (a rebinding server gets no second question); with several, Node tries them in turn (happy eyeballs).
 */
function fixedLookup(addresses: Resolved) {
  return (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

/**
 * @example
 * const proxy = await startEgressProxy({ socketPath: '/run/fw/a1.sock', allowList: ['pypi.org'], onObservation: push });
 */
export async function startEgressProxy(input: {
  socketPath: string;
  allowList: readonly string[];
  onObservation: (o: SandboxObservation) => void;
  /** How names are resolved (tests); default `dns.lookup`, all addresses. */
  lookup?: EgressLookup;
}): Promise<EgressProxy> {
  const allowed = makeAllowList(input.allowList);
  const named = namedLiterals(input.allowList);
  const lookup = input.lookup ?? defaultLookup;
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
    const method = req.method ?? 'GET';
    if (!allowed(host, port)) {
      record(input.onObservation, false, { host, port, method, url: url.href });
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`flywheel egress proxy: ${host}:${port} is not on the allow-list\n`);
      return;
    }
    // The body waits (paused) while the name resolves.
    req.pause();
    void resolveTarget(host, port, lookup, named).then((target) => {
      if ('refused' in target) {
        record(input.onObservation, false, { host, port, method, url: url.href, reason: target.refused });
        res.writeHead(403, { 'content-type': 'text/plain' }).end(`flywheel egress proxy: ${host}:${port} refused: ${target.refused}\n`);
        req.resume();
        return;
      }
      if ('failed' in target) {
        record(input.onObservation, true, { host, port, method, url: url.href, reason: target.failed });
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`flywheel egress proxy: upstream error ${target.failed}\n`);
        req.resume();
        return;
      }
      record(input.onObservation, true, { host, port, method, url: url.href, address: target.addresses.map((a) => a.address).join(' ') });
      forward(req, res, url, host, target.addresses, port);
    });
  });

  /** Plain HTTP to the resolved address (the request's own Host header kept). */
  const forward = (req: IncomingMessage, res: ServerResponse, url: URL, host: string, addresses: Resolved, port: number) => {
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    // The name the request was for, never the address it was sent to.
    headers.host ??= url.host;
    const upstream = httpRequest({ host, port, lookup: fixedLookup(addresses) as never, method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`flywheel egress proxy: upstream error ${error.message}\n`);
    });
    req.pipe(upstream);
    req.resume();
  };

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const { host, port } = splitHostPort(req.url ?? '', 443);
    if (!allowed(host, port)) {
      record(input.onObservation, false, { host, port, method: 'CONNECT' });
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nflywheel egress proxy: ${host}:${port} is not on the allow-list\n`);
      return;
    }
    void resolveTarget(host, port, lookup, named).then((target) => {
      if ('refused' in target) {
        record(input.onObservation, false, { host, port, method: 'CONNECT', reason: target.refused });
        client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nflywheel egress proxy: ${host}:${port} refused: ${target.refused}\n`);
        return;
      }
      if ('failed' in target) {
        record(input.onObservation, true, { host, port, method: 'CONNECT', reason: target.failed });
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        return;
      }
      record(input.onObservation, true, { host, port, method: 'CONNECT', address: target.addresses.map((a) => a.address).join(' ') });
      if (client.destroyed) return;
      tunnel(client, head, host, target.addresses, port);
    });
  });

  /** A CONNECT tunnel to the resolved address. */
  const tunnel = (client: Socket, head: Buffer, host: string, addresses: Resolved, port: number) => {
    const upstream = connect({ host, port, lookup: fixedLookup(addresses) as never }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  };
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
