/**
 * How the console writes values for a person: numbers rounded, times in UTC and relative, words for booleans. One
 * place, so every shell page rounds the same way.
 *
 * @example
 * formatNumber(0.123456); // '0.123'
 * formatNumber(12345.6);  // '12,346'
 * relativeTime('2026-12-04T08:00:00Z', new Date('2026-12-04T08:05:00Z')); // '5 min ago'
 */

/** Integers with separators, others to 3 significant digits (never more than 2 decimals above 1). */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 1) return String(Math.round(value * 100) / 100);
  return String(Number(value.toPrecision(3)));
}

/** A share in [0, 1] as a percentage with one decimal. */
export function formatPercent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(digits)}%`;
}

/** Dollars with cents. */
export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** Whether a string is an ISO date-time (shown as a time, not as text). */
export function isIsoTime(value: string): boolean {
  return ISO_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/** `2026-12-04 10:05 UTC`; the input itself when it is not a time. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** `just now`, `5 min ago`, `3 h ago`, `2 days ago`, `in 4 min`. */
export function relativeTime(iso: string, now: Date = new Date()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const seconds = Math.round((now.getTime() - t) / 1000);
  const abs = Math.abs(seconds);
  const say = (n: number, unit: string) => (seconds >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (abs < 45) return 'just now';
  if (abs < 3600) return say(Math.round(abs / 60), 'min');
  if (abs < 86_400) return say(Math.round(abs / 3600), 'h');
  const days = Math.round(abs / 86_400);
  return say(days, days === 1 ? 'day' : 'days');
}

/** A field name as words: `gpuHours` → `gpu hours`, `created_at` → `created at`. */
export function humanize(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
}
