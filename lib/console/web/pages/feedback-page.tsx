/**
 * `/feedback`: the feedback explorer (`GET /v1/feedback` with its filters: checkpoint, rating, source, time window),
 * a page at a time; a row opens the event (`/feedback/:id`).
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Pager, useCursorPager } from '../components/pager.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { pathTo } from '../router.ts';

/** One row of `GET /v1/feedback` (the fields the explorer shows). */
export interface FeedbackRow {
  eventId: string;
  kind: string;
  rating: string;
  source: string;
  model: string;
  comment?: string;
  outcome?: string;
  reporter?: string;
  receivedAt: string;
  occurredAt?: string;
  current?: boolean;
}

const RATINGS = ['', 'up', 'down', 'none'];
const SOURCES = ['', 'user', 'internal', 'automated'];

/** A datetime-local value (`2026-12-04T08:00`) as ISO UTC, or undefined. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const t = Date.parse(`${local}:00Z`);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export function FeedbackPage(props: PageProps) {
  const q = props.query;
  const [filters, setFilters] = useState({ model: q.get('model') ?? '', rating: q.get('rating') ?? '', source: q.get('source') ?? '', since: '', until: '' });
  const [draft, setDraft] = useState(filters);
  const pager = useCursorPager([filters]);
  const page = useLoad(
    () =>
      props.api.get<{ items: FeedbackRow[]; cursor?: string }>('/v1/feedback', {
        model: filters.model || undefined,
        rating: filters.rating || undefined,
        source: filters.source || undefined,
        since: isoOf(filters.since),
        until: isoOf(filters.until),
        limit: 50,
        cursor: pager.cursor,
      }),
    [filters, pager.cursor],
  );
  const set = (name: keyof typeof draft) => (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
  return (
    <div>
      <h1>Feedback</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <label>
          Checkpoint
          <input name="model" value={draft.model} onInput={set('model')} placeholder="any" />
        </label>
        <label>
          Rating
          <select name="rating" value={draft.rating} onChange={set('rating')}>
            {RATINGS.map((r) => (
              <option key={r} value={r}>
                {r || 'any'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <select name="source" value={draft.source} onChange={set('source')}>
            {SOURCES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since (UTC)
          <input name="since" type="datetime-local" value={draft.since} onInput={set('since')} />
        </label>
        <label>
          Until (UTC)
          <input name="until" type="datetime-local" value={draft.until} onInput={set('until')} />
        </label>
        <button type="submit">Apply</button>
      </form>
      {page.loading && !page.value ? <Loading what="feedback" /> : null}
      {page.error ? <ErrorPanel error={page.error} onRetry={page.reload} /> : null}
      {page.value ? (
        <>
          <DataTable
            rows={page.value.items}
            rowKey={(r) => r.eventId}
            onRowClick={(r) => props.navigate(pathTo('/feedback/:id', { id: r.eventId }))}
            empty="No feedback in this window (the default window is the last 7 days)."
            columns={[
              { key: 'receivedAt', label: 'Received', value: (r) => r.receivedAt, render: (r) => <RelativeTime iso={r.receivedAt} /> },
              { key: 'model', label: 'Checkpoint', value: (r) => r.model },
              { key: 'kind', label: 'Kind', value: (r) => r.kind },
              { key: 'rating', label: 'Rating', value: (r) => r.rating, render: (r) => <Badge status={r.rating} /> },
              { key: 'source', label: 'Source', value: (r) => r.source },
              { key: 'comment', label: 'Comment or outcome', wide: true, value: (r) => r.comment ?? r.outcome },
            ]}
          />
          <Pager pager={pager} next={page.value.cursor} />
        </>
      ) : null}
    </div>
  );
}
