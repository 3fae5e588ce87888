/**
 * A fraction as people read it in tables, alerts and notices: one decimal, a dash when there is no value.
 *
 * @example
 * formatPercent(0.9);  // '90.0%'
 * formatPercent(null); // '—'
 */
export function formatPercent(x: number | null | undefined, missing = '—'): string {
  return x === null || x === undefined ? missing : `${(x * 100).toFixed(1)}%`;
}
