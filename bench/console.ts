/**
 * `npm run bench:console`: the console's API queries and page loads over a loaded store.
 *
 * 1. seed: a data folder with 10,000 eval attempts (5 checkpoints × 4 suites × 250 tasks × 2 modes, one sweep per
 *    checkpoint, written by the real sweep steps with the scripted rollout, each with a trajectory blob and a diff) and
 *    100,000 feedback events over 30 days with their failure-mode tally rows (70 % classified), through the codecs the
 *    real writers use; plus a few notices.
 * 2. api: the local runtime as a process (`npm start`) on that folder; each console query (overview, feedback list,
 *    failure-mode timeline, results, attempts list, attempt detail, sweeps, notices, compute usage, jobs) called
 *    `--calls` times one after another over keep-alive HTTP, p50/p99, beside a baseline (`GET /v1/openapi.json`,
 *    served from memory). A query whose route is not there is reported as missing.
 * 3. pages: headless Chromium (`/usr/bin/chromium`, playwright-core) loads overview, feedback, results, attempts and
 *    the attempt viewer `--loads` times each (a fresh context each time: cold cache, signed in); time to first render
 *    is first-contentful-paint; time to interactive is when the page's main content is there (an element with
 *    `data-ready`, else no loading status left and a table, chart or article in main) and the main thread is idle
 *    (a `requestIdleCallback` fired). Medians. A page that never gets there is reported as not ready.
 *
 * Flags: --attempts-per-suite 250 --feedback 100000 --calls 100 --loads 5 --data-dir <folder: reuse a seeded one>
 *        --keep (leave the folder) --json
 */
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { STAGES, type SweepSettings } from '../lib/config/stages.ts';
import { openLocalPorts, type LocalPorts } from '../lib/drivers/local/local-ports.ts';
import { feedbackEventRecord } from '../lib/feedback/record-codecs.ts';
import { attemptRecord } from '../lib/harness/attempt/record-codecs.ts';
import { ATTEMPT_SORT_PREFIX, evalPartition } from '../lib/harness/attempt/record-keys.ts';
import { toJsonl, type Trajectory } from '../lib/harness/trajectory/trajectory-schema.ts';
import { modelSeenRecord, tallyRecord } from '../lib/modes/record-codecs.ts';
import { raiseNotice } from '../lib/people/notices/raise-notice.ts';
import { registerCheckpoint } from '../lib/registry/register-checkpoint.ts';
import { registerSuite } from '../lib/registry/register-suite.ts';
import { registryKeys } from '../lib/registry/record-keys.ts';
import { shardPartRecord } from '../lib/sweeps/record-codecs.ts';
import { sweepKeys } from '../lib/sweeps/record-keys.ts';
import { sweepStepHandlers } from '../lib/sweeps/sweep-step-handlers.ts';
import type { RecordItem } from '../lib/ports/records.ts';
import { API_KEY_STORAGE } from '../lib/console/web/session.ts';
import { driveSweep } from '../test/sweeps/support/drive-sweep.ts';
import { rateScript, sampleTask } from '../test/sweeps/support/scripted-rollout.ts';
import { startRuntimeProcess, type RuntimeProcess } from './support/runtime-process.ts';

const { values: f } = parseArgs({
  options: {
    'attempts-per-suite': { type: 'string', default: '250' },
    feedback: { type: 'string', default: '100000' },
    calls: { type: 'string', default: '100' },
    loads: { type: 'string', default: '5' },
    'data-dir': { type: 'string' },
    keep: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const CHECKPOINTS = 5;
const SUITES = 4;
const TASKS = Number(f['attempts-per-suite']);
const FEEDBACK = Number(f.feedback);
const CALLS = Number(f.calls);
const LOADS = Number(f.loads);
const MODES = ['wrong-fix', 'gave-up', 'broke-tests', 'ignored-instruction', 'unsafe-command', 'slow'];
const DAY_MS = 86_400_000;
const log = (line: string) => {
  if (!f.json) console.log(line);
};

// ---------------------------------------------------------------------------------------------------------------
// 1. seed
// ---------------------------------------------------------------------------------------------------------------

/** A trajectory of `turns` tool-calling turns, as the harness writes it. */
function trajectoryOf(attemptId: string, checkpoint: string, turns: number): string {
  const at = '2026-12-01T10:00:00.000Z';
  const steps: Trajectory['steps'] = [{ type: 'message', seq: 0, at, messageId: `${attemptId}:u0`, role: 'user', content: 'Fix the failing test in calc.py. '.repeat(8) }];
  for (let t = 1; t <= turns; t++) {
    steps.push({
      type: 'assistant', seq: 2 * t - 1, at, messageId: `${attemptId}:m${t}`, turn: t, content: `Looking at step ${t}. `.repeat(10),
      toolCalls: [{ id: `c${t}`, name: 'bash', arguments: JSON.stringify({ cmd: `sed -n ${t},${t + 40}p calc.py && pytest -q` }) }],
      finishReason: 'tool_calls', model: checkpoint, sampling: {}, usage: { promptTokens: 900 + 40 * t, completionTokens: 60 }, timing: { startedAt: at, durationMs: 800, httpAttempts: 1 },
    });
    steps.push({ type: 'tool_result', seq: 2 * t, at, messageId: `${attemptId}:m${t}`, toolCallId: `c${t}`, name: 'bash', isError: false, content: 'def add(a, b):\n    return a - b\n'.repeat(20), truncated: false, exitCode: 1, durationMs: 120 });
  }
  steps.push({ type: 'outcome', seq: 2 * turns + 1, at, stopReason: { kind: 'submitted' }, limitsHit: [], turns, usage: { promptTokens: 30_000, completionTokens: 1500, cachedTokens: 0 }, outputBytes: 100, durationMs: 60_000 });
  return toJsonl({
    header: { type: 'header', format: 'flywheel.trajectory', schemaVersion: 1, attemptId, agent: { name: 'flywheel', version: '1' }, model: { id: checkpoint }, policy: { checkpoint }, sampling: {}, limits: {}, tools: [], startedAt: at },
    steps,
  });
}

async function seedAttempts(ports: LocalPorts): Promise<{ attempts: number; sampleIds: string[] }> {
  const settings: SweepSettings = { ...STAGES.local.sweeps, shardMaxTasks: 125, tasksPerChild: 25, saturationThreshold: 0.99 };
  const steps = sweepStepHandlers({ settings, notify: { log: () => {} } });
  for (let i = 0; i < CHECKPOINTS; i++) {
    await registerCheckpoint(ports, { id: `coder-7b:step-${(i + 1) * 100}`, model: 'coder-7b', serving: { kind: 'endpoint', model: `openai:ck-${i}@http://127.0.0.1:9/v1` }, sweep: false });
  }
  for (let j = 0; j < SUITES; j++) {
    const taskIds = Array.from({ length: TASKS }, (_, t) => `t${String(t).padStart(4, '0')}`);
    await ports.records.putMany(taskIds.map((t) => ({ ...registryKeys.task(`suite-${j}`, t), kind: 'forge-task', task: sampleTask(`suite-${j}`, t) })));
    await registerSuite(ports, { id: `suite-${j}`, visibility: 'private', owner: 'bench', tasks: { kind: 'records' }, taskIds });
  }
  const script = rateScript((ck, suite, mode) => 0.3 + 0.1 * Number(/(\d)00$/.exec(ck)?.[1] ?? 0) / 2 + 0.05 * Number(suite.slice(-1)) + (mode === 'lenient' ? 0.1 : 0));
  for (let i = 0; i < CHECKPOINTS; i++) {
    const checkpoint = `coder-7b:step-${(i + 1) * 100}`;
    const requestedAt = new Date(Date.now() - (CHECKPOINTS - i) * DAY_MS).toISOString();
    await driveSweep(steps, ports, { sweepId: `nightly-${i}`, trigger: 'checkpoint', requestedAt, checkpoints: [checkpoint] }, { script });
  }
  // Trajectories and diffs for every attempt (the scripted rollout writes none), and the record pointing at them.
  let attempts = 0;
  const sampleIds: string[] = [];
  for (let i = 0; i < CHECKPOINTS; i++) {
    const parts = await ports.records.query({ partition: sweepKeys.resultPartition(`nightly-${i}`), sort: { beginsWith: sweepKeys.allShardPartsPrefix }, limit: 1000 });
    for (const item of parts.items) {
      const part = shardPartRecord.decode(item);
      for (let c = 0; c < part.arraySize; c++) {
        const page = await ports.records.query({ partition: evalPartition(`${part.runId}.shard-${c}`), sort: { beginsWith: ATTEMPT_SORT_PREFIX }, limit: 1000 });
        const updated: RecordItem[] = [];
        for (const stored of page.items) {
          const a = attemptRecord.decode(stored);
          const trajectoryKey = `trajectories/attempts/${a.attemptId}.jsonl`;
          const diffKey = `diffs/${a.attemptId}.patch`;
          // Most trajectories are short; one in fifty is long (120 turns).
          await ports.blobs.put(trajectoryKey, trajectoryOf(a.attemptId, part.checkpoint, attempts % 50 === 0 ? 120 : 12));
          await ports.blobs.put(diffKey, '--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n');
          updated.push(attemptRecord.encode({ ...a, trajectoryKey, diffKey, grade: { passed: a.status === 'passed', reasons: a.status === 'passed' ? [] : ['tests-failed'], perTest: { test_add: a.status === 'passed' ? 'passed' : 'failed', test_sub: 'passed' } } }));
          attempts++;
          if (sampleIds.length < 60 && attempts % 97 === 0) sampleIds.push(Buffer.from(JSON.stringify([a.runId, a.taskId, a.mode, a.n])).toString('base64url'));
        }
        await ports.records.putMany(updated);
      }
    }
  }
  return { attempts, sampleIds };
}

async function seedFeedback(ports: LocalPorts): Promise<void> {
  const now = Date.now();
  const checkpoints = Array.from({ length: CHECKPOINTS }, (_, i) => `coder-7b:step-${(i + 1) * 100}`);
  let rng = 12345;
  const rand = () => ((rng = (rng * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let start = 0; start < FEEDBACK; start += 1000) {
    const items: RecordItem[] = [];
    for (let k = start; k < Math.min(FEEDBACK, start + 1000); k++) {
      const receivedAt = new Date(now - Math.floor(rand() * 30 * DAY_MS)).toISOString();
      const model = checkpoints[k % CHECKPOINTS]!;
      const rating = rand() < 0.35 ? 'down' : rand() < 0.6 ? 'up' : 'none';
      const eventId = `ev-${k}`;
      items.push(
        feedbackEventRecord.encode({
          eventId, feedbackKey: `fk-${k}`, kind: rating === 'none' ? 'comment' : 'rating', traceId: `tr-${k}`, sessionId: `s-${k % 500}`, turnId: `u-${k}`, model, rating,
          ...(rating === 'none' ? { comment: 'It edited the test instead of fixing the bug.' } : {}),
          source: 'user', reporter: 'bench', trainingConsent: k % 3 === 0, occurredAt: receivedAt, receivedAt, ingestId: `in-${Math.floor(k / 10)}`,
        }),
      );
      const classified = rand() < 0.7;
      const modes = classified && rating !== 'up' ? [MODES[Math.floor(rand() * rand() * MODES.length)]!] : [];
      items.push(
        tallyRecord.encode({
          signalKey: `feedback:${eventId}`, model, day: receivedAt.slice(0, 10), receivedAt, signalKind: rating === 'none' ? 'comment' : 'rating', rating, turn: `tr-${k}:u-${k}`,
          feedbackKey: `fk-${k}`, modes, source: classified ? (k % 20 === 0 ? 'human' : 'local') : 'none', confidence: classified ? 0.8 : 0,
        }),
      );
    }
    await ports.records.putMany(items);
  }
  await ports.records.putMany(checkpoints.map((model) => modelSeenRecord.encode({ model })));
  for (let n = 0; n < 30; n++) {
    await raiseNotice(
      ports,
      { dedupKey: `bench:${n}`, kind: n % 3 === 0 ? 'decision' : 'failure', severity: n % 5 === 0 ? 'alert' : 'warning', title: `Bench notice ${n}`, text: 'A shard failed twice.', source: { capability: 'sweeps', runId: `nightly-${n % CHECKPOINTS}` } },
      { log: () => {} },
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2. api
// ---------------------------------------------------------------------------------------------------------------

interface ApiRow {
  query: string;
  path: string;
  status: number | 'missing';
  calls: number;
  p50: number;
  p99: number;
  bytes: number;
}

function getOnce(agent: Agent, rt: RuntimeProcess, path: string): Promise<{ status: number; ms: number; bytes: number; body: string }> {
  const url = new URL(path, rt.url);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', headers: { 'x-api-key': rt.apiKey } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, bytes: body.byteLength, body: body.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function measureApi(rt: RuntimeProcess, sampleIds: string[]): Promise<ApiRow[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const today = new Date().toISOString().slice(0, 10);
  const queries: Array<{ query: string; path: (i: number) => string }> = [
    { query: 'baseline: openapi.json', path: () => '/v1/openapi.json' },
    { query: 'overview', path: () => '/v1/overview' },
    { query: 'feedback list page', path: () => '/v1/feedback?limit=50' },
    { query: 'failure-mode timeline (30 d)', path: () => `/v1/failure-modes/timeline?to=${today}` },
    { query: 'results (a sweep)', path: (i) => `/v1/results?sweep=nightly-${i % CHECKPOINTS}` },
    { query: 'attempts list page', path: () => '/v1/attempts?limit=50' },
    { query: 'attempts, failed of a checkpoint', path: (i) => `/v1/attempts?checkpoint=coder-7b:step-${((i % CHECKPOINTS) + 1) * 100}&outcome=failed&limit=50` },
    { query: 'attempt detail', path: (i) => `/v1/attempts/${sampleIds[i % sampleIds.length]}` },
    { query: 'sweeps', path: () => '/v1/sweeps' },
    { query: 'notices', path: () => '/v1/notices' },
    { query: 'compute usage', path: () => '/v1/compute/usage' },
    { query: 'jobs', path: () => '/v1/jobs' },
  ];
  const rows: ApiRow[] = [];
  for (const q of queries) {
    const first = await getOnce(agent, rt, q.path(0));
    if (first.status === 404 && /RouteNotFound|No route/i.test(first.body)) {
      rows.push({ query: q.query, path: q.path(0), status: 'missing', calls: 0, p50: NaN, p99: NaN, bytes: 0 });
      continue;
    }
    for (let w = 1; w < 5; w++) await getOnce(agent, rt, q.path(w)); // warm-up
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < CALLS; i++) {
      const r = await getOnce(agent, rt, q.path(i));
      times.push(r.ms);
      bytes = Math.max(bytes, r.bytes);
    }
    times.sort((a, b) => a - b);
    rows.push({ query: q.query, path: q.path(0), status: first.status, calls: CALLS, p50: quantile(times, 0.5), p99: quantile(times, 0.99), bytes });
  }
  agent.destroy();
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// 3. pages
// ---------------------------------------------------------------------------------------------------------------

interface PageRow {
  page: string;
  route: string;
  loads: number;
  fcpMs: number;
  interactiveMs: number;
  state: 'ready' | 'not ready' | 'missing';
  note?: string;
}

/** Runs in the page: resolves with the time (ms since navigation) when the main content is there and the thread is idle. */
const READY_SCRIPT = `new Promise((resolve) => {
  const ready = () => {
    if (document.querySelector('[data-ready]')) return true;
    const main = document.querySelector('main') || document.body;
    if (main.querySelector('[role=status].loading, .loading')) return false;
    return !!main.querySelector('table, canvas, svg, article, [role=alert], .empty');
  };
  const check = () => {
    if (ready()) requestIdleCallback(() => resolve({ at: performance.now(), error: !!document.querySelector('main [role=alert]') }), { timeout: 2000 });
    else requestAnimationFrame(check);
  };
  check();
})`;

async function measurePages(browser: Browser, rt: RuntimeProcess, attemptId: string | undefined): Promise<PageRow[]> {
  const pages: Array<{ page: string; route: string }> = [
    { page: 'overview', route: '/' },
    { page: 'feedback', route: '/feedback' },
    { page: 'results', route: '/results' },
    { page: 'attempts', route: '/attempts' },
    { page: 'attempt viewer', route: `/attempts/${attemptId ?? 'none'}` },
  ];
  const rows: PageRow[] = [];
  const root = await getOnce(new Agent(), rt, '/');
  if (root.status !== 200) return pages.map((p) => ({ ...p, loads: 0, fcpMs: NaN, interactiveMs: NaN, state: 'missing' as const, note: `GET / answered ${root.status}` }));
  for (const p of pages) {
    const fcps: number[] = [];
    const tti: number[] = [];
    let note: string | undefined;
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript(([name, key]) => globalThis.sessionStorage.setItem(name, key), [API_KEY_STORAGE, rt.apiKey] as const);
      const page = await context.newPage();
      try {
        await page.goto(`${rt.url}/#${p.route}`, { waitUntil: 'commit' });
        let timer: NodeJS.Timeout | undefined;
        const raced = await Promise.race([
          page.evaluate(READY_SCRIPT).then((v) => v as { at: number; error: boolean }, () => undefined),
          new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 20_000))),
        ]);
        clearTimeout(timer);
        const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
        if (raced) {
          tti.push(raced.at);
          if (raced.error) note = 'the page showed an error panel';
        }
        fcps.push(fcp);
      } finally {
        await context.close();
      }
    }
    const median = (xs: number[]) => (xs.length ? xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
    rows.push({ ...p, loads: LOADS, fcpMs: median(fcps), interactiveMs: median(tti), state: tti.length === LOADS ? 'ready' : 'not ready', ...(note ? { note } : {}) });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const ms = (x: number) => (Number.isNaN(x) ? '—' : x < 10 ? x.toFixed(2) : x.toFixed(1));

async function main(): Promise<void> {
  const dataDir = f['data-dir'] ?? mkdtempSync(join(tmpdir(), 'flywheel-bench-console-'));
  const seeded = existsSync(join(dataDir, 'bench-console.json'));
  let sampleIds: string[];
  if (!seeded) {
    const ports = openLocalPorts(dataDir);
    const t0 = performance.now();
    const { attempts, sampleIds: ids } = await seedAttempts(ports);
    const t1 = performance.now();
    await seedFeedback(ports);
    const t2 = performance.now();
    ports.close();
    sampleIds = ids;
    writeFileSync(join(dataDir, 'bench-console.json'), JSON.stringify({ attempts, sampleIds }));
    log(`seeded ${dataDir}: ${attempts} attempts with trajectories in ${((t1 - t0) / 1000).toFixed(1)} s, ${FEEDBACK} feedback events + tallies + 30 notices in ${((t2 - t1) / 1000).toFixed(1)} s`);
  } else {
    sampleIds = (JSON.parse((await import('node:fs')).readFileSync(join(dataDir, 'bench-console.json'), 'utf8')) as { sampleIds: string[] }).sampleIds;
    log(`reusing seeded ${dataDir}`);
  }
  const rt = await startRuntimeProcess(dataDir, { FLYWHEEL_SCHEDULE: 'off' });
  let browser: Browser | undefined;
  try {
    const api = await measureApi(rt, sampleIds);
    log(`\nAPI queries (${CALLS} sequential calls each after 5 warm-up, keep-alive, local runtime process)`);
    log(table(['query', 'p50 ms', 'p99 ms', 'bytes', 'status'], api.map((r) => [r.query, ms(r.p50), ms(r.p99), String(r.bytes), String(r.status)])));
    let pages: PageRow[] = [];
    try {
      browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run'] });
      pages = await measurePages(browser, rt, sampleIds[0]);
      log(`\nPage loads in Chromium (median of ${LOADS}, cold context each; interactive = main content present and main thread idle)`);
      log(table(['page', 'first paint ms', 'interactive ms', 'state'], pages.map((p) => [p.page, ms(p.fcpMs), ms(p.interactiveMs), p.state + (p.note ? ` (${p.note})` : '')])));
    } catch (error) {
      log(`\nPage loads: Chromium could not run: ${(error as Error).message.split('\n')[0]}`);
    }
    if (f.json) console.log(JSON.stringify({ attempts: sampleIds.length ? 'seeded' : 'none', api, pages }, null, 2));
  } finally {
    await browser?.close();
    rt.child.kill('SIGTERM');
    await new Promise<void>((r) => (rt.child.exitCode !== null ? r() : rt.child.once('exit', () => r())));
    if (!f.keep && !f['data-dir']) rmSync(dataDir, { recursive: true, force: true });
    else log(`\ndata left in ${dataDir}`);
  }
}

await main();
