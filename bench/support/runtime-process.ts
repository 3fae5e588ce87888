/**
 * The local runtime as a child process for the benches that drive it over HTTP (`bench/ingest.ts`,
 * `bench/experiments/ingest-bench.ts`): started as `npm start` would, ready once it writes its `runtime.json`, and a
 * bare keep-alive POST so the load generator costs as little as it can.
 *
 * @example
 * const rt = await startRuntimeProcess(dataDir, { FLYWHEEL_SCHEDULE: 'off' });
 * const status = await postJson(new Agent({ keepAlive: true }), rt, '/v1/metrics', body); // 202
 * rt.child.kill('SIGTERM');
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** How long a runtime may take to write its `runtime.json` (a loaded 2-core machine). */
const READY_WITHIN_MS = 120_000;
const READY_POLL_MS = 50;

export interface RuntimeProcess {
  url: string;
  apiKey: string;
  child: ChildProcess;
  dataDir: string;
}

/** Starts `bin/flywheel.ts start --port 0` on `dataDir` with `env` added; resolves when it is ready. */
export async function startRuntimeProcess(dataDir: string, env: Record<string, string> = {}): Promise<RuntimeProcess> {
  // The same V8 flag as `npm start`: a small young generation keeps the resident set down under bursts.
  const child = spawn(process.execPath, ['--max-semi-space-size=8', join(ROOT, 'bin/flywheel.ts'), 'start', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, FLYWHEEL_LOG_LEVEL: 'WARN', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the runtime exited with ${child.exitCode} before it was ready`);
    try {
      const info = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { url: string; apiKey: string; pid: number };
      if (info.pid === child.pid) return { url: info.url, apiKey: info.apiKey, child, dataDir };
    } catch {
      // not written yet
    }
    await new Promise<void>((r) => setTimeout(r, READY_POLL_MS));
  }
  child.kill('SIGKILL');
  throw new Error(`the runtime did not start within ${READY_WITHIN_MS / 1000} s`);
}

/** POSTs a JSON body with the target's key; resolves with the status code (the body is drained, not read). */
export function postJson(agent: Agent, target: { url: string; apiKey: string }, path: string, body: string): Promise<number> {
  const url = new URL(path, target.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': target.apiKey, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
