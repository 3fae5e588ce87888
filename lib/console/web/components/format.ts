/**
 * How the console writes values for a person: numbers rounded, percentages and intervals, money, times in UTC and
 * relative, durations in words. One place, so every page rounds the same way.
 *
 * @example
 * formatNumber(0.123456);                       // '0.123'
 * formatNumber(12345.6);                        // '12,346'
 * formatNumber(44.037, 3);                      // '44'
 * formatInterval({ low: 0.31, high: 0.55 });    // '[31.0%, 55.0%]'
 * relativeTime('2026-12-04T08:00:00Z', new Date('2026-12-04T08:05:00Z')); // '5 min ago'
 */

/** An interval of shares (a confidence interval's bounds). */
export interface ShareInterval {
  low: number;
  high: number;
}

/**
 * Integers with separators; others above 1000 rounded; others to 3 significant digits below 1 and, above 1, to 2
 * decimals, or to `significant` digits when given.
 */
export function formatNumber(value: number | null | undefined, significant?: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 1 && significant === undefined) return String(Math.round(value * 100) / 100);
  return String(Number(value.toPrecision(significant ?? 3)));
}

/** A share in [0, 1] as a percentage with one decimal; '—' when absent. */
export function formatPercent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(digits)}%`;
}

/** A signed percentage (a lift): '+3.2%' / '−1.0%'. */
export function formatSignedPercent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const text = `${Math.abs(value * 100).toFixed(digits)}%`;
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : text;
}

/** An interval of shares as `[low, high]` in percent; '—' when absent. */
export function formatInterval(ci: ShareInterval | null | undefined, options: { signed?: boolean } = {}): string {
  if (!ci) return '—';
  const f = options.signed ? formatSignedPercent : formatPercent;
  return `[${f(ci.low)}, ${f(ci.high)}]`;
}

/** Dollars with cents (the CLI writes money the same way). */
export { formatUsd } from '../../../shared/format-usd.ts';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** Whether a string is an ISO date-time (shown as a time, not as text). */
export function isIsoTime(value: string): boolean {
  return ISO_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/** `2026-12-04 10:05 UTC`; '—' when absent; the input itself when it is not a time. */
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

/** Milliseconds in words: '850 ms', '12.3 s', '4 min 10 s', '2 h 5 min'. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Days as '12.5 days' (or '1 day'). */
export function formatDays(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  const rounded = value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded} ${rounded === 1 ? 'day' : 'days'}`;
}

/** A console link (`#/attempts?checkpoint=x`) to a path with query parameters, the empty ones left out. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

/** A field name as words: `gpuHours` → `gpu hours`, `created_at` → `created at`. */
export function humanize(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
}
