/**
 * Red team, network: the egress proxy connects from the host's network, so an allowed name that resolves to a
 * link-local or metadata address (169.254.169.254, the ECS endpoint 169.254.170.2, fe80::/10, fd00:ec2::254) must
 * be refused and logged, unless the allow-list names that literal address; and the name is resolved once, the
 * connection going to the address that was checked (a rebinding resolver gets no second question).
 *
 * The proxy runs on its own here (a unix socket, as the sandbox's forwarder reaches it), with a scripted resolver;
 * nothing ever connects to a real metadata address.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy, type EgressLookup, type EgressProxy } from '../../../lib/harness/sandbox/egress-proxy.ts';
import type { SandboxObservation } from '../../../lib/harness/sandbox/sandbox.ts';

let dir: string;
let echo: Server;
let echoPort: number;
let echoed: string[];
let web: HttpServer;
let webPort: number;
let webHosts: string[];
let proxy: EgressProxy | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fw-egress-'));
  echoed = [];
  echo = createServer((s) => {
    s.on('data', (d) => {
      echoed.push(d.toString());
      s.end(`echo:${d.toString()}`);
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
  webHosts = [];
  web = createHttpServer((req, res) => {
    webHosts.push(req.headers.host ?? '');
    res.end('hello from upstream');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webPort = (web.address() as AddressInfo).port;
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});
afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

/** A resolver from a table; counts the questions it was asked. */
function scriptedLookup(table: Record<string, string[] | (() => string[])>): EgressLookup & { asked: string[] } {
  const asked: string[] = [];
  const fn = async (host: string) => {
    asked.push(host);
    const entry = table[host];
    const list = typeof entry === 'function' ? entry() : entry;
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { asked });
}

async function start(allowList: string[], lookup: EgressLookup): Promise<SandboxObservation[]> {
  const seen: SandboxObservation[] = [];
  proxy = await startEgressProxy({ socketPath: join(dir, `p-${Math.random().toString(36).slice(2)}.sock`), allowList, onObservation: (o) => seen.push(o), lookup });
  return seen;
}

/** Sends raw bytes through the proxy's socket and returns everything it answers until it closes. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect(proxy!.socketPath);
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
    s.on('error', reject);
    s.write(request);
  });
}

/** A CONNECT, then `payload` once the tunnel is up; the answer (status line and what came back). */
function tunnel(target: string, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect(proxy!.socketPath);
    let out = '';
    s.on('data', (d) => {
      out += d.toString();
      if (out.includes('200 Connection Established') && !out.includes('echo:')) s.write(payload);
    });
    s.on('close', () => resolve(out));
    s.on('error', reject);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

const blocked = (seen: SandboxObservation[]) => seen.filter((o) => o.kind === 'network.blocked');

describe('egress proxy: link-local and metadata addresses', () => {
  it.each([
    ['169.254.169.254', /instance metadata service/],
    ['169.254.170.2', /ECS task metadata/],
    ['169.254.10.20', /link-local address \(169\.254\.0\.0\/16\)/],
    ['fe80::1', /link-local address \(fe80::\/10\)/],
    ['fd00:ec2::254', /IPv6 instance metadata address/],
    ['::ffff:169.254.169.254', /link-local/],
  ])('an allowed name that resolves to %s is refused over CONNECT and plain HTTP, and logged with the reason', async (address, why) => {
    const lookup = scriptedLookup({ 'metadata.example.com': [address] });
    const seen = await start(['metadata.example.com', 'metadata.example.com:8080'], lookup);
    const viaConnect = await tunnel('metadata.example.com:443', 'GET / HTTP/1.1\r\n\r\n');
    expect(viaConnect).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(viaConnect).toMatch(why);
    const viaHttp = await raw('GET http://metadata.example.com:8080/latest/meta-data/ HTTP/1.1\r\nHost: metadata.example.com:8080\r\nConnection: close\r\n\r\n');
    expect(viaHttp).toMatch(/^HTTP\/1\.1 403/);
    expect(blocked(seen)).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ host: 'metadata.example.com', port: 443, method: 'CONNECT', reason: expect.stringMatching(why) }) }),
      expect.objectContaining({ detail: expect.objectContaining({ host: 'metadata.example.com', port: 8080, method: 'GET', reason: expect.stringMatching(why) }) }),
    ]);
    expect(seen.filter((o) => o.kind === 'network.allowed')).toEqual([]);
  });

  it('a literal metadata address in the request is refused even when a host name of the allow-list resolves elsewhere', async () => {
    const seen = await start(['169.254.169.254.nip.example', '*.example.com'], scriptedLookup({}));
    // Not on the allow-list at all: blocked as before (no reason needed).
    expect(await tunnel('169.254.169.254:80', 'x')).toMatch(/not on the allow-list/);
    expect(blocked(seen)).toHaveLength(1);
  });

  it('the allow-list naming the literal address lets it through (and only that address)', async () => {
    // Nothing listens at 169.254.0.1:9 (a link-local address no host uses): the point is the decision, logged as allowed.
    const lookup = scriptedLookup({ 'link.example.com': ['169.254.0.1'], 'other.example.com': ['169.254.0.2'] });
    const seen = await start(['169.254.0.1:9', 'link.example.com:9', 'other.example.com:9'], lookup);
    const s = connect(proxy!.socketPath);
    s.on('error', () => undefined);
    s.write('CONNECT 169.254.0.1:9 HTTP/1.1\r\nHost: 169.254.0.1:9\r\n\r\n');
    await expect.poll(() => seen.length).toBe(1);
    s.destroy();
    expect(seen[0]).toMatchObject({ kind: 'network.allowed', detail: { host: '169.254.0.1', port: 9, method: 'CONNECT', address: '169.254.0.1' } });
    // A name resolving to the literal the list names is allowed too; one resolving to another link-local address is not.
    const t = connect(proxy!.socketPath);
    t.on('error', () => undefined);
    t.write('CONNECT link.example.com:9 HTTP/1.1\r\nHost: link.example.com:9\r\n\r\n');
    await expect.poll(() => seen.length).toBe(2);
    t.destroy();
    expect(seen[1]).toMatchObject({ kind: 'network.allowed', detail: { host: 'link.example.com', address: '169.254.0.1' } });
    expect(await tunnel('other.example.com:9', 'x')).toMatch(/403 Forbidden[\s\S]*169\.254\.0\.2/);
    expect(seen[2]).toMatchObject({ kind: 'network.blocked', detail: { host: 'other.example.com', reason: expect.stringContaining('169.254.0.2') } });
  });

  it('resolves once and connects to the checked address: a rebinding resolver gets one question and the metadata address is never dialled', async () => {
    let answers = 0;
    // First answer: the local echo server (allowed); any later answer would be the metadata service.
    const lookup = scriptedLookup({ 'rebind.example.com': () => (answers++ === 0 ? ['127.0.0.1'] : ['169.254.169.254']) });
    // The echo server is on loopback, itself host-only: the list names it (`localhost`) so the first answer may be used.
    const seen = await start([`rebind.example.com:${echoPort}`, `localhost:${echoPort}`], lookup);
    const out = await tunnel(`rebind.example.com:${echoPort}`, 'ping');
    expect(out).toContain('200 Connection Established');
    expect(out).toContain('echo:ping');
    expect(echoed).toContain('ping');
    expect(lookup.asked).toEqual(['rebind.example.com']);
    expect(seen).toEqual([expect.objectContaining({ kind: 'network.allowed', detail: expect.objectContaining({ host: 'rebind.example.com', address: '127.0.0.1' }) })]);
  });

  it('plain HTTP goes to the resolved address with the Host header the client sent; a name with a link-local and a usable address uses the usable one', async () => {
    const lookup = scriptedLookup({ 'web.example.com': ['169.254.169.254', '127.0.0.1'] });
    const seen = await start([`web.example.com:${webPort}`, `localhost:${webPort}`], lookup);
    const out = await raw(`GET http://web.example.com:${webPort}/x HTTP/1.1\r\nHost: web.example.com:${webPort}\r\nConnection: close\r\n\r\n`);
    expect(out).toMatch(/^HTTP\/1\.1 200/);
    expect(out).toContain('hello from upstream');
    expect(webHosts.at(-1)).toBe(`web.example.com:${webPort}`);
    expect(lookup.asked).toEqual(['web.example.com']);
    expect(seen).toEqual([expect.objectContaining({ kind: 'network.allowed', detail: expect.objectContaining({ address: '127.0.0.1' }) })]);
  });

  it.each([
    ['127.0.0.1', /127\.0\.0\.0\/8/],
    ['10.1.2.3', /10\.0\.0\.0\/8/],
    ['172.20.0.5', /172\.16\.0\.0\/12/],
    ['192.168.1.1', /192\.168\.0\.0\/16/],
    ['100.64.0.1', /100\.64\.0\.0\/10/],
    ['0.0.0.0', /0\.0\.0\.0\/8/],
    ['::1', /::1\/128/],
    ['fd12::1', /fc00::\/7/],
    ['64:ff9b::a9fe:a9fe', /64:ff9b::\/96/],
  ])('an allowed name whose one answer is internal (%s) is refused: the proxy reaches only the internet', async (address, why) => {
    const seen = await start(['pkg.example.com'], scriptedLookup({ 'pkg.example.com': [address] }));
    const out = await tunnel('pkg.example.com:443', 'x');
    expect(out).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(out).toMatch(why);
    expect(blocked(seen)).toEqual([expect.objectContaining({ detail: expect.objectContaining({ host: 'pkg.example.com', reason: expect.stringMatching(why) }) })]);
  });

  it('a name that does not resolve is answered 502 and logged as allowed with the lookup error', async () => {
    const seen = await start(['nowhere.example.com'], scriptedLookup({}));
    expect(await tunnel('nowhere.example.com:443', 'x')).toMatch(/^HTTP\/1\.1 502/);
    expect(seen).toEqual([expect.objectContaining({ kind: 'network.allowed', detail: expect.objectContaining({ reason: expect.stringContaining('ENOTFOUND') }) })]);
  });
});
