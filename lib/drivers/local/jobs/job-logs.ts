/**
 * Job logs on disk: `job-logs/<jobId>.log`, one line per output line of the job (all attempts, oldest first),
 * prefixed with its epoch-millisecond timestamp; this file writes them and pages through them.
 *
 * @example
 * const { lines, nextToken } = readJobLog(jobLogFile(logsDir, jobId), { limit: 100 });
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../../../errors.ts';
import type { JobLogLine } from '../../../ports/jobs.ts';

/** The most one page reads, in lines and in bytes. */
const MAX_LINES = 10_000;
const MAX_BYTES = 4 * 1024 * 1024;

/** The log file of one leaf job (a single job or one child of an array). */
export function jobLogFile(logsDir: string, leafId: string): string {
  return join(logsDir, `${leafId.replace(/[^A-Za-z0-9:_-]/g, '_')}.log`);
}

/**
 * Lines of a log file after byte offset `nextToken`. The answer's `nextToken` is the offset after the last line
 * returned; it comes back whenever the file exists, so a caller can follow a running job.
 */
export function readJobLog(file: string, options: { nextToken?: string; limit?: number }): { lines: JobLogLine[]; nextToken?: string } {
  if (!existsSync(file)) return { lines: [] };
  const start = options.nextToken === undefined ? 0 : Number(options.nextToken);
  if (!Number.isInteger(start) || start < 0) throw new ValidationError(`bad nextToken "${options.nextToken}"`, [{ path: 'nextToken', message: 'a token from an earlier call' }]);
  const limit = Math.max(1, Math.min(options.limit ?? MAX_LINES, MAX_LINES));
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(Math.max(0, size - start), MAX_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, start);
    const lines: JobLogLine[] = [];
    let offset = 0;
    while (lines.length < limit) {
      const end = buffer.indexOf(10, offset);
      if (end < 0) break;
      const text = buffer.toString('utf8', offset, end);
      const space = text.indexOf(' ');
      lines.push({ timestamp: Number(text.slice(0, space)), message: text.slice(space + 1) });
      offset = end + 1;
    }
    return { lines, nextToken: String(start + offset) };
  } finally {
    closeSync(fd);
  }
}

/** Splits one output stream into lines written to `log` with their timestamp; `flush` writes an unfinished last line. */
export function timestampedLines(log: WriteStream, now: () => number): { write: (chunk: Buffer) => void; flush: () => void } {
  let partial = '';
  return {
    write: (chunk) => {
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      const ts = now();
      for (const line of parts) log.write(`${ts} ${line}\n`);
    },
    flush: () => {
      if (partial !== '') log.write(`${now()} ${partial}\n`);
      partial = '';
    },
  };
}
