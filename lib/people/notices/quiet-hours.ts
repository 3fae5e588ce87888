/**
 * Quiet hours: the stage's `notices.quietHours` (`{ start: 'HH:MM', end: 'HH:MM', timeZone }`, e.g. 22:00–07:00
 * Europe/Paris). An `info` or `warning` notice raised inside them waits until they end; an `alert` never waits.
 */
import type { NoticeSettings } from '../../config/stages.ts';

export type QuietHours = NonNullable<NoticeSettings['quietHours']>;

const DAY_MINUTES = 24 * 60;

function minutesOf(hhmm: string): number {
  const match = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!match) throw new Error(`quiet hours: "${hhmm}" is not HH:MM`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/** Minutes since midnight and seconds into the minute of `now` in `timeZone`. */
function clockIn(now: Date, timeZone: string): { minutes: number; seconds: number } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { minutes: part('hour') * 60 + part('minute'), seconds: part('second') + now.getUTCMilliseconds() / 1000 };
}

/**
 * When the quiet hours that hold `now` end, or undefined outside them (or without quiet hours). Hours that wrap past
 * midnight (22:00–07:00) are understood; start = end means none.
 *
 * @example
 * quietUntil(new Date('2026-12-04T23:30:00Z'), { start: '22:00', end: '07:00', timeZone: 'UTC' }); // 2026-12-05T07:00:00Z
 */
export function quietUntil(now: Date, quietHours: QuietHours | undefined): Date | undefined {
  if (!quietHours) return undefined;
  const start = minutesOf(quietHours.start);
  const end = minutesOf(quietHours.end);
  if (start === end) return undefined;
  const { minutes, seconds } = clockIn(now, quietHours.timeZone);
  const inside = start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
  if (!inside) return undefined;
  const untilEnd = (end - minutes + DAY_MINUTES) % DAY_MINUTES;
  return new Date(now.getTime() + (untilEnd * 60 - seconds) * 1000);
}
