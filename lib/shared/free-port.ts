/**
 * A TCP port on the loopback interface that nothing listens on right now (the OS picks it; the probe closes at once).
 * Another process may take it before the caller does, so use it at once.
 *
 * @example
 * const port = await freePort();
 * spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)]);
 */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
