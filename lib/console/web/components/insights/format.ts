/**
 * How the insights pages write numbers and times for a person: rounded percentages, intervals as `[low, high]`, short
 * dates in UTC, durations in words. One place, so every page rounds the same way.
 *
 * @example
 * percent(0.4234);                         // '42.3%'
 * interval({ low: 0.31, high: 0.55 });     // '[31.0%, 55.0%]'
 */
import type { Interval } from './api-views.ts';

/** A share in [0, 1] as a percentage with one decimal; '—' when absent. */
export function percent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${(value * 100).toFixed(digits)}%`;
}

/** A signed percentage (a lift): '+3.2%' / '−1.0%'. */
export function signedPercent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const text = `${Math.abs(value * 100).toFixed(digits)}%`;
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : text;
}

/** An interval of shares as `[low, high]` in percent; '—' when absent. */
export function interval(ci: Interval | null | undefined, options: { signed?: boolean } = {}): string {
  if (!ci) return '—';
  const f = options.signed ? signedPercent : percent;
  return `[${f(ci.low)}, ${f(ci.high)}]`;
}

/** A number rounded for reading: integers with thousands separators, others to 3 significant digits. */
export function num(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs === 0) return '0';
  return Number(value.toPrecision(3)).toString();
}

/** An ISO time as `2026-12-04 10:05 UTC`; '—' when absent or unreadable. */
export function when(iso: string | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Milliseconds in words: '850 ms', '12.3 s', '4 min 10 s', '2 h 5 min'. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Days as '12.5 days' (or '1 day'). */
export function days(value: number | undefined): string {
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
