/**
 * What the classifier benches share: a labelled record's text as the pipeline sees it, and the metrics table both
 * `eval:classifier` and the chain evaluation print. A module of its own, so the bench entry points import it and never
 * each other.
 *
 * @example
 * const oracle = new Map(heldout.map((r) => [textOf(r), r.modes]));
 * console.log(formatMetrics('Local classifier', multiLabelMetrics(gold, predicted, modes)).join('\n'));
 */
import type { MultiLabelMetrics } from '../../lib/modes/classifier/classification-metrics.ts';
import type { LabelledRecord } from '../../lib/modes/classifier/labelled-set.ts';
import { signalText } from '../../lib/modes/classifier/signal-text.ts';

/** The text the classifier reads for a labelled record (title and body, as a stored signal gives them). */
export const textOf = (r: LabelledRecord): string => signalText({ title: r.title, body: r.text }) ?? r.text;

export const pct = (x: number): string => `${(100 * x).toFixed(1)}%`.padStart(6);
export const num = (x: number): string => x.toFixed(3);

export function formatMetrics(title: string, m: MultiLabelMetrics): string[] {
  const lines = [title, `  ${'mode'.padEnd(32)} precision  recall     F1  support`];
  for (const s of m.perMode) lines.push(`  ${s.mode.padEnd(32)}     ${num(s.precision)}   ${num(s.recall)}  ${num(s.f1)}  ${String(s.support).padStart(7)}`);
  lines.push(`  ${'micro'.padEnd(32)}     ${num(m.micro.precision)}   ${num(m.micro.recall)}  ${num(m.micro.f1)}  ${String(m.items).padStart(7)} items`);
  lines.push(`  ${'macro'.padEnd(32)}     ${num(m.macro.precision)}   ${num(m.macro.recall)}  ${num(m.macro.f1)}`);
  lines.push(`  exact label set: ${pct(m.exactMatch)}`);
  return lines;
}
