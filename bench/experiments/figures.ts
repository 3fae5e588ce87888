/**
 * The numbers the experiments benchmark prints: percentiles, medians, formatting and a plain text table.
 *
 * @example
 * printTable(['what', 'p50 µs'], [['assignUnit', fmt(percentile(samples, 50), 2)]]);
 */

/** The value at percentile `p` (0–100) of `xs` (nearest rank); NaN for no samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = Float64Array.from(xs).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The median of `xs` (nearest rank, as `percentile(xs, 50)`). */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** A number with thousands separators and a fixed number of decimals; `–` for NaN and infinities. */
export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '–';
}

/** `a / b` as `1.23×`. */
export function ratio(a: number, b: number, digits = 2): string {
  return `${fmt(a / b, digits)}×`;
}

/** A table: the first column left-aligned, the others right-aligned, a rule under the header. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Progress on stderr (the figures go to stdout). */
export function progress(message: string): void {
  process.stderr.write(`[bench:experiments] ${message}\n`);
}
