/**
 * `npm run bench:ingest`: how fast the local runtime accepts and stores feedback, next to a floor (a Node server
 * that only appends each body to a file). Loopback only; bounded to a few minutes.
 *
 * Env: BENCH_SECONDS (per run, default 2), BENCH_RUNS (runs per scenario, median reported; default 3),
 * BENCH_BATCH_MAX_REQUESTS (cap per batch run, default 80 = 40,000 events), BENCH_CONCURRENCY (default 1,16,64).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { postJson, startRuntimeProcess } from './support/runtime-process.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
let runSeconds = SECONDS;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BATCH_MAX_REQUESTS = Number(process.env.BENCH_BATCH_MAX_REQUESTS ?? 80);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const BATCH = 500;

interface Target {
  name: string;
  url: string;
  apiKey: string;
  child: ChildProcess;
  dataDir?: string;
}

interface RunResult {
  requests: number;
  events: number;
  errors: number;
  seconds: number;
  latencies: number[];
  /** Seconds from the first request until every accepted event was stored (runtime only). */
  storedSeconds?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function startRuntime(dataDir: string): Promise<Target> {
  return { name: 'flywheel local', ...(await startRuntimeProcess(dataDir)) };
}

async function startFloor(file: string): Promise<Target> {
  const child = spawn(process.execPath, [join(ROOT, 'bench/floor-server.ts'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve((JSON.parse(d.toString()) as { url: string }).url)),
  );
  return { name: 'floor (append to file)', url, apiKey: 'none', child };
}

/** Peak resident set of a process, in MB (VmHWM). */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

let seq = 0;
function eventJson(id: string): string {
  return JSON.stringify({
    eventId: id,
    kind: 'rating',
    rating: seq % 3 === 0 ? 'down' : 'up',
    traceId: `trace-${id}`,
    sessionId: 'bench-session',
    turnId: '1',
    model: 'ckpt-bench',
    source: 'user',
    reporter: 'bench',
    tags: ['bench'],
    trainingConsent: true,
    context: { repo: 'acme/widgets', client: 'bench/1.0' },
    occurredAt: new Date().toISOString(),
  });
}
function singleBody(): string {
  return eventJson(`b-${process.pid}-${++seq}`);
}
function batchBody(): string {
  const prefix = `b-${process.pid}-${++seq}-`;
  const parts = new Array<string>(BATCH);
  for (let i = 0; i < BATCH; i++) parts[i] = eventJson(prefix + i);
  return `{"events":[${parts.join(',')}]}`;
}

const post = (agent: Agent, target: Target, body: string) => postJson(agent, target, '/v1/feedback', body);

async function drive(target: Target, kind: 'single' | 'batch', concurrency: number): Promise<RunResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const perRequest = kind === 'batch' ? BATCH : 1;
  const maxRequests = kind === 'batch' ? BATCH_MAX_REQUESTS : Number.POSITIVE_INFINITY;
  // Bodies are built ahead of the clock so the generator's JSON work is not timed.
  const pool = Array.from({ length: kind === 'batch' ? Math.min(BATCH_MAX_REQUESTS, 200) : 0 }, batchBody);
  const result: RunResult = { requests: 0, events: 0, errors: 0, seconds: 0, latencies: [] };
  let sent = 0;
  const started = performance.now();
  const end = started + runSeconds * 1000;
  const worker = async () => {
    while (performance.now() < end && sent < maxRequests) {
      const body = kind === 'batch' ? (pool[sent] ?? batchBody()) : singleBody();
      sent++;
      const t0 = performance.now();
      const status = await post(agent, target, body).catch(() => 0);
      result.latencies.push(performance.now() - t0);
      result.requests++;
      if (status === 202) result.events += perRequest;
      else result.errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  result.seconds = (performance.now() - started) / 1000;
  agent.destroy();
  if (target.dataDir) result.storedSeconds = (await waitDrained(target.dataDir, started)) / 1000;
  return result;
}

/** Waits until the ingest queue is empty (every accepted event stored); ms since `since`. */
async function waitDrained(dataDir: string, since: number): Promise<number> {
  const ports = openLocalPorts(dataDir);
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { visible, inFlight } = await ports.ingestQueue.depth();
      if (visible + inFlight === 0) return performance.now() - since;
      if (Date.now() > deadline) throw new Error(`queue not drained: ${visible} visible, ${inFlight} in flight`);
      await sleep(20);
    }
  } finally {
    ports.close();
  }
}

/** Time from a 202 to the event being readable, on an otherwise idle runtime. */
async function acceptToStored(target: Target, samples: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const body = singleBody();
    const id = (JSON.parse(body) as { eventId: string }).eventId;
    const status = await post(agent, target, body);
    if (status !== 202) throw new Error(`unexpected ${status}`);
    const t0 = performance.now();
    for (;;) {
      const code = await new Promise<number>((resolve, reject) => {
        const url = new URL(`/v1/feedback/${id}`, target.url);
        request({ agent, host: url.hostname, port: url.port, path: url.pathname, headers: { 'x-api-key': target.apiKey } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
          .on('error', reject)
          .end();
      });
      if (code === 200) break;
      await sleep(1);
    }
    out.push(performance.now() - t0);
  }
  agent.destroy();
  return out;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const median = (xs: number[]) => pct(xs, 50);
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '–');

interface Row {
  scenario: string;
  target: string;
  eventsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  storedPerSec?: number;
}

async function main() {
  const benchStarted = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'flywheel-bench-'));
  const floorFile = join(dataDir, 'floor.ndjson');
  const runtime = await startRuntime(join(dataDir, 'runtime'));
  const floor = await startFloor(floorFile);
  const rows: Row[] = [];
  try {
    // Warm-up: JIT, SQLite pages, sockets.
    for (const t of [runtime, floor]) {
      await driveQuiet(t, 'single', 8);
      await driveQuiet(t, 'batch', 4);
    }
    for (const kind of ['single', 'batch'] as const) {
      for (const c of CONCURRENCY) {
        for (const target of [runtime, floor]) {
          const runs: RunResult[] = [];
          for (let r = 0; r < RUNS; r++) runs.push(await drive(target, kind, c));
          const row: Row = {
            scenario: `${kind === 'batch' ? `batch of ${BATCH}` : 'single'} c=${c}`,
            target: target.name,
            eventsPerSec: median(runs.map((x) => x.events / x.seconds)),
            p50: median(runs.map((x) => pct(x.latencies, 50))),
            p99: median(runs.map((x) => pct(x.latencies, 99))),
            errors: runs.reduce((a, x) => a + x.errors, 0),
            ...(target.dataDir ? { storedPerSec: median(runs.map((x) => x.events / x.storedSeconds!)) } : {}),
          };
          rows.push(row);
          process.stderr.write(`${row.scenario.padEnd(18)} ${row.target.padEnd(24)} ${fmt(row.eventsPerSec)} ev/s p99 ${fmt(row.p99, 1)} ms\n`);
        }
      }
    }
    const latency = await acceptToStored(runtime, 30);
    print(rows, latency, peakRssMb(runtime.child.pid!), peakRssMb(floor.child.pid!), (Date.now() - benchStarted) / 1000);
  } finally {
    runtime.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
    await Promise.all([runtime, floor].map((t) => new Promise((r) => (t.child.exitCode !== null ? r(null) : t.child.once('exit', r)))));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function driveQuiet(target: Target, kind: 'single' | 'batch', c: number) {
  runSeconds = 0.5;
  try {
    await drive(target, kind, c);
  } finally {
    runSeconds = SECONDS;
  }
}

function print(rows: Row[], latency: number[], runtimeRss: number, floorRss: number, seconds: number) {
  const lines: string[] = [];
  lines.push('');
  lines.push(`Ingest benchmark (loopback, ${SECONDS} s per run, median of ${RUNS} runs; batch runs capped at ${BATCH_MAX_REQUESTS} requests)`);
  lines.push('');
  const header = ['scenario', 'flywheel ev/s', 'floor ev/s', 'ratio', 'p50 ms', 'p99 ms', 'floor p99 ms', 'stored ev/s', 'errors'];
  const table: string[][] = [];
  for (let i = 0; i < rows.length; i += 2) {
    const fw = rows[i]!;
    const fl = rows[i + 1]!;
    table.push([
      fw.scenario,
      fmt(fw.eventsPerSec),
      fmt(fl.eventsPerSec),
      `${fmt((fw.eventsPerSec / fl.eventsPerSec) * 100, 0)}%`,
      fmt(fw.p50, 2),
      fmt(fw.p99, 2),
      fmt(fl.p99, 2),
      fmt(fw.storedPerSec ?? Number.NaN),
      String(fw.errors + fl.errors),
    ]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(line(header), line(widths.map((w) => '-'.repeat(w))), ...table.map(line));
  lines.push('');
  lines.push('stored ev/s: accepted events / time from the run\'s first request until the queue was empty (all stored).');
  lines.push(`202 → stored (idle, ${latency.length} samples): p50 ${fmt(pct(latency, 50), 1)} ms, p99 ${fmt(pct(latency, 99), 1)} ms`);
  lines.push(`peak RSS (VmHWM): flywheel runtime ${fmt(runtimeRss)} MB, floor ${fmt(floorRss)} MB`);
  lines.push(`bench took ${fmt(seconds)} s`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
