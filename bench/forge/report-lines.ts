/**
 * A forge run's report (`lib/forge/report/forge-report.ts`: the spread per file, strategy and visibility, and the
 * failing-share histogram) as the few lines the benchmark prints.
 */
import type { ForgeReport, SpreadRow } from '../../lib/forge/report/forge-report.ts';

function rows(list: readonly SpreadRow[], limit = 12): string {
  const shown = list.slice(0, limit).map((r) => `${r.key} ${r.certified}/${r.tried}`);
  return [...shown, ...(list.length > limit ? [`… ${list.length - limit} more`] : [])].join(', ') || '-';
}

/**
 * @example
 * for (const line of reportLines(await forgeReport(ports.records, result.runId))) console.log(line);
 */
export function reportLines(report: ForgeReport): string[] {
  const s = report.spread;
  return [
    `verdicts: ${report.reasons.map((r) => `${r.verdict} ${r.count}`).join(', ')}`,
    `per file (certified/tried): ${rows(s.byFile)}`,
    `per strategy: ${rows(s.byStrategy)} · public/private: ${rows(s.byVisibility)}`,
    `failing share of the stable tests (certified/tried): ${s.failingShare.map((r) => `${r.key} ${r.certified}/${r.tried}`).join(', ')}${s.failingShareUnmeasured ? `, unmeasured ${s.failingShareUnmeasured}` : ''}`,
    `certified tasks cover ${s.byFile.filter((r) => r.certified > 0).length} file(s) of ${s.byFile.length} tried; ${report.refused} candidate(s) refused before a run`,
  ];
}
