/**
 * Exposures and metric events ingested per second through the local runtime (`flywheel start` as a child process,
 * real HTTP, batches of 500), against feedback ingest of the same count in the same runtime and the same run.
 *
 * Per run and kind: post `items` items in batches of 500 over `concurrency` keep-alive connections (bodies built
 * before the clock starts), then wait until the raw archive holds every one of them (`raw/exposures/…`,
 * `raw/metrics/…` without derived rows, `raw/feedback/…`), then until the ingest queue is empty. Figures: accepted/s
 * (items / time to the last 202) and stored/s (items / time from the first request to the archive holding them all);
 * the kinds take turns going first, run by run, so a warmer runtime favours none.
 *
 * @example
 * const figures = await benchIngest({ items: 50_000, runs: 5, concurrency: 4 });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { postJson, startRuntimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { ArchiveLines } from './archive-lines.ts';
import { percentile, progress } from './figures.ts';

const BATCH = 500;
const STORE_TIMEOUT_MS = 600_000;

export type IngestKind = 'exposures' | 'metrics' | 'feedback';
export const INGEST_KINDS: readonly IngestKind[] = ['exposures', 'metrics', 'feedback'];

export interface IngestRun {
  acceptedPerSec: number;
  storedPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface IngestOptions {
  items: number;
  runs: number;
  concurrency: number;
  /** Kept (not removed) when given. */
  dataDir?: string;
}

type Runtime = RuntimeProcess;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// The schedules off, so nothing but ingest runs while it is timed.
const startRuntime = (dataDir: string): Promise<Runtime> => startRuntimeProcess(dataDir, { FLYWHEEL_SCHEDULE: 'off' });

let sequence = 0;
/** One request body of `BATCH` items of `kind`, with unique ids, occurring now. */
function batchBody(kind: IngestKind, run: number): string {
  const now = new Date().toISOString();
  const prefix = `${kind[0]}${process.pid}-${run}-${++sequence}-`;
  const items: string[] = [];
  for (let i = 0; i < BATCH; i++) {
    const id = prefix + i;
    const user = `bench-user-${(sequence * BATCH + i) % 10_000}`;
    const arm = i % 2 === 0 ? 'control' : 'treatment';
    if (kind === 'exposures') {
      items.push(JSON.stringify({ exposureId: id, experiment: 'bench-ingest', arm, checkpoint: `ckpt-${arm}`, unitType: 'user', unitId: user, sessionId: `s-${user}`, turnId: id, occurredAt: now }));
    } else if (kind === 'metrics') {
      items.push(JSON.stringify({ metricEventId: id, metric: 'latency_ms', value: 500 + (i % 700), scope: 'turn', userId: user, model: `ckpt-${arm}`, experiment: 'bench-ingest', arm, sessionId: `s-${user}`, turnId: id, occurredAt: now }));
    } else {
      items.push(
        JSON.stringify({ eventId: id, kind: 'rating', rating: i % 3 === 0 ? 'down' : 'up', traceId: `trace-${id}`, sessionId: `s-${user}`, turnId: '1', model: `ckpt-${arm}`, source: 'user', reporter: user, trainingConsent: true, occurredAt: now }),
      );
    }
  }
  const key = kind === 'feedback' ? 'events' : kind;
  return `{"${key}":[${items.join(',')}]}`;
}

const PATHS: Record<IngestKind, string> = { exposures: '/v1/exposures', metrics: '/v1/metrics', feedback: '/v1/feedback' };
const ARCHIVES: Record<IngestKind, string> = { exposures: 'raw/exposures', metrics: 'raw/metrics', feedback: 'raw/feedback' };

async function ingestRun(runtime: Runtime, archive: ArchiveLines, kind: IngestKind, items: number, concurrency: number, run: number): Promise<IngestRun> {
  const before = await archive.count();
  const bodies = Array.from({ length: Math.ceil(items / BATCH) }, () => batchBody(kind, run));
  const expected = before + bodies.length * BATCH;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const t0 = performance.now();
      const status = await postJson(agent, runtime, PATHS[kind], body).catch(() => 0);
      latencies.push(performance.now() - t0);
      if (status !== 202) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const accepted = performance.now() - started;
  agent.destroy();
  const deadline = Date.now() + STORE_TIMEOUT_MS;
  let held = await archive.count();
  while (held < expected - errors * BATCH) {
    if (Date.now() > deadline) throw new Error(`${kind}: the archive holds ${held - before} of ${expected - before} rows after ${STORE_TIMEOUT_MS / 1000} s`);
    await pause(20);
    held = await archive.count();
  }
  const stored = performance.now() - started;
  await queueEmpty(runtime.dataDir);
  const n = bodies.length * BATCH - errors * BATCH;
  return { acceptedPerSec: n / (accepted / 1000), storedPerSec: n / (stored / 1000), p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors };
}

/** Waits until the ingest queue is empty, so the next kind starts on an idle runtime. */
async function queueEmpty(dataDir: string): Promise<void> {
  const ports = openLocalPorts(dataDir);
  try {
    const deadline = Date.now() + STORE_TIMEOUT_MS;
    for (;;) {
      const { visible, inFlight } = await ports.ingestQueue.depth();
      if (visible + inFlight === 0) return;
      if (Date.now() > deadline) throw new Error(`ingest queue not drained: ${visible} visible, ${inFlight} in flight`);
      await pause(20);
    }
  } finally {
    ports.close();
  }
}

/** Runs every kind `runs` times in one runtime; the runs of each kind, in order. */
export async function benchIngest(options: IngestOptions): Promise<Record<IngestKind, IngestRun[]>> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'flywheel-bench-experiments-ingest-'));
  const runtime = await startRuntime(dataDir);
  const archives = Object.fromEntries(INGEST_KINDS.map((k) => [k, new ArchiveLines(join(dataDir, 'blobs', ARCHIVES[k]))])) as Record<IngestKind, ArchiveLines>;
  const out: Record<IngestKind, IngestRun[]> = { exposures: [], metrics: [], feedback: [] };
  try {
    // Warm-up: JIT, SQLite pages, sockets, the consumer thread.
    for (const kind of INGEST_KINDS) await ingestRun(runtime, archives[kind], kind, Math.min(options.items, 5 * BATCH), options.concurrency, -1);
    for (let run = 0; run < options.runs; run++) {
      const order = INGEST_KINDS.map((_, i) => INGEST_KINDS[(i + run) % INGEST_KINDS.length]!);
      for (const kind of order) {
        const figures = await ingestRun(runtime, archives[kind], kind, options.items, options.concurrency, run);
        out[kind].push(figures);
        progress(`ingest run ${run + 1}/${options.runs} ${kind}: ${Math.round(figures.acceptedPerSec)} accepted/s, ${Math.round(figures.storedPerSec)} stored/s`);
      }
    }
    return out;
  } finally {
    runtime.child.kill('SIGTERM');
    if (runtime.child.exitCode === null) await new Promise((r) => runtime.child.once('exit', r));
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
