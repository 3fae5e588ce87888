/**
 * The console's table: sortable columns (click a header; again to reverse), long and multi-line text wrapped inside
 * its cell, numbers rounded and right-aligned, an empty state that says what is missing, and optional row selection
 * (a click, or the keyboard on the queue pages).
 *
 * @example
 * <DataTable rows={jobs} rowKey={(j) => j.jobId} empty="No jobs yet."
 *   columns={[{ key: 'name', label: 'Job', value: (j) => j.name }, { key: 'cost', label: 'Cost', numeric: true, value: (j) => j.costUsd }]} />
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { formatNumber, isIsoTime } from './format.ts';
import { RelativeTime } from './relative-time.tsx';

export interface Column<T> {
  key: string;
  label: string;
  /** The sort key and, without `render`, what the cell shows (numbers rounded, times relative). */
  value?: (row: T) => string | number | boolean | null | undefined;
  render?: (row: T) => ComponentChildren;
  numeric?: boolean;
  /** Default true when `value` is given. */
  sortable?: boolean;
  /** A column of long text (comments, messages): given room and wrapped. */
  wide?: boolean;
}

export interface DataTableProps<T> {
  rows: readonly T[];
  columns: Column<T>[];
  rowKey?: (row: T, index: number) => string;
  onRowClick?: (row: T, index: number) => void;
  selectedIndex?: number;
  empty?: ComponentChildren;
  caption?: string;
  /** Initial sort: column key and direction. */
  sort?: { key: string; descending?: boolean };
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), 'en', { numeric: true });
}

function Cell(props: { value: string | number | boolean | null | undefined }) {
  const v = props.value;
  if (v === null || v === undefined || v === '') return <span class="muted">—</span>;
  if (typeof v === 'number') return <>{formatNumber(v)}</>;
  if (typeof v === 'boolean') return <>{v ? 'yes' : 'no'}</>;
  if (isIsoTime(v)) return <RelativeTime iso={v} />;
  return <>{v}</>;
}

export function DataTable<T>(props: DataTableProps<T>) {
  const [sort, setSort] = useState<{ key: string; descending: boolean } | undefined>(
    props.sort ? { key: props.sort.key, descending: props.sort.descending ?? false } : undefined,
  );
  if (props.rows.length === 0) return <p class="empty">{props.empty ?? 'Nothing here yet.'}</p>;
  const column = sort ? props.columns.find((c) => c.key === sort.key) : undefined;
  const indexed = props.rows.map((row, index) => ({ row, index }));
  if (column?.value) {
    const value = column.value;
    indexed.sort((a, b) => (sort!.descending ? -1 : 1) * compare(value(a.row), value(b.row)));
  }
  const toggle = (c: Column<T>) => {
    if (!c.value || c.sortable === false) return;
    setSort((s) => (s?.key === c.key ? { key: c.key, descending: !s.descending } : { key: c.key, descending: Boolean(c.numeric) }));
  };
  return (
    <div class="table-wrap">
      <table class="data-table">
        {props.caption ? <caption>{props.caption}</caption> : null}
        <thead>
          <tr>
            {props.columns.map((c) => {
              const sortable = Boolean(c.value) && c.sortable !== false;
              const state = sort?.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none';
              return (
                <th key={c.key} class={`${c.numeric ? 'num' : ''} ${c.wide ? 'wide' : ''}`} aria-sort={sortable ? state : undefined} scope="col">
                  {sortable ? (
                    <button type="button" class="sort" onClick={() => toggle(c)}>
                      {c.label}
                      <span class="sort-mark">{state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {indexed.map(({ row, index }) => (
            <tr
              key={props.rowKey ? props.rowKey(row, index) : String(index)}
              class={`${props.onRowClick ? 'clickable' : ''} ${props.selectedIndex === index ? 'selected' : ''}`}
              onClick={props.onRowClick ? () => props.onRowClick!(row, index) : undefined}
              aria-selected={props.selectedIndex === undefined ? undefined : props.selectedIndex === index}
            >
              {props.columns.map((c) => (
                <td key={c.key} class={`${c.numeric ? 'num' : ''} ${c.wide ? 'wide' : ''}`}>
                  {c.render ? c.render(row) : <Cell value={c.value ? c.value(row) : undefined} />}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A plain table whose rows a page writes itself (cells with links, badges, several lines): the headings, then the
 * rows given as children.
 *
 * @example
 * <HeadedTable class="suites" headings={['Suite', 'Status']}>{suites.map((s) => <tr key={s.id}>…</tr>)}</HeadedTable>
 */
export function HeadedTable(props: { class: string; headings: readonly string[]; children: ComponentChildren }) {
  return (
    <table class={`data-table ${props.class}`}>
      <thead>
        <tr>
          {props.headings.map((h, i) => (
            <th key={i} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
