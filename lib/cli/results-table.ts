import type { Result } from '../registry/schemas.ts';
import { formatPercentInterval } from './format.ts';
import { table } from './table.ts';

/** One cell's score as a person reads it: `66.7% [41.2–85.3]`, or `-` when nothing was scored. */
export function scoreText(r: Result | undefined): string {
  if (!r) return '';
  if (r.score === null) return '-';
  return formatPercentInterval(r.score, r.ci?.low, r.ci?.high);
}

/** The newest row of each checkpoint × suite × mode (rows come oldest first). */
export function newestResults(rows: Result[]): Result[] {
  const newest = new Map<string, Result>();
  for (const r of rows) {
    const key = `${r.checkpoint}\u0000${r.suite}\u0000${r.mode}`;
    const seen = newest.get(key);
    if (!seen || seen.at.localeCompare(r.at) <= 0) newest.set(key, r);
  }
  return [...newest.values()];
}

/**
 * Results as checkpoint × suite rows, strict beside lenient, each a percentage with its 95% interval; the tasks scored
 * of the tasks planned, and the sweep (and time) of the newest result. With `history`, one row per sweep.
 *
 * @example
 * process.stdout.write(formatResultsTable(items));
 * // checkpoint  suite  strict              lenient              tasks  sweep  at
 * // ck-1        smoke  66.7% [20.8–93.9]   100.0% [43.9–100.0]  3/3    s1     2026-12-02T10:00:00Z
 */
export function formatResultsTable(rows: Result[], options: { history?: boolean } = {}): string {
  const chosen = options.history ? rows : newestResults(rows);
  const groups = new Map<string, { checkpoint: string; suite: string; sweepId: string; at: string; strict?: Result; lenient?: Result }>();
  for (const r of chosen) {
    const key = `${r.checkpoint}\u0000${r.suite}${options.history ? `\u0000${r.sweepId}` : ''}`;
    const g = groups.get(key) ?? { checkpoint: r.checkpoint, suite: r.suite, sweepId: r.sweepId, at: r.at };
    g[r.mode] = r;
    if (r.at.localeCompare(g.at) > 0) Object.assign(g, { sweepId: r.sweepId, at: r.at });
    groups.set(key, g);
  }
  const ordered = [...groups.values()].sort((a, b) => a.suite.localeCompare(b.suite) || a.checkpoint.localeCompare(b.checkpoint) || a.at.localeCompare(b.at));
  const tasks = (g: { strict?: Result; lenient?: Result }) => {
    const r = g.strict ?? g.lenient;
    return r ? `${r.n}/${r.tasks}` : '';
  };
  return table(
    ['checkpoint', 'suite', 'strict', 'lenient', 'tasks', 'sweep', 'at'],
    ordered.map((g) => [g.checkpoint, g.suite, scoreText(g.strict), scoreText(g.lenient), tasks(g), g.sweepId, g.at.replace(/\.\d+Z$/, 'Z')]),
  );
}
