import { afterEach, describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { checkStalledRuns } from '../../lib/people/heartbeats/check-stalled-runs.ts';
import { recordHeartbeat } from '../../lib/people/heartbeats/record-heartbeat.ts';
import { startLocalNotices } from '../../lib/people/notices/local/local-notices.ts';
import { listNotices } from '../../lib/people/notices/notice-store.ts';
import type { NoticeDeliveryOptions } from '../../lib/people/notices/raise-notice.ts';
import { ValidationError } from '../../lib/errors.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-heartbeats-');
let ports: LocalPorts;
let clock: { now: Date };
afterEach(() => ports?.close());

const MINUTE = 60_000;
const settings = STAGES.local.notices;
const lines: string[] = [];
const options: NoticeDeliveryOptions = { log: (l) => lines.push(l) };

function open(): void {
  clock = { now: new Date('2026-12-04T12:00:00.000Z') };
  ports = openLocalPorts(tempDir(), { now: () => clock.now });
}
const tick = (ms: number) => (clock.now = new Date(clock.now.getTime() + ms));

describe('heartbeats and stalls', () => {
  it('a silent run is reported stalled once, per the window of its kind; heartbeats resuming resolve it; finishing ends the watch', async () => {
    open();
    await recordHeartbeat(ports.records, { runKind: 'sweep', runId: 'sw-1', stage: 'aggregate-shard', progress: { done: 1, total: 4 } }, clock.now);
    await recordHeartbeat(ports.records, { runKind: 'derivation', runId: 'd-1', stage: 'collect-teacher' }, clock.now);
    expect(await checkStalledRuns(ports, settings, options)).toEqual({ stalled: [], watched: 2 });

    // 91 minutes: past the sweep's 90-minute window, inside the derivation's 180.
    tick(91 * MINUTE);
    expect(await checkStalledRuns(ports, settings, options)).toEqual({ stalled: ['sweep:sw-1'], watched: 2 });
    tick(10 * MINUTE);
    expect(await checkStalledRuns(ports, settings, options)).toEqual({ stalled: [], watched: 2 });
    let { notices } = await listNotices(ports.records, { kind: 'stall' });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      dedupKey: 'stall:sweep:sw-1',
      status: 'open',
      occurrences: 1,
      link: '/attempts?sweep=sw-1',
      source: { runKind: 'sweep', runId: 'sw-1' },
      fields: { stage: 'aggregate-shard', progress: '1/4' },
    });
    expect(notices[0]!.title).toBe('sweep sw-1 stalled: no heartbeat for 91 min');

    // Heartbeats resume: the stall is resolved.
    const resumed = await recordHeartbeat(ports.records, { runKind: 'sweep', runId: 'sw-1', stage: 'aggregate-shard', progress: { done: 2, total: 4 } }, clock.now);
    expect(resumed.resolvedStall).toBe(notices[0]!.noticeId);
    ({ notices } = await listNotices(ports.records, { kind: 'stall' }));
    expect(notices[0]).toMatchObject({ status: 'resolved', resolution: { by: 'heartbeat', outcome: 'Heartbeats resumed (aggregate-shard, 2/4).' } });

    // The derivation is past its window now (181 minutes); the sweep, which beat 80 minutes ago, is not.
    tick(80 * MINUTE);
    expect((await checkStalledRuns(ports, settings, options)).stalled).toEqual(['derivation:d-1']);
    // The run finishes: its stall is resolved and its watch ends.
    const finished = await recordHeartbeat(ports.records, { runKind: 'derivation', runId: 'd-1', stage: 'report-derivation', finished: true }, clock.now);
    expect(finished.resolvedStall).toBeDefined();
    expect((await listNotices(ports.records, { kind: 'stall', status: 'resolved' })).notices.map((n) => n.resolution?.outcome)).toEqual([
      'The run finished (report-derivation).',
      'Heartbeats resumed (aggregate-shard, 2/4).',
    ]);
    expect((await checkStalledRuns(ports, settings, options)).watched).toBe(1);
    // Only the first stall of each silence was logged as a notice.
    expect(lines.filter((l) => (JSON.parse(l) as { message: string }).message === 'notice')).toHaveLength(2);
  });

  it('refuses a malformed heartbeat naming the field', async () => {
    open();
    const error = await recordHeartbeat(ports.records, { runKind: 'sweep', runId: '', stage: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['runId']);
  });

  it('the local notices schedule runs the stall check for every tenant', async () => {
    open();
    await recordHeartbeat(ports.records, { runKind: 'derivation', runId: 'd-1', stage: 'calibrate-prompted' }, clock.now);
    tick(181 * MINUTE);
    const notices = startLocalNotices(ports, { schedule: false, delivery: options });
    try {
      const ticks = await notices.tick();
      expect(ticks).toEqual([{ tenant: 'default', stalled: ['derivation:d-1'], delivered: [] }]);
    } finally {
      await notices.close();
    }
  });
});
