/**
 * A stage's schedule run inside the local runtime: the same Scheduler expression the CDK app deploys (e.g.
 * `cron(0 2 * * ? *)`: `sweepSchedule`, `experiments.schedule` in `lib/config/stages.ts`), evaluated with
 * `cron-parser`, firing with the scheduled time as EventBridge Scheduler would. The sweeps' and the experiments' local
 * schedules are both this; `FLYWHEEL_SCHEDULE=off` turns them off (their callers check it).
 *
 * @example
 * const schedule = startCronSchedule({ expression: 'cron(0 2 * * ? *)', timezone: 'UTC' }, (at) => fire(at));
 * schedule.stop();
 */
import { CronExpressionParser } from 'cron-parser';
import { ValidationError } from '../errors.ts';

export interface CronScheduleSpec {
  /** `cron(minutes hours day-of-month month day-of-week year)`, as EventBridge Scheduler reads it. */
  expression: string;
  timezone: string;
}

/**
 * `cron(min hour dom month dow year)` (Scheduler) → the five-field expression cron-parser reads, and its year field.
 * `path` names the setting in the error (`sweepSchedule.expression`).
 */
export function toCronParserExpression(expression: string, path = 'sweepSchedule.expression'): { cron: string; year: string } {
  const match = /^cron\((.*)\)$/.exec(expression.trim());
  const fields = match?.[1]?.trim().split(/\s+/) ?? [];
  if (fields.length !== 6) {
    throw new ValidationError(`schedule ${JSON.stringify(expression)}: want cron(minutes hours day-of-month month day-of-week year)`, [{ path, message: 'Scheduler cron expression' }]);
  }
  const [minute, hour, dom, month, dow, year] = fields as [string, string, string, string, string, string];
  return { cron: [minute, hour, dom === '?' ? '*' : dom, month, dow === '?' ? '*' : dow].join(' '), year };
}

/** The next time the expression fires after `after`. */
export function nextScheduledTime(schedule: CronScheduleSpec, after: Date, path = 'sweepSchedule.expression'): Date {
  const { cron, year } = toCronParserExpression(schedule.expression, path);
  const interval = CronExpressionParser.parse(cron, { currentDate: after, tz: schedule.timezone });
  for (let i = 0; i < 1000; i++) {
    const next = interval.next().toDate();
    if (year === '*' || year.split(',').includes(String(next.getUTCFullYear()))) return next;
  }
  throw new ValidationError(`schedule ${schedule.expression} never fires`, [{ path, message: 'no next time' }]);
}

export interface CronSchedule {
  /** When it fires next. */
  next(): Date;
  stop(): void;
}

/** Fires `fire(scheduledTime)` at each time of the expression, until stopped (a timer per firing, unref'd). */
export function startCronSchedule(
  schedule: CronScheduleSpec,
  fire: (scheduledTime: Date) => Promise<void>,
  options: { now?: () => Date; onError?: (error: unknown) => void; path?: string } = {},
): CronSchedule {
  const now = options.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let upcoming = nextScheduledTime(schedule, now(), options.path);
  const arm = () => {
    if (stopped) return;
    // setTimeout holds at most 2^31 − 1 ms (~24.8 days): re-arm in steps for anything later.
    const wait = Math.min(Math.max(0, upcoming.getTime() - now().getTime()), 2 ** 31 - 1);
    timer = setTimeout(() => {
      if (now().getTime() < upcoming.getTime()) return arm();
      const at = upcoming;
      upcoming = nextScheduledTime(schedule, at, options.path);
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
