/**
 * Dollars with cents, thousands grouped, as the CLI and the console both write money; '—' when absent. Browser-safe
 * (no Node imports): the console bundles it.
 *
 * @example
 * formatUsd(1234.5); // '$1,234.50'
 */
export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}
