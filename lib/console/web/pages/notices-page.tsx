/**
 * `/notices`: what Flywheel told people (`GET /v1/notices`), newest first, filtered by status, kind and severity.
 * A person acknowledges a notice (`POST /v1/notices/{id}/ack`) or answers a decision with one of its actions
 * (`POST /v1/notices/{id}/actions/{actionId}`), which does what the operation's own route would.
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { filterSelects } from '../components/filter-select.tsx';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, explainError, Loading, StatusLine, type ActionStatus } from '../components/page-state.tsx';
import { Pager, useCursorPager } from '../components/pager.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { Fields } from '../components/value.tsx';

interface Notice {
  noticeId: string;
  kind: string;
  severity: string;
  status: string;
  title: string;
  text: string;
  source: { capability: string; runKind?: string; runId?: string };
  link?: string;
  fields?: Record<string, string | number>;
  actions?: Array<{ id: string; label: string; style?: 'primary' | 'danger' }>;
  createdAt: string;
  lastSeenAt: string;
  occurrences: number;
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  resolution?: { actionId?: string; by: string; at: string; outcome: string };
}

function NoticeCard(props: { notice: Notice; onAct: (path: string, what: string) => Promise<void>; busy: boolean }) {
  const n = props.notice;
  const id = encodeURIComponent(n.noticeId);
  return (
    <article class="card" data-notice={n.noticeId}>
      <div class="card-head">
        <Badge status={n.severity} />
        <span class="card-title">{n.title}</span>
        <Badge status={n.status} />
        <span class="muted">
          {n.kind} · {n.source.capability}
          {n.source.runId ? ` ${n.source.runId}` : ''} · <RelativeTime iso={n.createdAt} />
          {n.occurrences > 1 ? ` · ${n.occurrences} times, last ` : ''}
          {n.occurrences > 1 ? <RelativeTime iso={n.lastSeenAt} /> : null}
        </span>
      </div>
      {n.text ? <p class="text">{n.text}</p> : null}
      {n.fields && Object.keys(n.fields).length > 0 ? <Fields record={n.fields} /> : null}
      {n.link ? (
        <p>
          <a href={`#${n.link}`}>Open {n.link}</a>
        </p>
      ) : null}
      {n.acknowledgedBy ? (
        <p class="muted">
          Acknowledged by {n.acknowledgedBy} {n.acknowledgedAt ? <RelativeTime iso={n.acknowledgedAt} /> : null}
        </p>
      ) : null}
      {n.resolution ? (
        <p class="muted">
          Resolved by {n.resolution.by}
          {n.resolution.actionId ? ` (${n.resolution.actionId})` : ''}: {n.resolution.outcome}
        </p>
      ) : null}
      {n.status !== 'resolved' ? (
        <div class="actions">
          {(n.actions ?? []).map((a) => (
            <button key={a.id} type="button" class={a.style ?? ''} disabled={props.busy} onClick={() => void props.onAct(`/v1/notices/${id}/actions/${encodeURIComponent(a.id)}`, a.label)}>
              {a.label}
            </button>
          ))}
          {n.status === 'open' ? (
            <button type="button" disabled={props.busy} onClick={() => void props.onAct(`/v1/notices/${id}/ack`, 'Acknowledge')}>
              Acknowledge
            </button>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

export function NoticesPage(props: PageProps) {
  const [filters, setFilters] = useState({ status: props.query.get('status') ?? '', kind: '', severity: '' });
  const pager = useCursorPager([filters]);
  const page = useLoad(
    () =>
      props.api.get<{ notices: Notice[]; nextCursor?: string }>('/v1/notices', {
        status: filters.status || undefined,
        kind: filters.kind || undefined,
        severity: filters.severity || undefined,
        limit: 50,
        cursor: pager.cursor,
      }),
    [filters, pager.cursor],
  );
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<ActionStatus | undefined>();
  const act = async (path: string, what: string) => {
    setBusy(true);
    try {
      const answer = await props.api.post<{ outcome?: string }>(path, {});
      setStatus({ ok: true, text: `${what}: done${answer.outcome ? ` (${answer.outcome})` : ''}.` });
      page.reload();
    } catch (e) {
      const { title, detail } = explainError(e instanceof Error ? e : new Error(String(e)));
      setStatus({ ok: false, text: `${what}: ${title}. ${detail}` });
    } finally {
      setBusy(false);
    }
  };
  const select = filterSelects(filters, setFilters);
  return (
    <div>
      <h1>Notices</h1>
      <div class="filters">
        {select('status', ['open', 'acknowledged', 'resolved'])}
        {select('kind', ['failure', 'stall', 'decision', 'budget', 'info'])}
        {select('severity', ['info', 'warning', 'alert'])}
      </div>
      <StatusLine status={status} />
      {page.loading && !page.value ? <Loading what="notices" /> : null}
      {page.error ? <ErrorPanel error={page.error} onRetry={page.reload} /> : null}
      {page.value && page.value.notices.length === 0 ? <p class="empty">No notices{filters.status ? ` that are ${filters.status}` : ''}.</p> : null}
      {page.value?.notices.map((n) => <NoticeCard key={n.noticeId} notice={n} onAct={act} busy={busy} />)}
      {page.value ? <Pager pager={pager} next={page.value.nextCursor} /> : null}
    </div>
  );
}
