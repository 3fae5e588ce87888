/**
 * Cursor paging: the API answers a page and an opaque cursor for the next. `useCursorPager` keeps the cursors seen so
 * a person can go back; `Pager` shows first / previous / next.
 *
 * @example
 * const pager = useCursorPager([filters]);
 * const page = useLoad(() => api.get('/v1/feedback', { ...filters, cursor: pager.cursor }), [filters, pager.cursor]);
 * <Pager pager={pager} next={page.value?.cursor} />
 */
import { useEffect, useState } from 'preact/hooks';

export interface CursorPager {
  /** The cursor of the page shown (undefined: the first). */
  cursor: string | undefined;
  page: number;
  next(cursor: string): void;
  previous(): void;
  first(): void;
}

/** Resets to the first page when any of `resetOn` changes (new filters). */
export function useCursorPager(resetOn: unknown[] = []): CursorPager {
  const [stack, setStack] = useState<string[]>([]);
  useEffect(() => setStack([]), resetOn);
  return {
    cursor: stack[stack.length - 1],
    page: stack.length + 1,
    next: (cursor) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => s.slice(0, -1)),
    first: () => setStack([]),
  };
}

export function Pager(props: { pager: CursorPager; next: string | undefined }) {
  const { pager } = props;
  if (pager.page === 1 && !props.next) return null;
  return (
    <nav class="pager" aria-label="pages">
      <button type="button" disabled={pager.page === 1} onClick={pager.first}>
        First
      </button>
      <button type="button" disabled={pager.page === 1} onClick={pager.previous}>
        Previous
      </button>
      <span class="muted">page {pager.page}</span>
      <button type="button" disabled={!props.next} onClick={() => props.next && pager.next(props.next)}>
        Next
      </button>
    </nav>
  );
}
