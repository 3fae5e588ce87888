/**
 * `/annotations`: the annotation queues (`GET /v1/annotations`): attempts, signals and pairs people label for judge
 * calibration and drift. By keyboard: j / k move between items, a digit picks a value for the highlighted label (then
 * the next label is highlighted), u undoes the last pick, Enter stores the labels (`POST /v1/annotations/{id}/labels`)
 * and the next item gets focus. On a signal, the modes left unpicked are `no`.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, explainError, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { readLabeller, storeLabeller, useQueueKeys } from '../components/queue-keys.ts';

type Subject =
  | { kind: 'attempt'; runId: string; attemptId: string }
  | { kind: 'signal'; signalKey: string }
  | { kind: 'pair'; a: { runId: string; attemptId: string }; b: { runId: string; attemptId: string } };

interface AnnotationItem {
  id: string;
  queue: string;
  reason: string;
  subject: Subject;
  subjectKey: string;
  asks: string[];
  needs: 1 | 2;
  status: string;
  createdAt: string;
  labels?: Record<string, string>;
  annotator?: string;
}

/** The values a label id takes (as `lib/judges/annotation/annotation-item.ts` says). */
export function labelValues(id: string): readonly string[] {
  if (id === 'preference') return ['a', 'b', 'tie'];
  if (id.startsWith('mode:')) return ['yes', 'no'];
  return ['pass', 'fail', 'not-applicable'];
}

interface Pick {
  ask: string;
  value: string;
}

function subjectText(s: Subject): string {
  if (s.kind === 'attempt') return `attempt ${s.attemptId} of run ${s.runId}`;
  if (s.kind === 'signal') return `signal ${s.signalKey}`;
  return `pair: ${s.a.attemptId} (a) vs ${s.b.attemptId} (b)`;
}

export function AnnotationsPage(props: PageProps) {
  const [queueName, setQueueName] = useState(props.query.get('queue') ?? '');
  const list = useLoad(
    () => props.api.get<{ items: AnnotationItem[]; cursor?: string }>('/v1/annotations', { status: 'pending', queue: queueName || undefined, limit: 50 }),
    [queueName],
  );
  const [done, setDone] = useState<string[]>([]);
  const [index, setIndex] = useState(0);
  const [picks, setPicks] = useState<Record<string, Pick[]>>({});
  const [activeAsk, setActiveAsk] = useState(0);
  const [status, setStatus] = useState<{ ok: boolean; text: string } | undefined>();
  const [annotator, setAnnotator] = useState(readLabeller);
  const [sending, setSending] = useState(false);
  const itemRef = useRef<HTMLDivElement>(null);

  const items = (list.value?.items ?? []).filter((i) => !done.includes(i.id));
  const selected = items[Math.min(index, items.length - 1)];
  const mine = selected ? (picks[selected.id] ?? []) : [];
  const chosen: Record<string, string> = {};
  for (const p of mine) chosen[p.ask] = p.value;

  useEffect(() => {
    setActiveAsk(0);
    itemRef.current?.focus();
  }, [selected?.id]);

  const submit = async () => {
    if (!selected || sending) return;
    setSending(true);
    try {
      await props.api.post(`/v1/annotations/${encodeURIComponent(selected.id)}/labels`, { annotator, labels: chosen });
      setStatus({ ok: true, text: `Labelled ${subjectText(selected.subject)}.` });
      setDone((d) => [...d, selected.id]);
      setIndex((i) => Math.min(i, Math.max(0, items.length - 2)));
    } catch (e) {
      const { title, detail } = explainError(e instanceof Error ? e : new Error(String(e)));
      setStatus({ ok: false, text: `${title}: ${detail}` });
    } finally {
      setSending(false);
    }
  };
  useQueueKeys({
    onMove: (d) => setIndex((i) => Math.max(0, Math.min(items.length - 1, i + d))),
    onDigit: (n) => {
      if (!selected) return;
      const ask = selected.asks[activeAsk];
      const value = ask !== undefined && n >= 1 ? labelValues(ask)[n - 1] : undefined;
      if (!ask || !value) return;
      setPicks((p) => ({ ...p, [selected.id]: [...(p[selected.id] ?? []), { ask, value }] }));
      setActiveAsk((a) => Math.min(selected.asks.length - 1, a + 1));
      setStatus(undefined);
    },
    onUndo: () => {
      if (!selected || mine.length === 0) return;
      const last = mine[mine.length - 1]!;
      setPicks((p) => ({ ...p, [selected.id]: mine.slice(0, -1) }));
      setActiveAsk(Math.max(0, selected.asks.indexOf(last.ask)));
    },
    onSubmit: () => void submit(),
  });

  return (
    <div>
      <h1>Annotation queue</h1>
      <div class="filters">
        <label>
          Queue
          <input name="queue" value={queueName} placeholder="every queue" onChange={(e) => setQueueName((e.target as HTMLInputElement).value.trim())} />
        </label>
        <label>
          Labelling as
          <input
            name="annotator"
            value={annotator}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setAnnotator(v);
              storeLabeller(v);
            }}
          />
        </label>
        <span class="muted">
          <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>1</kbd>–<kbd>3</kbd> pick for the highlighted label · <kbd>u</kbd> undo · <kbd>Enter</kbd> submit
        </span>
      </div>
      <p class={`status-line ${status ? (status.ok ? 'ok' : 'bad') : ''}`} role="status" aria-live="polite">
        {status?.text ?? ''}
      </p>
      {list.loading && !list.value ? <Loading what="annotation items" /> : null}
      {list.error ? <ErrorPanel error={list.error} onRetry={list.reload} /> : null}
      {list.value && items.length === 0 ? <p class="empty">No pending annotation items{queueName ? ` in ${queueName}` : ''}.</p> : null}
      {selected ? (
        <div class="queue">
          <DataTable
            rows={items}
            rowKey={(i) => i.id}
            selectedIndex={Math.min(index, items.length - 1)}
            onRowClick={(_, i) => setIndex(i)}
            columns={[
              { key: 'createdAt', label: 'Queued', value: (i) => i.createdAt, render: (i) => <RelativeTime iso={i.createdAt} /> },
              { key: 'queue', label: 'Queue', value: (i) => i.queue },
              { key: 'subject', label: 'Subject', wide: true, value: (i) => subjectText(i.subject) },
            ]}
          />
          <div class="queue-item" tabIndex={-1} ref={itemRef} data-item={selected.id} aria-label={`annotation item ${selected.id}`}>
            <div class="card-head">
              <span class="card-title">{subjectText(selected.subject)}</span>
              <Badge status={selected.reason} />
              <span class="muted">
                queue {selected.queue}
                {selected.needs === 2 ? ', two people label it' : ''}
                {selected.annotator ? `, first label by ${selected.annotator}` : ''}
              </span>
            </div>
            <h3>Labels</h3>
            <ol class="choices">
              {selected.asks.map((ask, n) => (
                <li key={ask} class={`${chosen[ask] ? 'picked' : ''} ${n === activeAsk ? 'active-ask' : ''}`} onClick={() => setActiveAsk(n)}>
                  <strong>{ask}</strong>: {chosen[ask] ?? <span class="muted">{ask.startsWith('mode:') ? 'no (unless picked)' : 'not picked'}</span>}
                  <span class="muted">
                    {' '}
                    — {labelValues(ask).map((v, i) => `${i + 1} ${v}`).join(' · ')}
                  </span>
                </li>
              ))}
            </ol>
            <div class="actions">
              <button type="button" class="primary" disabled={sending} onClick={() => void submit()}>
                Submit labels
              </button>
            </div>
          </div>
        </div>
      ) : null}
    </div>
  );
}
