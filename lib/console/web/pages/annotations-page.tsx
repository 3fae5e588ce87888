/**
 * `/annotations`: the annotation queues (`GET /v1/annotations`): attempts, signals and pairs people label for judge
 * calibration and drift. By keyboard: j / k move between items, a digit picks a value for the highlighted label (then
 * the next label is highlighted), u undoes the last pick, Enter stores the labels (`POST /v1/annotations/{id}/labels`)
 * and the next item gets focus. On a signal, the modes left unpicked are `no`.
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading, StatusLine } from '../components/page-state.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { LabelQueueView, LabellerField, useLabelQueue } from '../components/label-queue.tsx';

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
  const [activeAsk, setActiveAsk] = useState(0);
  const chosenOf = (picks: readonly Pick[]): Record<string, string> => {
    const chosen: Record<string, string> = {};
    for (const p of picks) chosen[p.ask] = p.value;
    return chosen;
  };
  const q = useLabelQueue<AnnotationItem, Pick>(list.value?.items, {
    onSelect: () => setActiveAsk(0),
    onDigit: (n, item) => {
      const ask = item.asks[activeAsk];
      const value = ask !== undefined && n >= 1 ? labelValues(ask)[n - 1] : undefined;
      if (!ask || !value) return;
      q.pick({ ask, value });
      setActiveAsk((a) => Math.min(item.asks.length - 1, a + 1));
    },
    onUndo: (last, item) => setActiveAsk(Math.max(0, item.asks.indexOf(last.ask))),
    send: async (item, picks, annotator) => {
      await props.api.post(`/v1/annotations/${encodeURIComponent(item.id)}/labels`, { annotator, labels: chosenOf(picks) });
      return `Labelled ${subjectText(item.subject)}.`;
    },
  });
  const { items, selected } = q;
  const chosen = chosenOf(q.picks);

  return (
    <div>
      <h1>Annotation queue</h1>
      <div class="filters">
        <label>
          Queue
          <input name="queue" value={queueName} placeholder="every queue" onChange={(e) => setQueueName((e.target as HTMLInputElement).value.trim())} />
        </label>
        <LabellerField name="annotator" queue={q} />
        <span class="muted">
          <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>1</kbd>–<kbd>3</kbd> pick for the highlighted label · <kbd>u</kbd> undo · <kbd>Enter</kbd> submit
        </span>
      </div>
      <StatusLine status={q.status} />
      {list.loading && !list.value ? <Loading what="annotation items" /> : null}
      {list.error ? <ErrorPanel error={list.error} onRetry={list.reload} /> : null}
      {list.value && items.length === 0 ? <p class="empty">No pending annotation items{queueName ? ` in ${queueName}` : ''}.</p> : null}
      {selected ? (
        <LabelQueueView
          queue={q}
          label={(i) => `annotation item ${i.id}`}
          submitText="Submit labels"
          columns={[
            { key: 'createdAt', label: 'Queued', value: (i) => i.createdAt, render: (i) => <RelativeTime iso={i.createdAt} /> },
            { key: 'queue', label: 'Queue', value: (i) => i.queue },
            { key: 'subject', label: 'Subject', wide: true, value: (i) => subjectText(i.subject) },
          ]}
        >
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
        </LabelQueueView>
      ) : null}
    </div>
  );
}
