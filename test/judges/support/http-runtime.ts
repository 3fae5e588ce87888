/**
 * The local runtime of the judges' HTTP tests: `useLocalRuntime(prefix)` at the top of a test file gives temporary
 * folders, cleanups run after each test (last pushed, first run), and `start(dataDir)`, which starts the local runtime
 * (`startLocalRuntime`, real HTTP with the key check) on a folder, opens the local ports beside it, and returns a
 * `call(method, path, body?)` that sends the runtime's key.
 *
 * @example
 * const { tempDir, cleanups, start } = useLocalRuntime('flywheel-annotation-http-');
 * it('labels a gold set', async () => {
 *   const { side, call } = await start(tempDir());
 * });
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { startLocalRuntime } from '../../../lib/local/runtime.ts';
import { tempDirs } from '../../support/temp-dirs.ts';

export type Cleanups = Array<() => Promise<void> | void>;

export type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Record<string, any> }>;

export interface StartedRuntime {
  dataDir: string;
  runtime: Awaited<ReturnType<typeof startLocalRuntime>>;
  /** The local ports on the runtime's folder, for seeding and reading what the runtime stored. */
  side: LocalPorts;
  call: Call;
}

export function useLocalRuntime(prefix: string): { tempDir: () => string; cleanups: Cleanups; start: (dataDir?: string) => Promise<StartedRuntime> } {
  const logger = new Logger({ serviceName: 'test', logLevel: 'ERROR' });
  const tempDir = tempDirs(prefix);
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function start(dataDir = tempDir()): Promise<StartedRuntime> {
    const runtime = await startLocalRuntime({ dataDir, port: 0, consumerThread: false, logger });
    cleanups.push(() => runtime.close());
    const side = openLocalPorts(dataDir);
    cleanups.push(() => side.close());
    const call: Call = async (method, path, body) => {
      const res = await fetch(`${runtime.url}${path}`, {
        method,
        headers: { 'x-api-key': runtime.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    return { dataDir, runtime, side, call };
  }

  return { tempDir, cleanups, start };
}

/** Sets environment variable `name` to `value` until the cleanups run, which restore what it was (or unset it). */
export function setEnvFor(cleanups: Cleanups, name: string, value: string): void {
  const previous = process.env[name];
  process.env[name] = value;
  cleanups.push(() => {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  });
}
