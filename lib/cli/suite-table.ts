/**
 * Plain-text views of suites for `flywheel suite list|show`: aligned tables, scores as percentages, days to two
 * decimals.
 */
import type { Suite, SuiteDetail } from '../registry/schemas.ts';
import { table } from './table.ts';
import { formatPercent } from '../format-percent.ts';

type SuiteRow = Omit<Suite, 'taskIds'>;

const pct = (x: number | undefined) => formatPercent(x);

/**
 * One row per suite: id, version, visibility, status, tasks, owner, created, best strict score (and by whom),
 * useful life (creation → saturation; `—` while not saturated).
 *
 * @example
 * process.stdout.write(formatSuiteList(items));
 */
export function formatSuiteList(items: SuiteRow[]): string {
  if (items.length === 0) return 'no suites\n';
  return table(
    ['suite', 'version', 'visibility', 'status', 'tasks', 'owner', 'created', 'best strict', 'useful life'],
    items.map((s) => [
      s.id,
      `v${s.version}`,
      s.visibility,
      s.status,
      String(s.taskCount),
      s.owner,
      s.createdAt,
      s.best ? `${pct(s.best.score)} ${s.best.checkpoint}` : '—',
      s.usefulLifeDays !== undefined ? `${s.usefulLifeDays} days` : '—',
    ]),
  );
}

/**
 * The suite's fields, its useful life, and its best strict score per sweep (oldest first), the all-time best marked.
 *
 * @example
 * process.stdout.write(formatSuiteDetail(detail));
 */
export function formatSuiteDetail(d: SuiteDetail): string {
  const life = d.usefulLife;
  let out = `suite ${d.id} v${d.version}: ${d.status} (${d.visibility === 'private' ? 'private, held out' : 'public'})\n`;
  out += `owner ${d.owner}; ${d.taskCount} task(s) from ${d.tasks.kind}${d.tasks.kind === 'blobs' ? ` ${d.tasks.prefix}` : d.tasks.kind === 'folder' ? ` ${d.tasks.path}` : ''}`;
  out += d.saturationThreshold !== undefined ? `; saturates at ${pct(d.saturationThreshold)} strict\n` : '\n';
  if (d.description) out += `${d.description}\n`;
  out += `created ${life.startedAt}`;
  out +=
    life.endedBy === 'saturation' ? `; saturated ${life.endedAt}: useful life ${life.days} days\n`
    : life.endedBy === 'retirement' ? `; retired before saturating, ${life.endedAt}: useful life ${life.days} days\n`
    : `; useful for ${life.days} days so far (not saturated)\n`;
  if (d.status === 'retired') out += `retired ${d.retiredAt ?? '?'}${d.retiredBy ? ` by ${d.retiredBy}` : ''}: ${d.retiredReason ?? 'no reason recorded'}\n`;
  out += d.best ? `best strict: ${pct(d.best.score)} by ${d.best.checkpoint} in sweep ${d.best.sweepId} (${d.best.at})\n` : 'best strict: none yet\n';
  out += '\n';
  if (d.bestScores.length === 0) return `${out}best strict score over time: no sweep has scored it yet\n`;
  out += 'best strict score over time:\n';
  const top = Math.max(...d.bestScores.map((p) => p.score));
  out += table(
    ['at', 'sweep', 'version', 'checkpoint', 'best strict'],
    d.bestScores.map((p) => [p.at, p.sweepId, `v${p.suiteVersion}`, p.checkpoint, `${pct(p.score)}${p.score === top ? '  ← best' : ''}`]),
  );
  return out;
}
