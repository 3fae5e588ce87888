/**
 * A stand-in for `vllm serve`, run as its own process by the rollout entry point's tests: listens on `--port`,
 * answers `GET /v1/models` with `--served-model-name` (503 for the first `--load-ms`, as a server loading weights),
 * and forwards chat completions to a scripted OpenAI-protocol server whose model fixes the calc task
 * (test/harness/eval/calc-suite.ts). Writes its pid to FAKE_VLLM_PID_FILE, and removes it when stopped by SIGTERM.
 *
 *   node test/support/fake-vllm.ts --port 8000 --served-model-name ckpt-1 [--load-ms 300]
 */
import { createServer } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fixScript } from '../harness/eval/calc-suite.ts';
import { startScriptedModelServer } from './scripted-model-server.ts';

const { values } = parseArgs({ options: { port: { type: 'string' }, 'served-model-name': { type: 'string', default: 'fake-model' }, 'load-ms': { type: 'string', default: '0' } } });
const started = Date.now();
const upstream = await startScriptedModelServer(fixScript('return a + b'));
const origin = new URL(upstream.baseUrl).origin;
const pidFile = process.env['FAKE_VLLM_PID_FILE'];

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/v1/models') {
    if (Date.now() - started < Number(values['load-ms'])) {
      res.writeHead(503).end('loading');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: values['served-model-name'], object: 'model', owned_by: 'vllm' }] }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const upstreamResponse = await fetch(`${origin}${req.url}`, { method: req.method ?? 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(upstreamResponse.status, { 'content-type': upstreamResponse.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await upstreamResponse.arrayBuffer()));
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  if (pidFile) writeFileSync(pidFile, String(process.pid));
  console.log(`fake vLLM serving ${values['served-model-name']} on ${values.port}`);
});
process.once('SIGTERM', () => {
  if (pidFile) rmSync(pidFile, { force: true });
  server.close();
  void upstream.close().then(() => process.exit(0));
});
