/**
 * The automatic sweep triggers: sweep ids derived from the trigger (so a repeated delivery starts one sweep), the
 * stage's Scheduler cron expression evaluated locally, and the local schedule firing with the scheduled time.
 */
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { nextScheduledTime, startLocalSweepSchedule, toCronParserExpression } from '../../lib/sweeps/workflow/local-sweep-schedule.ts';
import { checkpointSweepId, scheduledSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';

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
    expect(checkpointSweepId('x'.repeat(200)).length).toBeLessThanOrEqual(80);
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
    // Every minute, with a clock 150 ms before the next minute.
    const start = Date.now();
    const nextMinute = Math.ceil((start + 1) / 60_000) * 60_000;
    const offset = nextMinute - 150 - start;
    const schedule = startLocalSweepSchedule({ expression: 'cron(* * * * ? *)', timezone: 'UTC' }, async (at) => void fired.push(at.toISOString()), { now: () => new Date(Date.now() + offset) });
    expect(schedule.next().getTime()).toBe(nextMinute);
    await new Promise((r) => setTimeout(r, 600));
    schedule.stop();
    expect(fired).toEqual([new Date(nextMinute).toISOString()]);
    expect(schedule.next().getTime()).toBe(nextMinute + 60_000);
  });
});
