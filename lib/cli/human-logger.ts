import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import { cellText } from './format.ts';

/** Attributes every log line carries that a person at a terminal does not need. */
const NOISE = new Set(['level', 'message', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id']);

/**
 * The local runtime's logger for a person at a terminal: `08:26:25 INFO local runtime ready url=… dataDir=…` lines
 * (on stderr) in place of JSON; `flywheel start` uses it when stdout is a terminal (`--log-format json` keeps JSON,
 * the format the AWS functions log and the tests read).
 *
 * @example
 * const logger = new HumanLogger({ serviceName: 'flywheel-local', logLevel: 'INFO' });
 */
export class HumanLogger extends Logger {
  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    const a = log.getAttributes() as Record<string, unknown>;
    process.stderr.write(`${humanLogLine(a)}\n`);
  }

  override createChild(options: ConstructorParameters<typeof Logger>[0] = {}): HumanLogger {
    return super.createChild(options) as HumanLogger;
  }
}

/**
 * One log record as a line: time, level, message, then the other attributes as `key=value` (never JSON).
 *
 * @example
 * humanLogLine({ level: 'INFO', message: 'ready', timestamp: '2026-12-04T08:26:25.920Z', url: 'http://x' });
 * // '08:26:25 INFO ready url=http://x'
 */
export function humanLogLine(a: Record<string, unknown>): string {
  const time = typeof a.timestamp === 'string' ? (a.timestamp.slice(11, 19) || a.timestamp) : '';
  const rest = Object.fromEntries(Object.entries(a).filter(([k]) => !NOISE.has(k)));
  const extra = Object.keys(rest).length ? ` ${cellText(rest)}` : '';
  return `${time} ${String(a.level ?? '')} ${cellText(a.message)}${extra}`.trim();
}
