/**
 * Runs INSIDE a sandbox's network namespace (which has only loopback): listens on 127.0.0.1 and pipes every
 * connection to the egress proxy's unix socket outside. Prints the port it listens on as its first line, then lives
 * until its stdin closes (the harness went away) or it is killed. Started by the sandbox provider as
 * `unshare --net -- sh -c 'ip link set lo up && ip route add local 0.0.0.0/0 dev lo; exec node egress-forwarder.ts <socket>'`.
 *
 * It also logs what does not go through the proxy, the way the proxy logs what does, one JSON line per event on
 * stdout after the port (`{"obs":{"host","port","via",…}}`, turned into `network.blocked` observations):
 * - DNS: it answers UDP and TCP port 53 on every address with REFUSED and logs each query (`via: 'dns'`, the name and
 *   type asked). With the "AnyIP" route above (`local 0.0.0.0/0 dev lo`) every IPv4 address is local to the namespace,
 *   so whatever `/etc/resolv.conf` names (127.0.0.53, 10.0.0.2, 8.8.8.8) reaches this listener; `nameserver 127.0.0.1`
 *   is the clearest choice. A nameserver given as an IPv6 address is answered only when the namespace has IPv6.
 * - Raw TCP connects that bypass the proxy: with the same route, a connect to any address on one of the common ports
 *   (`SOCKET_PORTS`: ftp, ssh, smtp, http, https, rsync, git) lands here; the destination
 *   address and port (getsockname) are logged (`via: 'socket'`) and the connection is closed. Ports 1024 and up other
 *   than those are left free for tests that start local servers; a connect to an unlisted port is refused unlogged.
 *   Connections to loopback addresses are not logged (local servers of the tests themselves).
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { DNS_TYPES, dnsQuestion, refuseDns } from './egress-proxy.ts';

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write('usage: egress-forwarder.ts <proxy-socket>\n');
  process.exit(2);
}

/** Ports whose raw connects are logged (53 is the DNS listener's). */
const SOCKET_PORTS = [21, 22, 25, 80, 443, 873, 9418];

/** Observations reported per kind (`dns`, `socket`) before the rest are only counted: a flood must not grow the harness. */
export const MAX_OBSERVATIONS_PER_KIND = 200;
const reported = new Map<string, number>();

function observe(detail: Record<string, unknown>): void {
  const kind = String(detail.via ?? 'other');
  const n = (reported.get(kind) ?? 0) + 1;
  reported.set(kind, n);
  if (n > MAX_OBSERVATIONS_PER_KIND + 1) return;
  // One last line says the rest were dropped, so a flood is itself on the record.
  const line = n === MAX_OBSERVATIONS_PER_KIND + 1 ? { ...detail, host: '*', reason: `more than ${MAX_OBSERVATIONS_PER_KIND} ${kind} attempts: the rest are not listed` } : detail;
  process.stdout.write(`${JSON.stringify({ obs: line })}\n`);
}

const isLoopback = (address: string) => /^(?:127\.|::1$|::ffff:127\.)/.test(address);
const plain = (address: string) => address.replace(/^::ffff:/, '');

function logDns(query: Buffer, server: string | undefined, transport: 'udp' | 'tcp'): void {
  const q = dnsQuestion(query);
  observe({ host: q?.name ?? '?', port: 53, via: 'dns', qtype: q ? (DNS_TYPES[q.type] ?? String(q.type)) : '?', ...(server ? { server: plain(server) } : {}), transport, reason: 'no DNS in strict mode' });
}

function listenQuietly(server: Server, port: number, host: string): void {
  server.on('error', () => undefined);
  server.listen({ port, host, exclusive: true, ...(host === '::' ? { ipv6Only: true } : {}) });
}

// The proxy's entrance.
const proxy = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});

// DNS over UDP, on every address (AnyIP makes every IPv4 address local).
for (const type of ['udp4', 'udp6'] as const) {
  const udp = createSocket({ type, ipv6Only: type === 'udp6' });
  udp.on('error', () => udp.close());
  udp.on('message', (msg: Buffer, from: RemoteInfo) => {
    const answer = refuseDns(msg);
    if (!answer) return;
    // The nameserver the query was sent to is not known here (the socket is bound to every address).
    logDns(msg, undefined, 'udp');
    udp.send(answer, from.port, from.address);
  });
  udp.bind({ port: 53, address: type === 'udp4' ? '0.0.0.0' : '::' });
}

// DNS over TCP: a 2-byte length, the message.
function dnsTcp(socket: Socket): void {
  let buf = Buffer.alloc(0);
  socket.on('error', () => undefined);
  socket.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
      buf = buf.subarray(2 + msg.length);
      logDns(msg, socket.localAddress, 'tcp');
      const answer = refuseDns(msg);
      if (!answer) {
        socket.destroy();
        return;
      }
      const framed = Buffer.alloc(2 + answer.length);
      framed.writeUInt16BE(answer.length, 0);
      answer.copy(framed, 2);
      socket.write(framed);
    }
  });
  socket.setTimeout(5_000, () => socket.destroy());
}

// Raw connects to the common ports: log where they were going, close.
function rawConnect(socket: Socket): void {
  socket.on('error', () => undefined);
  const host = plain(socket.localAddress ?? '?');
  if (!isLoopback(host)) observe({ host, port: socket.localPort, via: 'socket', reason: 'direct connection outside the proxy' });
  socket.destroy();
}

for (const host of ['0.0.0.0', '::']) {
  listenQuietly(createServer(dnsTcp), 53, host);
  for (const port of SOCKET_PORTS) listenQuietly(createServer(rawConnect), port, host);
}

proxy.listen(0, '127.0.0.1', () => {
  const address = proxy.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
