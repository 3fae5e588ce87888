/**
 * The console's shell in headless Chromium against a real local runtime (in-process, temp data folder, port 0): the
 * runtime builds the console at start and serves it at `/` without a key, while the API still refuses calls without
 * one. Every shell page loads without page errors; a bad key is refused at sign-in; a key without the read scope is
 * told which scope it lacks; a person labels a review-queue item and an annotation item by keyboard and the labels
 * are stored (read back through the API); the overview's screenshot is a PNG; the asset route refuses traversal.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { startLocalRuntime, type LocalRuntime } from '../../lib/local/runtime.ts';
import { usageSliceRecord } from '../../lib/compute/record-codecs.ts';
import { reviewItemRecord } from '../../lib/modes/record-codecs.ts';
import { raiseNotice } from '../../lib/people/notices/raise-notice.ts';
import { expectClean, useBrowser, type ConsolePage } from '../support/browser.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { RUNTIME_START_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

const tempDir = tempDirs('flywheel-console-shell-');
const browser = useBrowser();
let rt: LocalRuntime;
let side: LocalPorts;
let dataDir: string;
const MODEL = 'ck-console';

async function api(method: string, path: string, body?: unknown, key = rt.apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${rt.url}${path}`, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** A raw GET whose path is sent as written (fetch would normalise `..`). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(rt.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A comment stored through the API, and the review item the chain would have queued for it. */
async function seedReviewItem(comment: string): Promise<string> {
  const event = liveFeedbackEvent({ model: MODEL, kind: 'comment', rating: 'down', comment });
  expect((await api('POST', '/v1/feedback', { events: [event] })).status).toBe(202);
  const eventId = event.eventId as string;
  await waitFor(async () => ((await api('GET', `/v1/feedback/${eventId}`)).status === 200 ? true : undefined), { what: `feedback ${eventId} stored` });
  const signalKey = `feedback:${eventId}`;
  const now = new Date().toISOString();
  await side.records.put(
    reviewItemRecord.encode({
      signalKey,
      status: 'pending',
      reason: 'local-unsure',
      detail: 'local confidence 0.41 < 0.60 and no judge is promoted or configured',
      model: MODEL,
      receivedAt: now,
      signalKind: 'comment',
      rating: 'down',
      excerpt: comment,
      suggested: [{ mode: 'scope-calibration', probability: 0.41 }],
      suggestedBy: 'local',
      createdAt: now,
    }),
  );
  return signalKey;
}

beforeAll(async () => {
  dataDir = tempDir();
  rt = await startLocalRuntime({ dataDir, port: 0, consumerThread: false, logger: new Logger({ serviceName: 'test', logLevel: 'ERROR' }) });
  side = openLocalPorts(dataDir);
}, RUNTIME_START_TIMEOUT_MS);

afterAll(async () => {
  side?.close();
  await rt?.close();
});

async function openSignedIn(path: string, heading: string | RegExp): Promise<ConsolePage> {
  const page = await browser.open(`${rt.url}/#${path}`, { apiKey: rt.apiKey });
  await page.page.getByRole('heading', { level: 1, name: heading }).waitFor();
  return page;
}

describe('the console shell', () => {
  it('serves the page and its files without a key, while the API still answers 403 without one', async () => {
    expect((await api('GET', '/v1/suites', undefined, '')).status).toBe(403);
    const home = await fetch(`${rt.url}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(home.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await home.text();
    const script = /src="(console\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${rt.url}/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');

    const page = await browser.open(`${rt.url}/`);
    await page.page.getByLabel('API key').waitFor();
    expect(await page.page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
    expectClean(page);
  });

  it('refuses traversal on the asset route: nothing outside the build comes back', async () => {
    const key = readFileSync(join(dataDir, 'api-key'), 'utf8').trim();
    for (const path of ['/console/..%2F..%2Fapi-key', '/console/..%2Fapi-key', '/console/%2e%2e%2fapi-key', '/console/.api-key', '/console/../api-key', '/console/..%5Capi-key']) {
      const res = await rawGet(path);
      expect([400, 403, 404], path).toContain(res.status);
      expect(res.body, path).not.toContain(key);
    }
    expect([400, 404]).toContain((await rawGet('/console/api-key')).status);
  });

  it('says so when a bad key signs in, and signs in and out with the right one', async () => {
    const page = await browser.open(`${rt.url}/`);
    await page.page.getByLabel('API key').fill('fw_not-a-key');
    await page.page.getByRole('button', { name: 'Sign in' }).click();
    await page.page.getByRole('alert').getByText(/That key was refused: Forbidden: invalid API key/).waitFor();
    expectClean(page, { allowStatuses: [403] });

    await page.page.getByLabel('API key').fill(rt.apiKey);
    await page.page.getByRole('button', { name: 'Sign in' }).click();
    await page.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.page.getByRole('link', { name: 'Sign out' }).click();
    await page.page.getByLabel('API key').waitFor();
    expect(await page.page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it('tells a key without the read scope which scope it lacks', async () => {
    const ingestOnly = 'fwtest_ingest_only_key_0123456789';
    await createApiKey(side.records, { tenant: 'default', scopes: ['ingest'], name: 'ingest only', key: ingestOnly }, new Date());
    const page = await browser.open(`${rt.url}/#/feedback`, { apiKey: ingestOnly });
    await page.page.getByRole('heading', { level: 1, name: 'Feedback' }).waitFor();
    await page.page.getByText('This key lacks the read scope').waitFor();
    expect(await page.page.getByRole('alert').innerText()).toContain('needs the read scope');
    expectClean(page, { allowStatuses: [403] });
  });

  it('loads every shell page without page errors, each with its heading', async () => {
    await seedReviewItem('It edited files I never mentioned.');
    const visits: Array<[string, string]> = [
      ['/', 'Overview'],
      ['/feedback', 'Feedback'],
      ['/failure-modes', 'Failure modes'],
      ['/review', 'Review queue'],
      ['/annotations', 'Annotation queue'],
      ['/notices', 'Notices'],
      ['/compute', 'Compute'],
      ['/jobs', 'Jobs'],
    ];
    for (const [path, heading] of visits) {
      const page = await openSignedIn(path, heading);
      // Each page leaves its loading state (data, an empty state or an explained error).
      await page.page.locator('.loading').first().waitFor({ state: 'detached', timeout: 20_000 });
      expect(page.pageErrors, path).toEqual([]);
      expectClean(page);
    }
    // The feedback explorer lists the stored comment; a row opens the event.
    const feedback = await openSignedIn('/feedback', 'Feedback');
    await feedback.page.getByRole('cell', { name: 'It edited files I never mentioned.' }).click();
    await feedback.page.getByRole('heading', { level: 1, name: /^Feedback e/ }).waitFor();
    expect(await feedback.page.locator('.fields').innerText()).toContain(MODEL);
    expectClean(feedback);
  });

  it('a person labels a review-queue item by keyboard, and the label is stored', async () => {
    const signalKey = await seedReviewItem('It rewrote the whole module when I asked for one rename.');
    const page = await openSignedIn('/review', 'Review queue');
    const item = page.page.locator(`.queue-item[data-item="${signalKey}"]`);
    // Items queue oldest first: move to ours with j.
    for (let i = 0; i < 10 && !(await item.isVisible()); i++) await page.page.keyboard.press('j');
    await item.waitFor();
    await page.page.getByLabel('Labelling as').fill('ana');
    await item.focus();
    await page.page.keyboard.press('0'); // no failure mode…
    await page.page.keyboard.press('u'); // …undone
    await page.page.keyboard.press('1'); // the suggested mode
    await page.page.locator('.choices li.picked', { hasText: 'scope-calibration' }).waitFor();
    expect(await page.page.locator('.choices li.picked').count()).toBe(1);
    await page.page.keyboard.press('Enter');
    await expect.poll(() => page.page.locator('.status-line').innerText(), { timeout: 15_000 }).toBe(`Labelled ${signalKey}: scope-calibration.`);
    // The next item (if any) has focus, not the labelled one.
    expect(await item.count()).toBe(0);

    const done = await waitFor(
      async () => {
        const r = await api('GET', '/v1/review-queue?status=done');
        return (r.body.items as Array<{ signalKey: string; resolvedBy?: string; resolution?: string[] }>).find((i) => i.signalKey === signalKey);
      },
      { what: 'the review item resolved' },
    );
    expect(done).toMatchObject({ resolvedBy: 'ana', resolution: ['scope-calibration'] });
    expectClean(page);

    // The label counts: the failure-mode timeline of the checkpoint draws it.
    const modes = await openSignedIn(`/failure-modes?checkpoint=${MODEL}`, 'Failure modes');
    const chart = modes.page.getByRole('img', { name: `Failure-mode rates of ${MODEL} per day` });
    await chart.locator('svg').waitFor();
    expect(await chart.locator('svg').innerHTML()).toContain('scope-calibration');
    expectClean(modes);
  });

  it('a person labels an annotation item by keyboard, with an undo, and the labels are stored', async () => {
    const queued = await api('POST', '/v1/annotations', { subject: { kind: 'attempt', runId: 'sw-console', attemptId: 'a-1' }, reason: 'production-sample', queue: 'console-test', labels: ['correctness', 'tests-pass'] });
    expect(queued.status).toBe(201);
    const id = queued.body.item.id as string;
    const page = await openSignedIn('/annotations?queue=console-test', 'Annotation queue');
    const item = page.page.locator(`.queue-item[data-item="${id}"]`);
    await item.waitFor();
    await page.page.getByLabel('Labelling as').fill('ben');
    await item.focus();
    await page.page.keyboard.press('1'); // correctness: pass
    await page.page.keyboard.press('3'); // tests-pass: not-applicable…
    await page.page.keyboard.press('u'); // …undone: tests-pass is highlighted again
    await page.page.keyboard.press('2'); // tests-pass: fail
    await page.page.keyboard.press('Enter');
    await expect.poll(() => page.page.locator('.status-line').innerText(), { timeout: 15_000 }).toBe('Labelled attempt a-1 of run sw-console.');
    await page.page.getByText('No pending annotation items in console-test.').waitFor();

    const stored = await api('GET', '/v1/annotations?status=done&queue=console-test');
    expect(stored.body.items).toEqual([expect.objectContaining({ id, annotator: 'ben', labels: { correctness: 'pass', 'tests-pass': 'fail' } })]);
    expectClean(page);
  });

  it('shows compute per category: cost per day stacked by category, and the totals', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const slices = [
      { jobId: 'j-train-1', category: 'training' as const, runId: 'run-console', day: yesterday, seconds: 7200, gpuHours: 16, cpuHours: 96, costUsd: 52.5 },
      { jobId: 'j-train-1', category: 'training' as const, runId: 'run-console', day: today, seconds: 3600, gpuHours: 8, cpuHours: 48, costUsd: 26.25 },
      { jobId: 'j-eval-1', category: 'evaluation' as const, runId: 'sw-console', day: today, seconds: 1800, gpuHours: 0, cpuHours: 4, costUsd: 0.8 },
    ];
    await side.records.putMany(slices.map((slice) => usageSliceRecord.encode(slice)));
    const page = await openSignedIn('/compute', 'Compute');
    const chart = page.page.getByRole('img', { name: 'Compute cost per day by category' });
    await chart.locator('svg').waitFor();
    const svg = await chart.locator('svg').innerHTML();
    expect(svg).toContain('training');
    expect(svg).toContain('evaluation');
    const training = page.page.getByRole('row', { name: /^training/ });
    expect(await training.innerText()).toMatch(/training\s+24\s+144\s+\$78\.75\s+1/);
    expectClean(page);
  });

  it('a person acknowledges a notice and answers a decision from the notices page', async () => {
    const suite = await api('POST', '/v1/suites', { id: 'console-suite', visibility: 'private', owner: 'evals', description: 'a saturated suite', tasks: { kind: 'records' }, taskIds: ['t1', 't2'] });
    expect(suite.status).toBe(201);
    // Delivered to the log only (no Slack, no topic), and quietly.
    const noDelivery = { log: () => {} };
    const failure = await raiseNotice(side, { dedupKey: 'console.test:failure', kind: 'failure', severity: 'alert', title: 'Sweep sw-console failed', text: 'shard 3 exited 137 (out of memory)\nsecond line', source: { capability: 'sweeps', runKind: 'sweep', runId: 'sw-console' }, fields: { shard: 3, exitCode: 137 } }, noDelivery);
    const decision = await raiseNotice(side, { dedupKey: 'console.test:retire', kind: 'decision', severity: 'warning', title: 'Retire suite console-suite?', text: 'Saturated: every checkpoint passes it.', source: { capability: 'registry' }, actions: [{ id: 'retire', label: 'Retire the suite', style: 'danger', operation: { kind: 'retire-suite', suiteId: 'console-suite' } }] }, noDelivery);
    const page = await openSignedIn('/notices', 'Notices');
    const failureCard = page.page.locator(`article[data-notice="${failure.notice.noticeId}"]`);
    expect(await failureCard.innerText()).toContain('shard 3 exited 137 (out of memory)');
    await failureCard.getByRole('button', { name: 'Acknowledge' }).click();
    await failureCard.getByText(/^Acknowledged by/).waitFor();
    const decisionCard = page.page.locator(`article[data-notice="${decision.notice.noticeId}"]`);
    await decisionCard.getByRole('button', { name: 'Retire the suite' }).click();
    await decisionCard.getByText(/^Resolved by/).waitFor();

    expect((await api('GET', `/v1/notices/${failure.notice.noticeId}`)).body.notice).toMatchObject({ status: 'acknowledged' });
    expect((await api('GET', `/v1/notices/${decision.notice.noticeId}`)).body.notice).toMatchObject({ status: 'resolved', resolution: { actionId: 'retire' } });
    expect((await api('GET', '/v1/suites/console-suite')).body).toMatchObject({ status: 'retired' });
    expectClean(page);
  });

  it('takes a screenshot of the overview: a non-empty PNG', async () => {
    const page = await openSignedIn('/', 'Overview');
    await page.page.locator('.loading').first().waitFor({ state: 'detached', timeout: 20_000 });
    const file = join(tempDir(), 'overview.png');
    const png = await page.page.screenshot({ path: file, fullPage: true });
    const written = readFileSync(file);
    expect(written.length).toBeGreaterThan(5_000);
    expect(written.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(Buffer.compare(written, png)).toBe(0);
    expectClean(page);
  });

  it('shows the keyboard help on ?, and a page that does not exist says so', async () => {
    const page = await openSignedIn('/', 'Overview');
    await page.page.keyboard.press('?');
    await page.page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.page.keyboard.press('Escape');
    expect(await page.page.getByRole('dialog').count()).toBe(0);
    await page.page.keyboard.press('g');
    await page.page.keyboard.press('n');
    await page.page.getByRole('heading', { level: 1, name: 'Notices' }).waitFor();
    await page.page.goto(`${rt.url}/#/no-such-page`);
    await page.page.getByText('No page at /no-such-page').waitFor();
    expectClean(page);
  });
});
