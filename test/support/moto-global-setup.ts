/**
 * vitest globalSetup: starts one `moto_server` (AWS wire protocol, no account) on a free loopback port for the
 * whole run and stops it afterwards. Tests get the endpoint with `inject('motoEndpoint')` or from
 * `FLYWHEEL_TEST_MOTO_ENDPOINT`; fake credentials and region are set so the SDK never looks further.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { freePort } from './free-port.ts';
import { waitFor } from './wait-for.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the shared moto_server, e.g. `http://127.0.0.1:41234`. */
    motoEndpoint: string;
  }
}

/** Credentials and region every AWS client in the tests uses against moto. */
export const MOTO_ENV = {
  AWS_ACCESS_KEY_ID: 'testing',
  AWS_SECRET_ACCESS_KEY: 'testing',
  AWS_SESSION_TOKEN: 'testing',
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
} as const;

class MotoExitedError extends Error {}

async function waitUntilAnswering(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new MotoExitedError(`moto_server exited early with code ${child.exitCode}`);
      const response = await fetch(`${url}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      return true;
    },
    { what: `moto_server to answer at ${url}`, timeoutMs, everyMs: 100, stopOn: (error) => error instanceof MotoExitedError },
  );
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  Object.assign(process.env, MOTO_ENV);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const stderr: string[] = [];
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, MOTO_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  try {
    await waitUntilAnswering(url, child, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr.join('')}`, { cause: error });
  }
  process.env.FLYWHEEL_TEST_MOTO_ENDPOINT = url;
  project.provide('motoEndpoint', url);

  return async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
}
