/**
 * Any API value rendered for a person, never as JSON: numbers rounded, times relative (exact on hover), booleans as
 * yes/no, lists of words joined, objects as a list of labelled fields, lists of objects as a table. Pages use it for
 * fields whose shape they do not know in advance (an overview section, a notice's fields).
 *
 * @example
 * <Value value={{ gpuHours: 12.3456, startedAt: '2026-12-04T08:00:00Z', tags: ['a', 'b'] }} />
 * // gpu hours 12.35 · started at 5 min ago · tags a, b
 * <FieldRows rows={[['Status', run.status], ['Step', formatNumber(run.step)]]} />
 */
import type { ComponentChildren } from 'preact';
import { formatNumber, humanize, isIsoTime } from './format.ts';
import { RelativeTime } from './relative-time.tsx';
import { DataTable, type Column } from './data-table.tsx';

type Plain = string | number | boolean | null | undefined;

const isPlain = (v: unknown): v is Plain => v === null || v === undefined || ['string', 'number', 'boolean'].includes(typeof v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One plain value as text or a time. */
export function PlainValue(props: { value: Plain }) {
  const v = props.value;
  if (v === null || v === undefined || v === '') return <span class="muted">—</span>;
  if (typeof v === 'number') return <span class="num">{formatNumber(v)}</span>;
  if (typeof v === 'boolean') return <span>{v ? 'yes' : 'no'}</span>;
  if (isIsoTime(v)) return <RelativeTime iso={v} />;
  return <span class="text">{v}</span>;
}

/** Columns for a list of objects: the union of their keys whose values are plain (first 12). */
export function autoColumns(rows: readonly Record<string, unknown>[]): Column<Record<string, unknown>>[] {
  const keys: string[] = [];
  for (const row of rows.slice(0, 50)) for (const k of Object.keys(row)) if (!keys.includes(k)) keys.push(k);
  return keys.slice(0, 12).map((key) => ({
    key,
    label: humanize(key),
    numeric: rows.some((r) => typeof r[key] === 'number'),
    value: (row) => {
      const v = row[key];
      return typeof v === 'number' || typeof v === 'string' ? v : undefined;
    },
    render: (row) => <Value value={row[key]} depth={2} />,
  }));
}

export function Value(props: { value: unknown; depth?: number }): ComponentChildren {
  const { value } = props;
  const depth = props.depth ?? 0;
  if (isPlain(value)) return <PlainValue value={value} />;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>;
    if (value.every(isPlain)) return <span class="text">{value.map((v) => (typeof v === 'number' ? formatNumber(v) : String(v ?? '—'))).join(', ')}</span>;
    if (value.every(isRecord) && depth < 3) return <DataTable rows={value} columns={autoColumns(value)} />;
    return <span class="muted">{value.length} items</span>;
  }
  if (isRecord(value)) {
    if (depth >= 3) return <span class="muted">{Object.keys(value).length} fields</span>;
    return <Fields record={value} depth={depth + 1} />;
  }
  return <span class="muted">—</span>;
}

/** A label and its value, one row of `FieldRows`. */
export type FieldRow = [label: string, value: ComponentChildren | undefined | null];

/** Labelled values as a `<dl>`, one row each; rows whose value is absent are left out. */
export function FieldRows(props: { rows: FieldRow[]; label?: string }) {
  const rows = props.rows.filter(([, v]) => v !== undefined && v !== null && v !== '');
  return (
    <dl class="fields" aria-label={props.label}>
      {rows.map(([label, value]) => (
        <div class="field" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A record as labelled fields (`<dl>`), optionally only some keys, in order. */
export function Fields(props: { record: Record<string, unknown>; only?: string[]; omit?: string[]; depth?: number; labels?: Record<string, string> }) {
  const keys = (props.only ?? Object.keys(props.record)).filter((k) => !(props.omit ?? []).includes(k) && props.record[k] !== undefined);
  if (keys.length === 0) return <span class="muted">nothing</span>;
  return <FieldRows rows={keys.map((k): FieldRow => [props.labels?.[k] ?? humanize(k), <Value value={props.record[k]} depth={props.depth ?? 1} />])} />;
}
