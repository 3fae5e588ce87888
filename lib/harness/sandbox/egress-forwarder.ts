/**
 * Runs INSIDE a sandbox's network namespace (which has only loopback): listens on 127.0.0.1 and pipes every
 * connection to the egress proxy's unix socket outside. Prints the port it listens on, then lives until its stdin
 * closes (the harness went away) or it is killed. Started by the sandbox provider as
 * `unshare --net -- sh -c 'ip link set lo up && exec node egress-forwarder.ts <socket>'`.
 */
import { createServer, connect } from 'node:net';

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write('usage: egress-forwarder.ts <proxy-socket>\n');
  process.exit(2);
}
const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
