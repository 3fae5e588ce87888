/** `/feedback/:id`: one feedback event (`GET /v1/feedback/{eventId}`), its fields and the votes under its key. */
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { Fields } from '../components/value.tsx';

interface FeedbackEvent extends Record<string, unknown> {
  eventId: string;
  comment?: string;
  history?: Array<{ eventId: string; occurredAt: string; rating: string; kind: string; current: boolean }>;
}

export function FeedbackEventPage(props: PageProps) {
  const id = props.params.id ?? '';
  const event = useLoad(() => props.api.get<FeedbackEvent>(`/v1/feedback/${encodeURIComponent(id)}`), [id]);
  return (
    <div>
      <p>
        <a href="#/feedback">← Feedback</a>
      </p>
      <h1>Feedback {id}</h1>
      {event.loading && !event.value ? <Loading what="the event" /> : null}
      {event.error ? <ErrorPanel error={event.error} onRetry={event.reload} /> : null}
      {event.value ? (
        <>
          {event.value.comment ? (
            <blockquote class="card text">{event.value.comment}</blockquote>
          ) : null}
          <Fields record={event.value} omit={['history', 'comment']} />
          <h2>Votes under the same key</h2>
          <DataTable
            rows={event.value.history ?? []}
            rowKey={(h) => h.eventId}
            empty="No other votes."
            onRowClick={(h) => props.navigate(`/feedback/${encodeURIComponent(h.eventId)}`)}
            columns={[
              { key: 'occurredAt', label: 'When', value: (h) => h.occurredAt },
              { key: 'eventId', label: 'Event', value: (h) => h.eventId },
              { key: 'kind', label: 'Kind', value: (h) => h.kind },
              { key: 'rating', label: 'Rating', value: (h) => h.rating, render: (h) => <Badge status={h.rating} /> },
              { key: 'current', label: 'Current', value: (h) => h.current },
            ]}
          />
        </>
      ) : null}
    </div>
  );
}
