import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getSuite } from '../../lib/registry/get-suite.ts';
import { listSuites } from '../../lib/registry/list-suites.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

/** A real HTTP server standing in for Slack's incoming webhook: records every POST body. */
async function webhookServer(statuses: number[] = []): Promise<{ url: string; bodies: any[]; close(): Promise<void> }> {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      bodies.push(JSON.parse(data));
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'error');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T/B/x`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}

let fx: SweepFixture;
let hook: Awaited<ReturnType<typeof webhookServer>>;
beforeEach(async () => {
  hook = await webhookServer();
});
afterEach(async () => {
  fx?.close();
  await hook.close();
});

describe('check-saturation', () => {
  it('marks a suite saturated when the best strict score reaches the threshold, records its useful life, alerts once', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 20 });
    const created = (await getSuite(fx.ports.records, 'suite-0')).createdAt;
    fx.tick(30 * 24 * 3600 * 1000); // 30 days later
    const lines: string[] = [];
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { webhookUrl: hook.url, log: (l) => lines.push(l) } });
    // ck-1 passes 18/20 on suite-0 strict (0.9 = the default threshold, over the 20 tasks saturation needs); suite-1 stays at 0.5.
    const script = rateScript((ck, suite) => (suite === 'suite-0' ? (ck === 'ck-1' ? 0.9 : 0.4) : 0.5));
    const input = { sweepId: 's1', trigger: 'manual' as const, requestedAt: fx.clock.now.toISOString(), modes: ['strict' as const] };
    await driveSweep(steps, fx.ports, input, { script });

    const suite = await getSuite(fx.ports.records, 'suite-0');
    expect(suite).toMatchObject({ status: 'saturated', saturatedAt: fx.clock.now.toISOString(), usefulLifeDays: 30, best: { score: 0.9, checkpoint: 'ck-1', sweepId: 's1' } });
    expect(Date.parse(suite.saturatedAt!) - Date.parse(created)).toBe(30 * 24 * 3600 * 1000);
    expect((await getSuite(fx.ports.records, 'suite-1')).status).toBe('active');
    expect((await listSuites(fx.ports, { status: 'saturated' })).items.map((s) => s.id)).toEqual(['suite-0']);

    const saturated = fx.events.filter((e) => e.type === 'suite.saturated');
    expect(saturated).toHaveLength(1);
    expect(saturated[0]).toMatchObject({ id: 'suite.saturated:suite-0:v1', detail: { suite: 'suite-0', score: 0.9, threshold: 0.9, checkpoint: 'ck-1', usefulLifeDays: 30 } });
    // Slack got the alert (and the sweep summary), through a real HTTP POST.
    const alert = hook.bodies.find((b) => b.text.includes('saturated'));
    expect(alert.text).toContain('Suite suite-0 v1 is saturated: best strict score 90.0% ≥ 90.0%');
    expect(JSON.stringify(alert.blocks)).toContain('retire it');
    expect(JSON.stringify(alert.blocks)).toContain('forge harder tasks');
    expect(hook.bodies.some((b) => b.text.includes('Sweep s1 succeeded'))).toBe(true);
    expect(lines.some((l) => JSON.parse(l).title?.startsWith('Suite suite-0 v1 is saturated'))).toBe(true);

    // Re-running the sweep answers the same and alerts no second time.
    const before = hook.bodies.filter((b) => b.text.includes('is saturated')).length;
    const again = await steps['check-saturation'](fx.ports, { sweepId: 's1' });
    expect(again).toEqual({ newlySaturated: ['suite-0'], threshold: 0.9 });
    expect(hook.bodies.filter((b) => b.text.includes('is saturated')).length).toBe(before);
    expect(fx.events.filter((e) => e.type === 'suite.saturated')).toHaveLength(1);
  });

  it('the threshold comes from the settings (or the suite), and the best-score series is kept per sweep', async () => {
    fx = openSweepFixture({ settings: { saturationThreshold: 0.95 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const script = rateScript(() => 0.9);
    const r = await steps['validate-sweep'](fx.ports, { sweepId: 's1', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] });
    expect(r.sweepId).toBe('s1');
    await driveSweep(steps, fx.ports, { sweepId: 's1', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script });
    expect((await getSuite(fx.ports.records, 'suite-0')).status).toBe('active');
    fx.tick(86_400_000);
    await driveSweep(steps, fx.ports, { sweepId: 's2', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script: rateScript(() => 1) });
    const suite = await getSuite(fx.ports.records, 'suite-0');
    expect(suite).toMatchObject({ status: 'saturated', usefulLifeDays: 1, best: { score: 1, sweepId: 's2' } });
    const points = await fx.ports.records.query({ partition: 'SUITE#suite-0', sort: { beginsWith: 'BEST#' } });
    expect(points.items.map((p) => [p.sweepId, p.score])).toEqual([['s1', 0.9], ['s2', 1]]);
    // No webhook configured for these steps: nothing was posted.
    expect(hook.bodies).toEqual([]);
  });

  it('a cell that lost shards does not count: a perfect score on half a suite saturates nothing', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 10 } });
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    // ck-0 passes everything, but the second shard of its cell fails; ck-1 passes half, every shard aggregated.
    const script = rateScript((ck) => (ck === 'ck-0' ? 1 : 0.5));
    const input = { sweepId: 'p1', trigger: 'manual' as const, requestedAt: fx.clock.now.toISOString(), modes: ['strict' as const] };
    const { notice } = await driveSweep(steps, fx.ports, input, { script, failShard: (shard) => shard.checkpoint === 'ck-0' && shard.shardId.endsWith('-1') });
    expect(notice).toMatchObject({ status: 'partial', failedShards: 1 });
    const suite = await getSuite(fx.ports.records, 'suite-0');
    expect(suite.status).toBe('active');
    expect(suite.best).toMatchObject({ checkpoint: 'ck-1', score: 0.5 });
    expect(fx.events.filter((e) => e.type === 'suite.saturated')).toEqual([]);
  });
});
