/**
 * `/review`: the failure-mode review queue (`GET /v1/review-queue`): signals the chain could not settle, oldest first,
 * with the best guess. A person labels by keyboard: j / k move, a digit toggles a mode (0: no failure mode), u undoes
 * the last pick, Enter stores the label (`POST /v1/review-queue/{id}/label`) and the next item gets focus.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, explainError, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { formatPercent } from '../components/format.ts';
import { readLabeller, storeLabeller, useQueueKeys } from '../components/queue-keys.ts';

interface ReviewItem {
  id: string;
  signalKey: string;
  reason: string;
  detail: string;
  model: string;
  receivedAt: string;
  signalKind: string;
  rating: string;
  outcome?: string;
  excerpt?: string;
  suggested: Array<{ mode: string; probability?: number; severity?: string }>;
  suggestedBy: string;
}

/** A pick: toggle a mode, or say "no failure mode" (clears the others). */
type Pick = { mode: string } | { none: true };

/** The modes the picks amount to, and whether "no failure mode" was said. */
export function foldPicks(picks: readonly Pick[]): { modes: string[]; none: boolean } {
  let modes: string[] = [];
  let none = false;
  for (const p of picks) {
    if ('none' in p) {
      modes = [];
      none = true;
    } else {
      none = false;
      modes = modes.includes(p.mode) ? modes.filter((m) => m !== p.mode) : [...modes, p.mode];
    }
  }
  return { modes, none };
}

export function ReviewQueuePage(props: PageProps) {
  const queue = useLoad(() => props.api.get<{ items: ReviewItem[]; cursor?: string }>('/v1/review-queue', { status: 'pending', limit: 50 }), []);
  const taxonomy = useLoad(
    () =>
      props.api
        .get<{ checkpoints: Array<{ modes: Array<{ mode: string }> }> }>('/v1/failure-modes')
        .then((r) => [...new Set(r.checkpoints.flatMap((c) => c.modes.map((m) => m.mode)))]),
    [],
  );
  const [done, setDone] = useState<string[]>([]);
  const [index, setIndex] = useState(0);
  const [picks, setPicks] = useState<Record<string, Pick[]>>({});
  const [status, setStatus] = useState<{ ok: boolean; text: string } | undefined>();
  const [labeller, setLabeller] = useState(readLabeller);
  const [sending, setSending] = useState(false);
  const itemRef = useRef<HTMLDivElement>(null);

  const items = (queue.value?.items ?? []).filter((i) => !done.includes(i.id));
  const selected = items[Math.min(index, items.length - 1)];
  // Suggested modes first, then the rest of the taxonomy; digits 1-9 pick among the first nine.
  const choices = selected ? [...new Set([...selected.suggested.map((s) => s.mode), ...(taxonomy.value ?? [])])] : [];
  const mine = selected ? foldPicks(picks[selected.id] ?? []) : { modes: [], none: false };

  useEffect(() => {
    itemRef.current?.focus();
  }, [selected?.id]);

  const submit = async () => {
    if (!selected || sending) return;
    if (mine.modes.length === 0 && !mine.none) {
      setStatus({ ok: false, text: 'Pick a mode (1–9) or 0 for no failure mode first.' });
      return;
    }
    setSending(true);
    try {
      await props.api.post(`/v1/review-queue/${encodeURIComponent(selected.id)}/label`, { modes: mine.modes, labeller });
      setStatus({ ok: true, text: `Labelled ${selected.signalKey}: ${mine.modes.length > 0 ? mine.modes.join(', ') : 'no failure mode'}.` });
      setDone((d) => [...d, selected.id]);
      // The next item slides into this index and gets focus.
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
      const pick: Pick | undefined = n === 0 ? { none: true } : choices[n - 1] !== undefined ? { mode: choices[n - 1]! } : undefined;
      if (!pick) return;
      setPicks((p) => ({ ...p, [selected.id]: [...(p[selected.id] ?? []), pick] }));
      setStatus(undefined);
    },
    onUndo: () => {
      if (!selected) return;
      setPicks((p) => ({ ...p, [selected.id]: (p[selected.id] ?? []).slice(0, -1) }));
    },
    onSubmit: () => void submit(),
  });

  return (
    <div>
      <h1>Review queue</h1>
      <div class="filters">
        <label>
          Labelling as
          <input
            name="labeller"
            value={labeller}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setLabeller(v);
              storeLabeller(v);
            }}
          />
        </label>
        <span class="muted">
          <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>1</kbd>–<kbd>9</kbd> toggle a mode · <kbd>0</kbd> no failure mode · <kbd>u</kbd> undo ·{' '}
          <kbd>Enter</kbd> submit
        </span>
      </div>
      <p class={`status-line ${status ? (status.ok ? 'ok' : 'bad') : ''}`} role="status" aria-live="polite">
        {status?.text ?? ''}
      </p>
      {queue.loading && !queue.value ? <Loading what="the review queue" /> : null}
      {queue.error ? <ErrorPanel error={queue.error} onRetry={queue.reload} /> : null}
      {taxonomy.error ? <ErrorPanel error={taxonomy.error} /> : null}
      {queue.value && items.length === 0 ? <p class="empty">The review queue is empty: nothing waits for a person.</p> : null}
      {selected ? (
        <div class="queue">
          <DataTable
            rows={items}
            rowKey={(i) => i.id}
            selectedIndex={Math.min(index, items.length - 1)}
            onRowClick={(_, i) => setIndex(i)}
            columns={[
              { key: 'receivedAt', label: 'Received', value: (i) => i.receivedAt, render: (i) => <RelativeTime iso={i.receivedAt} /> },
              { key: 'model', label: 'Checkpoint', value: (i) => i.model },
              { key: 'excerpt', label: 'Excerpt', wide: true, value: (i) => i.excerpt ?? i.signalKey },
            ]}
          />
          <div class="queue-item" tabIndex={-1} ref={itemRef} data-item={selected.id} aria-label={`review item ${selected.signalKey}`}>
            <div class="card-head">
              <span class="card-title">{selected.signalKey}</span>
              <Badge status={selected.rating} />
              <span class="muted">
                {selected.signalKind} on {selected.model}, <RelativeTime iso={selected.receivedAt} />
              </span>
            </div>
            {selected.excerpt ? <p class="text">{selected.excerpt}</p> : null}
            <p class="muted">
              In review: {selected.reason} — {selected.detail}
            </p>
            <h3>Modes</h3>
            <ol class="choices">
              <li class={mine.none ? 'picked' : ''}>
                <kbd>0</kbd> no failure mode
              </li>
              {choices.map((mode, n) => {
                const guess = selected.suggested.find((s) => s.mode === mode);
                return (
                  <li key={mode} class={mine.modes.includes(mode) ? 'picked' : ''} aria-selected={mine.modes.includes(mode)}>
                    {n < 9 ? <kbd>{n + 1}</kbd> : <span class="muted">·</span>} {mode}
                    {guess ? <span class="muted"> (suggested by {selected.suggestedBy}{guess.probability !== undefined ? `, ${formatPercent(guess.probability, 0)}` : ''})</span> : null}
                  </li>
                );
              })}
            </ol>
            <div class="actions">
              <button type="button" class="primary" disabled={sending} onClick={() => void submit()}>
                Submit label
              </button>
            </div>
          </div>
        </div>
      ) : null}
    </div>
  );
}
