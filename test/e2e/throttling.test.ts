/**
 * The usage-plan throttle of the local runtime over real HTTP: a key over its burst gets 429 with Retry-After,
 * and nothing it sent before the limit is lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';

let dataDir: string;
let rt: RuntimeProcess;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'flywheel-throttle-'));
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_RATE_LIMIT: '2', FLYWHEEL_BURST_LIMIT: '5' } });
});

afterAll(async () => {
  await rt?.stop('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('throttling', () => {
  it('answers 429 with Retry-After once a key passes its burst, and accepts again later', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    let throttledBody: Record<string, unknown> | undefined;
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${rt.url}/v1/feedback`, {
        method: 'POST',
        headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(liveFeedbackEvent()),
      });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        throttledBody = (await res.json()) as Record<string, unknown>;
      } else await res.body?.cancel();
    }
    // The burst of 5 is accepted; the rest of a tight loop of 12 is refused.
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(throttledBody?.error).toMatch(/Throttl/);

    await new Promise((r) => setTimeout(r, Number(retryAfter) * 1000 + 100));
    const again = await fetch(`${rt.url}/v1/feedback`, {
      method: 'POST',
      headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(liveFeedbackEvent()),
    });
    expect(again.status).toBe(202);
  });
});
