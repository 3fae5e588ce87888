/**
 * The automatic sweep triggers: sweep ids derived from the trigger (so a repeated delivery starts one sweep), the
 * stage's Scheduler cron expression evaluated locally, and the local schedule firing with the scheduled time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { nextScheduledTime, startCronSchedule, toCronParserExpression } from '../../lib/shared/cron-schedule.ts';
import { checkpointSweepId, scheduledSweepId, startSweepFromTrigger } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { waitFor } from '../support/wait-for.ts';

describe('sweep ids from triggers', () => {
  it('a schedule firing names the sweep after its day', () => {
    expect(scheduledSweepId('2026-12-02T02:00:00Z')).toBe('nightly-20261202');
    expect(scheduledSweepId('2026-12-02T02:00:00.000Z')).toBe(scheduledSweepId('2026-12-02T02:00:00Z'));
    expect(() => scheduledSweepId('yesterday')).toThrow(/not a time/);
  });

  it('a checkpoint names its sweep: readable, within the id alphabet, distinct for ids that differ only in punctuation', () => {
    const a = checkpointSweepId('coder-7b:step-1200');
    const b = checkpointSweepId('coder-7b/step-1200');
    expect(a).toMatch(/^checkpoint-coder-7b-step-1200-[0-9a-f]{8}$/);
    expect(b).not.toBe(a);
    expect(checkpointSweepId('coder-7b:step-1200')).toBe(a);
    // 76: room for the continuations `<id>.r2` … `.r21` within Step Functions' 80 characters.
    expect(checkpointSweepId('x'.repeat(200)).length).toBeLessThanOrEqual(76);
  });
});

describe('a trigger whose sweep cannot start', () => {
  let fx: SweepFixture | undefined;
  afterEach(() => fx?.close());

  it('is refused, not thrown: sweep.refused names what is wrong, once per sweep id, and nothing is started', async () => {
    fx = openSweepFixture();
    const started: string[] = [];
    const workflows = {
      start: async (_workflow: string, { name }: { name: string }) => (started.push(name), { executionId: name }),
      describe: async () => {
        throw new Error('not described');
      },
      stop: async () => undefined,
    };
    const ports = { ...fx.ports, workflows };
    const nightly = await startSweepFromTrigger(ports, { trigger: 'schedule', scheduledTime: '2026-12-03T02:00:00Z' }, fx.settings);
    expect(nightly).toEqual({
      refused: {
        sweepId: 'nightly-20261203',
        trigger: 'schedule',
        message: expect.stringContaining('no active checkpoint is registered'),
        issues: expect.arrayContaining([{ path: 'checkpoints', message: 'none given and no active checkpoint is registered' }]),
      },
    });
    const gone = await startSweepFromTrigger(ports, { 'detail-type': 'checkpoint.registered', detail: { checkpointId: 'ck-gone' } }, fx.settings);
    expect(gone).toMatchObject({ refused: { sweepId: checkpointSweepId('ck-gone'), trigger: 'checkpoint', issues: expect.arrayContaining([{ path: 'checkpoints[0]', message: 'no checkpoint ck-gone is registered' }]) } });
    expect(started).toEqual([]);
    const refusals = fx.events.filter((e) => e.type === 'sweep.refused');
    expect(refusals.map((e) => e.id)).toEqual([expect.stringMatching(/^sweep\.refused:nightly-20261203:[0-9a-f]{8}$/), expect.stringMatching(new RegExp(`^sweep\\.refused:${checkpointSweepId('ck-gone')}:[0-9a-f]{8}$`))]);
    // Delivered again for the same reason: the same event id (one notice); for another reason: a new one.
    const again = await startSweepFromTrigger(ports, { trigger: 'schedule', scheduledTime: '2026-12-03T02:00:00Z' }, fx.settings);
    expect(again).toEqual(nightly);
    expect(fx.events.filter((e) => e.type === 'sweep.refused').at(-1)!.id).toBe(refusals[0]!.id);
    // An event that is no trigger is still an error (a bug upstream, not a request to refuse).
    await expect(startSweepFromTrigger(ports, { hello: 'world' } as never, fx.settings)).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
  });
});

describe('local schedule', () => {
  it('reads the Scheduler cron syntax of the stage settings', () => {
    expect(toCronParserExpression('cron(0 2 * * ? *)')).toEqual({ cron: '0 2 * * *', year: '*' });
    expect(toCronParserExpression('cron(15 10 ? * MON-FRI *)')).toEqual({ cron: '15 10 * * MON-FRI', year: '*' });
    expect(() => toCronParserExpression('rate(1 day)')).toThrow(/want cron/);
    const schedule = STAGES.local.sweepSchedule;
    expect(nextScheduledTime(schedule, new Date('2026-12-02T01:59:00Z')).toISOString()).toBe('2026-12-02T02:00:00.000Z');
    expect(nextScheduledTime(schedule, new Date('2026-12-02T02:00:00Z')).toISOString()).toBe('2026-12-03T02:00:00.000Z');
    expect(nextScheduledTime({ expression: 'cron(0 9 * * ? *)', timezone: 'Europe/Paris' }, new Date('2026-12-02T00:00:00Z')).toISOString()).toBe('2026-12-02T08:00:00.000Z');
    expect(nextScheduledTime({ expression: 'cron(0 0 1 1 ? 2028)', timezone: 'UTC' }, new Date('2026-12-02T00:00:00Z')).toISOString()).toBe('2028-01-01T00:00:00.000Z');
  });

  it('fires with the scheduled time, then arms the next one; stop ends it', async () => {
    const fired: string[] = [];
    // Every minute, with a clock that reads 150 ms before a minute when the schedule first looks at it and then runs
    // as real time does (so the timer really waits), however long the machine took to get here.
    const nextMinute = Date.parse('2026-12-02T10:00:00.000Z');
    let firstRead: number | undefined;
    const now = () => {
      firstRead ??= Date.now();
      return new Date(nextMinute - 150 + (Date.now() - firstRead));
    };
    const schedule = startCronSchedule({ expression: 'cron(* * * * ? *)', timezone: 'UTC' }, async (at) => void fired.push(at.toISOString()), { now });
    expect(schedule.next().getTime()).toBe(nextMinute);
    await waitFor(() => (fired.length > 0 ? true : undefined), { what: 'the schedule to fire', everyMs: 10 });
    schedule.stop();
    expect(fired).toEqual([new Date(nextMinute).toISOString()]);
    expect(schedule.next().getTime()).toBe(nextMinute + 60_000);
  });
});
