/**
 * The console's insights pages (results, attempts and the attempt viewer, suites, experiments, training runs) in
 * headless Chromium against a real local runtime (`startLocalRuntime`: real HTTP, the key check, the console built at
 * start). The data gets there as it does in production: the suite and checkpoints through the API, a sweep run by the
 * sweep's own step handlers with a scripted rollout in place of the Batch job (attempt records as the rollout job
 * writes them, then aggregated into results and the suite's best-score series), one attempt given what the harness
 * stores for it (trajectory and diff blobs, per-test grade, integrity flags, a judge's verdict) and a decision record,
 * an experiment through the API, a training run with its metrics lines.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { DEFAULT_TENANT } from '../../lib/auth/scopes.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { analysisRecord } from '../../lib/experiments/analysis/analysis-record.ts';
import type { ExperimentAnalysis } from '../../lib/experiments/schemas.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { listAttemptRecords } from '../../lib/harness/attempt/read-attempt-records.ts';
import { toJsonl, type Trajectory } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { startLocalRuntime } from '../../lib/local/runtime.ts';
import { setIncumbent } from '../../lib/registry/incumbent.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { sweepBlobKeys } from '../../lib/sweeps/record-keys.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { storeDecision } from '../../lib/training/decisions/store-decision.ts';
import { createRun } from '../../lib/training/runs/run-store.ts';
import { TrainingRunInputSchema, trainingRunKeys } from '../../lib/training/schemas.ts';
import { expectClean, useBrowser, type ConsolePage } from '../support/browser.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { RUNTIME_START_TIMEOUT_MS } from '../support/wait-for.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript, sampleTask } from '../sweeps/support/scripted-rollout.ts';

const tempDir = tempDirs('flywheel-console-insights-');
const browser = useBrowser();

const SUITE = 'calc';
const TASKS = Array.from({ length: 10 }, (_, t) => `t${String(t).padStart(3, '0')}`);
const REQUESTED_AT = '2026-12-02T10:05:00.000Z';
/** Pass rates the scripted rollout follows: lenient passes more than strict, ck-b more than ck-a. */
const RATES: Record<string, number> = { 'ck-a': 0.3, 'ck-b': 0.6 };
const DIFF = [
  'diff --git a/calc/add.py b/calc/add.py',
  '--- a/calc/add.py',
  '+++ b/calc/add.py',
  '@@ -1,2 +1,2 @@',
  ' def add(a, b):',
  '-    return a - b',
  '+    return a + b  # fixed by the agent',
  'diff --git a/tests/test_add.py b/tests/test_add.py',
  '--- a/tests/test_add.py',
  '+++ b/tests/test_add.py',
  '@@ -1 +1 @@',
  '-assert add(1, 2) == 3',
  '+assert True',
  '',
].join('\n');

interface Runtime {
  url: string;
  apiKey: string;
  side: LocalPorts;
  close(): Promise<void>;
}

let rt: Runtime;
/** The attempt given a trajectory, diff, grade and decision: its harness id. */
let richAttemptId: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${rt.url}${path}`, {
    method,
    headers: { 'x-api-key': rt.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const res = await call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function trajectoryOf(attemptId: string): Trajectory {
  const at = REQUESTED_AT;
  const m1 = `${attemptId}:m1`;
  const m2 = `${attemptId}:m2`;
  return {
    header: { type: 'header', format: 'flywheel.trajectory', schemaVersion: 1, attemptId, taskId: 't001', suite: SUITE, mode: 'strict', agent: { name: 'flywheel-agent', version: '1' }, model: { id: 'ck-a' }, policy: { checkpoint: 'ck-a' }, sampling: {}, limits: {}, tools: [], startedAt: at },
    steps: [
      { type: 'message', seq: 0, at, messageId: `${attemptId}:u0`, role: 'user', content: 'Fix add() in calc/add.py so the tests pass.' },
      {
        type: 'assistant',
        seq: 1,
        at,
        messageId: m1,
        turn: 1,
        content: 'Let me look at the file.',
        toolCalls: [{ id: 'call-1', name: 'bash', arguments: JSON.stringify({ command: 'cat calc/add.py' }) }],
        finishReason: 'tool_calls',
        model: 'ck-a',
        sampling: {},
        usage: { promptTokens: 120, completionTokens: 20 },
        timing: { startedAt: at, durationMs: 400, httpAttempts: 1 },
      },
      { type: 'tool_result', seq: 2, at, messageId: m1, toolCallId: 'call-1', name: 'bash', isError: false, content: 'def add(a, b):\n    return a - b\n', truncated: false, exitCode: 0, durationMs: 30 },
      {
        type: 'assistant',
        seq: 3,
        at,
        messageId: m2,
        turn: 2,
        content: '',
        toolCalls: [{ id: 'call-2', name: 'write_file', arguments: JSON.stringify({ path: 'tests/test_add.py', content: 'assert True\n' }) }],
        finishReason: 'tool_calls',
        model: 'ck-a',
        sampling: {},
        usage: { promptTokens: 160, completionTokens: 30 },
        timing: { startedAt: at, durationMs: 500, httpAttempts: 1 },
      },
      { type: 'tool_result', seq: 4, at, messageId: m2, toolCallId: 'call-2', name: 'write_file', isError: false, content: 'wrote tests/test_add.py', truncated: false, durationMs: 5 },
      { type: 'event', seq: 5, at, kind: 'test-file.edited', messageId: m2, message: 'the agent edited tests/test_add.py', detail: {} },
      { type: 'outcome', seq: 6, at, stopReason: { kind: 'submitted' }, limitsHit: [], turns: 2, usage: { promptTokens: 280, completionTokens: 50, cachedTokens: 0 }, outputBytes: 40, durationMs: 1200, diff: DIFF },
    ],
  };
}

/** Gives one failed strict attempt of ck-a on t001 what the harness stores for a graded attempt, and a decision record. */
async function enrichAttempt(side: LocalPorts): Promise<string> {
  const runs = new Set<string>();
  const plan = await side.blobs.get(sweepBlobKeys.plan('sw-1'));
  expect(plan, 'the sweep wrote its plan').toBeDefined();
  for (const s of JSON.parse(new TextDecoder().decode(plan!)).shards as Array<{ checkpoint: string; mode: string; arraySize: number; shardKey: string }>) {
    if (s.checkpoint !== 'ck-a' || s.mode !== 'strict') continue;
    const spec = JSON.parse(new TextDecoder().decode((await side.blobs.get(s.shardKey))!)) as { runId: string; shardCount: number };
    for (let i = 0; i < spec.shardCount; i++) runs.add(`${spec.runId}.shard-${i}`);
  }
  const records = (await Promise.all([...runs].map((r) => listAttemptRecords(side.records, r)))).flat();
  const target = records.find((r) => r.taskId === 't001' && r.mode === 'strict');
  expect(target, 'the scripted rollout wrote an attempt of t001').toBeDefined();
  const attempt = target!;
  const trajectoryKey = `trajectories/attempts/${attempt.attemptId}.jsonl`;
  const diffKey = `diffs/${attempt.attemptId}.patch`;
  await side.blobs.put(trajectoryKey, toJsonl(trajectoryOf(attempt.attemptId)));
  await side.blobs.put(diffKey, DIFF);
  const { pk: _pk, sk: _sk, ...fields } = attempt;
  await side.records.put(
    attemptRecord.encode({
      ...fields,
      status: 'failed',
      trajectoryKey,
      diffKey,
      turns: 2,
      durationMs: 1200,
      grade: {
        passed: false,
        reasons: ['fail-to-pass-failed: test_add_negative'],
        perTest: { 'tests/test_add.py::test_add': 'passed', 'tests/test_add.py::test_add_negative': 'failed' },
        counts: { passed: 1, failed: 1, skipped: 0, error: 0 },
        integrity: [{ kind: 'test-file-edit', file: 'tests/test_add.py', line: 1, evidence: 'assert True', source: 'diff' }],
        judgement: {
          judge: { name: 'code-review', version: '1' },
          criteria: [{ id: 'fixes-root-cause', verdict: 'fail', score: 0, reason: 'The test was weakened instead of fixing add.', evidence: [{ source: 'diff', quote: 'assert True' }] }],
          score: 0,
          calls: 1,
          usage: { promptTokens: 10, completionTokens: 5 },
          latencyMs: 20,
          complete: true,
        },
      },
    }),
  );
  await storeDecision(side.records, {
    decisionId: 'dec-00000000000000000001',
    trajectory: { blobKey: trajectoryKey, attemptId: attempt.attemptId, taskId: 't001', suite: SUITE, runId: attempt.runId, checkpoint: 'ck-a' },
    messageId: `${attempt.attemptId}:m2`,
    turn: 2,
    charSpan: { field: 'tool-name', toolCallId: 'call-2', start: 0, end: 10 },
    hintClass: 'sandbox-rules',
    hint: { text: 'Tests are the specification: change the code under test, never the tests.', by: 'rule' },
    insertion: { at: 'before-decision', role: 'user' },
    source: { kind: 'harness-event', eventKind: 'test-file.edited', eventSeq: 5 },
    leakage: { passed: true, findings: [], checkedAt: REQUESTED_AT },
    status: 'usable',
    lineage: { createdBy: 'test', createdAt: REQUESTED_AT, datasets: [] },
  });
  return attempt.attemptId;
}

/** An analysis of `experimentId`: treatment ahead on `accepted` by 10% [2%, 18%], the sample ratio as planned. */
function analysisOf(experimentId: string): ExperimentAnalysis {
  const at = new Date().toISOString();
  const comparison = {
    arm: 'treatment',
    control: 'control',
    difference: 0.04,
    relativeLift: 0.1,
    ci: { low: 0.02, high: 0.18 },
    sequentialCi: { low: 0.01, high: 0.2 },
    pValue: 0.01,
    adjustedPValue: 0.01,
    chanceToWin: 0.99,
    cuped: { applied: false, varianceReduction: null, theta: null },
    verdict: 'better' as const,
    rule: 'the always-valid interval excludes 0',
  };
  return {
    analysisId: 'an-1',
    experimentId,
    at,
    from: at,
    to: at,
    unitsPerArm: { control: 400, treatment: 404 },
    plannedUnitsPerArm: 500,
    progress: 0.8,
    srm: { expectedShares: { control: 0.5, treatment: 0.5 }, observedUnits: { control: 400, treatment: 404 }, chiSquared: 0.02, pValue: 0.89, mismatch: false },
    metrics: [
      {
        metric: 'accepted',
        role: 'primary',
        kind: 'binomial',
        direction: 'increase',
        displayScale: 100,
        arms: [
          { arm: 'control', units: 400, value: 0.4, se: 0.02 },
          { arm: 'treatment', units: 404, value: 0.44, se: 0.02 },
        ],
        comparisons: [comparison],
      },
    ],
    recommendation: { action: 'ship', arm: 'treatment', because: 'the primary metric is better and no guardrail is breached' },
    engine: 'duckdb',
    queryMs: 12,
  };
}

async function seed(): Promise<void> {
  const { side } = rt;
  // Task records as the forge leaves them, then the suite and two checkpoints through the API.
  await side.records.putMany(TASKS.map((t) => ({ ...registryKeys.task(SUITE, t), kind: 'forge-task', task: sampleTask(SUITE, t) })));
  await ok('POST', '/v1/suites', { id: SUITE, visibility: 'public', owner: 'evals', description: 'arithmetic fixes', tasks: { kind: 'records' }, taskIds: TASKS, saturationThreshold: 0.8 });
  for (const id of ['ck-a', 'ck-b']) await ok('POST', '/v1/checkpoints', { id, model: 'coder', serving: { kind: 'endpoint', model: `openai:${id}@http://127.0.0.1:9/v1` }, sweep: false });
  // The sweep, step by step as its state machine runs it, the rollout scripted.
  const steps = sweepStepHandlers({ settings: { ...STAGES.local.sweeps, saturationMinTasks: 1 }, notify: { log: () => {} } });
  const script = rateScript((ck, _suite, mode) => (RATES[ck] ?? 0) + (mode === 'lenient' ? 0.2 : 0));
  await driveSweep(steps, side, { sweepId: 'sw-1', trigger: 'manual', requestedAt: REQUESTED_AT, checkpoints: ['ck-a', 'ck-b'], suites: [SUITE] }, { script });
  richAttemptId = await enrichAttempt(side);
  // ck-a serves by default (as a shipped experiment leaves it).
  await setIncumbent(side.records, { checkpoint: 'ck-a', by: 'test' }, new Date());
  // An experiment (a draft) through the API.
  await ok('POST', '/v1/experiments', {
    id: 'exp-1',
    name: 'ck-b against ck-a',
    hypothesis: 'ck-b fixes more tasks without costing latency',
    arms: [
      { id: 'control', checkpoint: 'ck-a', control: true },
      { id: 'treatment', checkpoint: 'ck-b' },
    ],
    metrics: { primary: 'accepted', guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
    plannedUnitsPerArm: 500,
  });
  // A second one with a stored analysis snapshot, as the analysis leaves it.
  await ok('POST', '/v1/experiments', {
    id: 'exp-2',
    name: 'ck-b at half traffic',
    arms: [
      { id: 'control', checkpoint: 'ck-a', control: true },
      { id: 'treatment', checkpoint: 'ck-b' },
    ],
    metrics: { primary: 'accepted' },
    plannedUnitsPerArm: 500,
  });
  await side.records.put(analysisRecord.encode(analysisOf('exp-2')));
  // A training run with its metrics lines (as the trainer writes them).
  // Its heartbeat recent: the runtime's stall watch has nothing to report.
  const t0 = Date.now() - 60_000;
  await createRun(side, {
    runId: 'run-1',
    request: TrainingRunInputSchema.parse({ runId: 'run-1', base: 'tiny:0', dataset: { runs: ['sw-1'] }, trainer: { steps: 12 } }),
    status: 'training',
    createdAt: new Date(t0).toISOString(),
    updatedAt: new Date(t0).toISOString(),
    step: 9,
    lastHeartbeatAt: new Date(t0 + 9000).toISOString(),
  });
  const lines = Array.from({ length: 10 }, (_, step) => JSON.stringify({ step, at: new Date(t0 + step * 1000).toISOString(), loss: 3 / (step + 1), tokens: 512, decisionLoss: 2 - step * 0.1 }));
  await side.blobs.put(trainingRunKeys('run-1').metrics, `${lines.join('\n')}\n`);
}

/** The runtime's environment for this file: the scripted tasks' remote allowed, no schedules acting on their own. */
const ENV: Record<string, string> = { FLYWHEEL_TASK_SOURCES: 'https://example.invalid/*', FLYWHEEL_SCHEDULE: 'off' };
const previousEnv: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [name, value] of Object.entries(ENV)) {
    previousEnv[name] = process.env[name];
    process.env[name] = value;
  }
  const dataDir = tempDir();
  const runtime = await startLocalRuntime({ dataDir, port: 0, consumerThread: false, logger: new Logger({ serviceName: 'test', logLevel: 'ERROR' }) });
  const side = openLocalPorts(dataDir);
  rt = {
    url: runtime.url,
    apiKey: runtime.apiKey,
    side,
    async close() {
      side.close();
      await runtime.close();
    },
  };
  await seed();
}, RUNTIME_START_TIMEOUT_MS);

afterAll(async () => {
  await rt?.close();
  for (const [name, value] of Object.entries(previousEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Opens a console path signed in, and waits for its heading. */
async function openPage(path: string, heading: string | RegExp): Promise<ConsolePage> {
  const page = await browser.open(`${rt.url}/#${path}`, { apiKey: rt.apiKey });
  // A bound for a hang under the test's own, so a failure names the element it waited for.
  page.page.setDefaultTimeout(20_000);
  await page.page.getByRole('heading', { level: 1, name: heading }).waitFor();
  return page;
}

/** As the console writes a share: one decimal. */
const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

describe('console insights pages', () => {
  it('loads every insights page without errors, each showing its data', async () => {
    // The attempt viewer has its own test below.
    const visits: Array<[path: string, heading: string | RegExp, shows: string]> = [
      ['/results', 'Results', 'tr[data-checkpoint="ck-b"][data-suite="calc"]'],
      [`/attempts?suite=${SUITE}`, 'Attempts', 'tr[data-attempt]'],
      ['/suites', 'Suites', 'tr[data-suite="calc"] >> text=arithmetic fixes'],
      [`/suites/${SUITE}`, `Suite ${SUITE}`, '.useful-life'],
      ['/experiments', 'Experiments', 'tr[data-experiment="exp-1"] >> text=ck-b against ck-a'],
      ['/experiments/exp-1', 'Experiment exp-1', 'text=Not analysed yet'],
      ['/training', 'Training runs', 'tr[data-run="run-1"] >> text=9 of 12'],
      ['/training/run-1', 'Training run run-1', '[aria-label="decisionLoss curve"] svg'],
    ];
    for (const [path, heading, shows] of visits) {
      const page = await openPage(path, heading);
      await page.page.locator(shows).first().waitFor();
      expectClean(page);
      await page.close();
    }
  });

  it('shows strict beside lenient with their intervals, and a cell opens the attempts behind it', async () => {
    const { items } = await ok('GET', `/v1/results?suite=${SUITE}`);
    const strictA = items.find((r: any) => r.checkpoint === 'ck-a' && r.mode === 'strict');
    const lenientA = items.find((r: any) => r.checkpoint === 'ck-a' && r.mode === 'lenient');
    expect(strictA.score).toBe(0.3);
    expect(lenientA.score).toBe(0.5);
    const page = await openPage(`/results?suite=${SUITE}`, 'Results');
    const row = page.page.locator('tr[data-checkpoint="ck-a"]');
    await row.waitFor();
    expect(await row.locator('.score[data-mode="strict"]').textContent()).toBe(pct(strictA.score));
    expect(await row.locator('.score[data-mode="lenient"]').textContent()).toBe(pct(lenientA.score));
    expect(await row.locator('.interval[data-mode="strict"]').textContent()).toBe(`[${pct(strictA.ci.low)}, ${pct(strictA.ci.high)}]`);
    expect(await row.locator('.interval[data-mode="lenient"]').textContent()).toBe(`[${pct(lenientA.ci.low)}, ${pct(lenientA.ci.high)}]`);
    expect(strictA.ci.low).toBeLessThan(strictA.score);
    expect(await row.locator('.badge', { hasText: 'incumbent' }).count()).toBe(1);
    // The chart is drawn (ECharts renders into the chart element).
    await page.page.locator('[aria-label="results chart"] canvas, [aria-label="results chart"] svg').first().waitFor();
    // The checkpoint filter keeps its rows only.
    await page.page.getByLabel('checkpoint filter').selectOption('ck-b');
    await page.page.waitForURL(/checkpoint=ck-b/);
    // The unfiltered table (it has ck-b too) goes before the filtered one comes.
    await row.waitFor({ state: 'detached' });
    await page.page.locator('tr[data-checkpoint="ck-b"]').waitFor();
    expect(await page.page.locator('tr[data-checkpoint]').count()).toBe(1);
    await page.page.getByLabel('checkpoint filter').selectOption('');
    await row.locator('.score[data-mode="strict"]').click();
    await page.page.getByRole('heading', { level: 1, name: 'Attempts' }).waitFor();
    expect(page.page.url()).toContain('checkpoint=ck-a');
    const attemptRows = page.page.locator('tr[data-attempt]');
    await attemptRows.first().waitFor();
    // ck-a strict: one attempt per task, every one of the suite's tasks.
    expect(await attemptRows.count()).toBe(TASKS.length);
    expectClean(page);
  });

  it('opens an attempt with its trajectory, diff, tests, flags, judge and decision, and screenshots it', async () => {
    const page = await openPage(`/attempts?checkpoint=ck-a&suite=${SUITE}&mode=strict`, 'Attempts');
    await page.page.locator(`tr[data-attempt="${richAttemptId}"] a`).click();
    await page.page.getByRole('heading', { level: 1, name: /Attempt: t001/ }).waitFor();
    const p = page.page;
    // The diff: file headers, added and removed lines apart.
    await p.locator('.diff-file-header', { hasText: 'calc/add.py' }).waitFor();
    expect(await p.locator('.diff-add').allTextContents()).toEqual(['+    return a + b  # fixed by the agent', '+assert True']);
    expect(await p.locator('.diff-del').allTextContents()).toEqual(['-    return a - b', '-assert add(1, 2) == 3']);
    // Tests, pass or fail each.
    expect(await p.locator('tr[data-test="tests/test_add.py::test_add"]').getAttribute('data-outcome')).toBe('passed');
    expect(await p.locator('tr[data-test="tests/test_add.py::test_add_negative"]').getAttribute('data-outcome')).toBe('failed');
    // The integrity flag, the judge's criterion, the decision and its hint.
    await p.locator('tr[data-flag="test-file-edit"]', { hasText: 'assert True' }).waitFor();
    await p.locator('tr[data-criterion="fixes-root-cause"]', { hasText: 'weakened' }).waitFor();
    await p.locator('tr[data-decision="dec-00000000000000000001"]', { hasText: 'never the tests' }).waitFor();
    // The trajectory: tool calls with their names, arguments and results; the bad decision marked on its call.
    const write = p.locator('.tool-call[data-tool="write_file"]');
    await write.locator('.decision-note').waitFor();
    expect(await write.textContent()).toContain('tests/test_add.py');
    expect(await p.locator('.tool-call[data-tool="bash"]').textContent()).toContain('return a - b');
    await p.locator('.step-event', { hasText: 'test-file.edited' }).waitFor();
    const png = await p.screenshot({ fullPage: true });
    const image = PNG.sync.read(png);
    expect(image.width).toBeGreaterThan(0);
    expect(image.height).toBeGreaterThan(0);
    // Not a blank page: more than one colour.
    const first = image.data.readUInt32BE(0);
    let differs = false;
    for (let i = 4; i < image.data.length && !differs; i += 4) differs = image.data.readUInt32BE(i) !== first;
    expect(differs).toBe(true);
    expectClean(page);
  });

  it('shows the newest analysis of an experiment: lift with its interval per metric, the sample-ratio check, the recommendation', async () => {
    const page = await openPage('/experiments/exp-2', 'Experiment exp-2');
    const row = page.page.locator('tr[data-metric="accepted"]');
    await row.waitFor();
    expect(await row.locator('.lift').textContent()).toBe('+10.0% [+2.0%, +18.0%]');
    expect(await row.textContent()).toContain('treatment: 44 (404 units)');
    expect(await page.page.locator('.srm').textContent()).toContain('as expected (p = 0.89)');
    await page.page.getByText('recommends ship (arm treatment)').waitFor();
    await page.page.locator('[aria-label="lift by metric"] svg').waitFor();
    expectClean(page);
  });

  it('says so when a read-only key presses a decision button', async () => {
    const { key } = await createApiKey(rt.side.records, { tenant: DEFAULT_TENANT, scopes: ['read'], name: 'insights test reader' }, new Date());
    const page = await browser.open(`${rt.url}/#/experiments/exp-1`, { apiKey: key });
    page.page.setDefaultTimeout(20_000);
    page.page.on('dialog', (dialog) => void dialog.accept());
    await page.page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.page.locator('.action [role="alert"]', { hasText: /admin scope/ }).waitFor();
    expect((await ok('GET', '/v1/experiments/exp-1')).experiment.status).toBe('draft');
    // The refusal is the one error response the page saw.
    expect(page.failedRequests.map((r) => r.status)).toEqual([403]);
    expectClean(page, { allowStatuses: [403] });
  });

  it('starts an experiment from its page once the person confirms, and shows it running', async () => {
    const page = await openPage('/experiments/exp-1', 'Experiment exp-1');
    const asked: string[] = [];
    page.page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.page.getByText('Start: done').waitFor();
    await page.page.locator('.fields .badge', { hasText: 'running' }).waitFor();
    expect(asked).toEqual(['Start exp-1? Units get assigned to its arms.']);
    expect((await ok('GET', '/v1/experiments/exp-1')).experiment.status).toBe('running');
    expectClean(page);
  });

  it('shows a suite with its saturation and useful life, and retires it once the person confirms', async () => {
    const suite = await ok('GET', `/v1/suites/${SUITE}`);
    // ck-b's strict 60% is the suite's best.
    expect(suite.best).toMatchObject({ score: 0.6, checkpoint: 'ck-b' });
    const page = await openPage(`/suites/${SUITE}`, `Suite ${SUITE}`);
    const meter = page.page.locator('.saturation');
    await meter.waitFor();
    expect(await meter.getAttribute('data-best')).toBe('0.6');
    expect(await meter.getAttribute('data-threshold')).toBe('0.8');
    expect(await meter.textContent()).toBe('best 60.0% of 80% threshold');
    expect(await page.page.locator('.useful-life').textContent()).toMatch(/^Useful for .+ so far/);
    await page.page.locator('[aria-label="best strict score over time"] canvas, [aria-label="best strict score over time"] svg').first().waitFor();
    // Retiring asks for a reason, then a confirmation.
    const retire = page.page.getByRole('button', { name: 'Retire suite' });
    expect(await retire.isDisabled()).toBe(true);
    await page.page.getByLabel('retire reason').fill('replaced by calc-hard');
    const asked: string[] = [];
    page.page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await retire.click();
    await page.page.locator('.fields .badge', { hasText: 'retired' }).waitFor();
    expect(asked).toEqual([`Retire suite ${SUITE}? Sweeps stop running it; its results are kept.`]);
    expect(await ok('GET', `/v1/suites/${SUITE}`)).toMatchObject({ status: 'retired', retiredReason: 'replaced by calc-hard' });
    expect(await page.page.locator('.useful-life').textContent()).toMatch(/^Retired after .+ without saturating/);
    expectClean(page);
  });
});
