/**
 * A strict attempt's network: the egress proxy on a unix socket in the harness (`egress-proxy.ts`), and a network
 * namespace holding only loopback plus the forwarder (`egress-forwarder.ts`) that pipes 127.0.0.1:<port> to that
 * socket. Commands join the namespace (`netns`), so the proxy is their only way out, and both the proxy's and the
 * forwarder's refusals become observations. The forwarder process holds the namespace for the attempt's life.
 *
 * @example
 * const net = new StrictNetwork({ socketPath, allowList: spec.networkAllowList, observe: (o) => observed.push(o) });
 * await net.start();
 * plan = { ...plan, netns: net.netns, env: { …, HTTPS_PROXY: `http://127.0.0.1:${net.port}` } };
 * await net.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import type { SandboxObservation } from './sandbox.ts';

const FORWARDER = fileURLToPath(new URL('./egress-forwarder.ts', import.meta.url));

export class StrictNetwork {
  private readonly input: { socketPath: string; allowList: string[]; observe: (o: SandboxObservation) => void };
  /** Set as soon as each exists, so `stop` can end them even when `start` failed half way. */
  proxy: EgressProxy | undefined;
  forwarder: ChildProcess | undefined;
  /** The forwarder's port inside the namespace; 0 until it is listening. */
  port = 0;

  constructor(input: { socketPath: string; allowList: string[]; observe: (o: SandboxObservation) => void }) {
    this.input = input;
  }

  async start(): Promise<void> {
    const { socketPath } = this.input;
    this.proxy = await startEgressProxy({
      socketPath,
      allowList: this.input.allowList,
      onObservation: (o) => this.input.observe(o),
    });
    // "AnyIP": every address is local to the namespace, so DNS to any nameserver and raw connects to the common ports
    // reach the forwarder, which refuses and logs them (see egress-forwarder.ts); IPv6 when the kernel has it. Without
    // the route (no such support) isolation is the same, only those attempts go unlogged.
    const child = spawn(
      'unshare',
      ['--net', '--', 'sh', '-c', 'ip link set lo up && { ip route add local 0.0.0.0/0 dev lo || true; } && { ip -6 route add local ::/0 dev lo 2>/dev/null || true; } && exec "$0" "$@"', process.execPath, '--no-warnings', FORWARDER, socketPath],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.forwarder = child;
    this.port = await new Promise<number>((resolvePort, reject) => {
      let text = '';
      let err = '';
      let port = 0;
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        let nl: number;
        while ((nl = text.indexOf('\n')) >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          if (port === 0 && /^\d+$/.test(line)) {
            port = Number(line);
            resolvePort(port);
            continue;
          }
          // DNS queries and raw connects the forwarder refused: logged like the proxy's blocked requests.
          try {
            const { obs } = JSON.parse(line) as { obs?: Record<string, unknown> };
            if (obs) this.input.observe({ kind: 'network.blocked', at: new Date().toISOString(), detail: obs });
          } catch {
            /* not an observation line */
          }
        }
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`egress forwarder exited (${code}): ${err.trim()}`)));
      child.on('error', reject);
    });
  }

  /** The namespace commands join (`/proc/<pid>/ns/net`); undefined before the forwarder runs. */
  get netns(): string | undefined {
    return this.forwarder?.pid ? `/proc/${this.forwarder.pid}/ns/net` : undefined;
  }

  /** Kills the forwarder (its namespace goes with it) and closes the proxy. Safe when never started. */
  async stop(): Promise<void> {
    if (this.forwarder && this.forwarder.exitCode === null && this.forwarder.signalCode === null) {
      const f = this.forwarder;
      await new Promise<void>((done) => {
        f.once('exit', () => done());
        f.kill('SIGKILL');
      });
    }
    await this.proxy?.close();
  }
}
