/**
 * The CLI's plain aligned text table, shared by every command that lists rows. A cell is cut at 60 characters so one
 * long value (a message body, a reason) does not push the other columns off the screen.
 *
 * @example
 * process.stdout.write(table(['keyId', 'tenant'], [['k1', 'acme']]));
 * // keyId  tenant
 * // -----  ------
 * // k1     acme
 */
const MAX_CELL = 60;

export function table(columns: string[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => Math.min(MAX_CELL, (r[i] ?? '').length))));
  const line = (cells: string[]) => cells.map((c, i) => c.slice(0, MAX_CELL).padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
