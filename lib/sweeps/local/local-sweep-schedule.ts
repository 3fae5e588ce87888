/**
 * The stage's sweep schedule, run by the local runtime: the same Scheduler expression the CDK app deploys
 * (`sweepSchedule` in `lib/config/stages.ts`, e.g. `cron(0 2 * * ? *)`), evaluated with `cron-parser`, firing
 * `startSweepFromTrigger` with the scheduled time as EventBridge Scheduler would. `FLYWHEEL_SCHEDULE=off` turns it off.
 *
 * @example
 * const schedule = startLocalSweepSchedule({ expression: 'cron(0 2 * * ? *)', timezone: 'UTC' }, (at) => fire(at));
 * schedule.stop();
 */
import { CronExpressionParser } from 'cron-parser';
import { ValidationError } from '../../errors.ts';

/** `cron(min hour dom month dow year)` (Scheduler) → the five-field expression cron-parser reads, and its year field. */
export function toCronParserExpression(expression: string): { cron: string; year: string } {
  const match = /^cron\((.*)\)$/.exec(expression.trim());
  const fields = match?.[1]?.trim().split(/\s+/) ?? [];
  if (fields.length !== 6) {
    throw new ValidationError(`schedule ${JSON.stringify(expression)}: want cron(minutes hours day-of-month month day-of-week year)`, [{ path: 'sweepSchedule.expression', message: 'Scheduler cron expression' }]);
  }
  const [minute, hour, dom, month, dow, year] = fields as [string, string, string, string, string, string];
  return { cron: [minute, hour, dom === '?' ? '*' : dom, month, dow === '?' ? '*' : dow].join(' '), year };
}

/** The next time the expression fires after `after`. */
export function nextScheduledTime(schedule: { expression: string; timezone: string }, after: Date): Date {
  const { cron, year } = toCronParserExpression(schedule.expression);
  const interval = CronExpressionParser.parse(cron, { currentDate: after, tz: schedule.timezone });
  for (let i = 0; i < 1000; i++) {
    const next = interval.next().toDate();
    if (year === '*' || year.split(',').includes(String(next.getUTCFullYear()))) return next;
  }
  throw new ValidationError(`schedule ${schedule.expression} never fires`, [{ path: 'sweepSchedule.expression', message: 'no next time' }]);
}

export interface LocalSweepSchedule {
  /** When it fires next. */
  next(): Date;
  stop(): void;
}

/** Fires `fire(scheduledTime)` at each time of the expression, until stopped (a timer per firing, unref'd). */
export function startLocalSweepSchedule(
  schedule: { expression: string; timezone: string },
  fire: (scheduledTime: Date) => Promise<void>,
  options: { now?: () => Date; onError?: (error: unknown) => void } = {},
): LocalSweepSchedule {
  const now = options.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let upcoming = nextScheduledTime(schedule, now());
  const arm = () => {
    if (stopped) return;
    // setTimeout holds at most 2^31 − 1 ms (~24.8 days): re-arm in steps for anything later.
    const wait = Math.min(Math.max(0, upcoming.getTime() - now().getTime()), 2 ** 31 - 1);
    timer = setTimeout(() => {
      if (now().getTime() < upcoming.getTime()) return arm();
      const at = upcoming;
      upcoming = nextScheduledTime(schedule, at);
      fire(at).catch((error: unknown) => options.onError?.(error));
      arm();
    }, wait);
    timer.unref();
  };
  arm();
  return {
    next: () => upcoming,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
