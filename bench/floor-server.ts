/**
 * The floor for `bench/ingest.ts`: the least a Node HTTP server can do with an event, append its body to a file and
 * answer 202. Prints `{"url": …}` once listening. Usage: node bench/floor-server.ts <file>
 */
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const out = createWriteStream(process.argv[2] ?? '/dev/null', { flags: 'a' });
const server = createServer({ keepAlive: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    out.write(Buffer.concat(chunks));
    out.write('\n');
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': 11 });
    res.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => out.end(() => process.exit(0))));
