import type { HarnessMode } from '../harness/task/harness-mode.ts';
import type { SweepReport } from './schemas.ts';
import type { JudgedCell } from './get-sweep-report.ts';
import { formatPercent } from '../format-percent.ts';

const pct = formatPercent;

/** `62.0% [48.1–74.2] n=50`, or `—`. */
function scoreCell(r: SweepReport['results'][number] | undefined): string {
  if (!r || r.score === null) return r ? `not scored (${r.shardsFailed} failed shard${r.shardsFailed === 1 ? '' : 's'})` : '—';
  const ci = r.ci ? ` [${(r.ci.low * 100).toFixed(1)}–${(r.ci.high * 100).toFixed(1)}]` : '';
  return `${pct(r.score)}${ci} n=${r.n}${r.n < r.tasks ? `/${r.tasks}` : ''}`;
}

/**
 * The report as a plain-text table: one row per suite × checkpoint, strict beside lenient (score, 95% CI, tasks
 * scored), then the difference with the incumbent in strict mode (`too-few-tasks (n=…)` when it rests on too few tasks
 * for a verdict); failed shards, judge-graded cells' per-criterion pass rates, saturated suites and the minimum-sample
 * rules below.
 *
 * @example
 * process.stdout.write(formatReportTable(report));
 */
export function formatReportTable(report: SweepReport & { judged?: JudgedCell[] }): string {
  const header = ['suite', 'checkpoint', 'strict', 'lenient', 'vs incumbent (strict)'];
  const rows: string[][] = [];
  for (const { id: suite } of report.sweep.suites) {
    for (const checkpoint of report.sweep.checkpoints) {
      const find = (mode: HarnessMode) => report.results.find((r) => r.suite === suite && r.checkpoint === checkpoint && r.mode === mode);
      const c = report.comparisons.find((x) => x.suite === suite && x.checkpoint === checkpoint && x.mode === 'strict');
      const vs =
        !c ? '—'
        : c.difference === null ? c.verdict
        : `${c.difference >= 0 ? '+' : ''}${(c.difference * 100).toFixed(1)} pts [${(c.ci!.low * 100).toFixed(1)}, ${(c.ci!.high * 100).toFixed(1)}] vs ${c.incumbent}: ${c.verdict}${c.verdict === 'too-few-tasks' ? ` (n=${c.n})` : ''}`;
      rows.push([suite, checkpoint, scoreCell(find('strict')), scoreCell(find('lenient')), vs]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`;
  const s = report.sweep;
  let out = `sweep ${s.sweepId}: ${s.status} (${s.trigger}, requested ${s.requestedAt})`;
  out += s.shardCount !== undefined ? `, shards ${s.succeededShards ?? '?'}/${s.shardCount} succeeded` : '';
  out += s.attemptsPerTask !== undefined ? `, ${s.attemptsPerTask} attempt(s) per task\n\n` : '\n\n';
  out += line(header) + line(widths.map((w) => '-'.repeat(w)));
  for (const r of rows) out += line(r);
  if (report.failedShards.length > 0) out += `\nfailed shards: ${report.failedShards.map((f) => `${f.shardId} (${f.checkpoint} ${f.suite} ${f.mode}: ${f.error}${f.reason ? `: ${f.reason}` : ''})`).join(', ')}\n`;
  for (const j of report.judged ?? []) {
    out += `\nrubric criteria — ${j.suite} ${j.checkpoint} ${j.mode}: mean judge score ${j.judge.meanScore === null ? '—' : j.judge.meanScore.toFixed(2)} over ${j.judge.attempts} attempt(s)\n`;
    for (const [key, t] of Object.entries(j.judge.criteria).sort(([a], [b]) => a.localeCompare(b))) {
      out += `  ${key}: ${t.passRate === null ? '—' : pct(t.passRate)} passed of ${t.judged}${t.voided > 0 ? ` (${t.voided} voided)` : ''}${t.notApplicable > 0 ? ` (${t.notApplicable} n/a)` : ''}\n`;
    }
  }
  for (const x of report.saturated) {
    out += `\nsaturated: ${x.suite} (best strict ${pct(x.score)} by ${x.checkpoint}${x.usefulLifeDays !== undefined ? `, useful life ${x.usefulLifeDays} days` : ''}): retire it or forge harder tasks\n`;
  }
  if (report.rules) out += `\nrules: ${report.rules.verdict}.\n       ${report.rules.saturation}.\n`;
  return out;
}
