/**
 * `/review`: the failure-mode review queue (`GET /v1/review-queue`): signals the chain could not settle, oldest first,
 * with the best guess. A person labels by keyboard: j / k move, a digit toggles a mode (0: no failure mode), u undoes
 * the last pick, Enter stores the label (`POST /v1/review-queue/{id}/label`) and the next item gets focus.
 */
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading, StatusLine } from '../components/page-state.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { formatPercent } from '../components/format.ts';
import { LabelQueueView, LabellerField, useLabelQueue } from '../components/label-queue.tsx';

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
  const q = useLabelQueue<ReviewItem, Pick>(queue.value?.items, {
    onDigit: (n) => {
      const pick: Pick | undefined = n === 0 ? { none: true } : choices[n - 1] !== undefined ? { mode: choices[n - 1]! } : undefined;
      if (pick) q.pick(pick);
    },
    check: (_, picks) => {
      const folded = foldPicks(picks);
      return folded.modes.length === 0 && !folded.none ? 'Pick a mode (1–9) or 0 for no failure mode first.' : undefined;
    },
    send: async (item, picks, labeller) => {
      const { modes } = foldPicks(picks);
      await props.api.post(`/v1/review-queue/${encodeURIComponent(item.id)}/label`, { modes, labeller });
      return `Labelled ${item.signalKey}: ${modes.length > 0 ? modes.join(', ') : 'no failure mode'}.`;
    },
  });
  const { items, selected } = q;
  // Suggested modes first, then the rest of the taxonomy; digits 1-9 pick among the first nine.
  const choices = selected ? [...new Set([...selected.suggested.map((s) => s.mode), ...(taxonomy.value ?? [])])] : [];
  const mine = foldPicks(q.picks);

  return (
    <div>
      <h1>Review queue</h1>
      <div class="filters">
        <LabellerField name="labeller" queue={q} />
        <span class="muted">
          <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>1</kbd>–<kbd>9</kbd> toggle a mode · <kbd>0</kbd> no failure mode · <kbd>u</kbd> undo ·{' '}
          <kbd>Enter</kbd> submit
        </span>
      </div>
      <StatusLine status={q.status} />
      {queue.loading && !queue.value ? <Loading what="the review queue" /> : null}
      {queue.error ? <ErrorPanel error={queue.error} onRetry={queue.reload} /> : null}
      {taxonomy.error ? <ErrorPanel error={taxonomy.error} /> : null}
      {queue.value && items.length === 0 ? <p class="empty">The review queue is empty: nothing waits for a person.</p> : null}
      {selected ? (
        <LabelQueueView
          queue={q}
          label={(i) => `review item ${i.signalKey}`}
          submitText="Submit label"
          columns={[
            { key: 'receivedAt', label: 'Received', value: (i) => i.receivedAt, render: (i) => <RelativeTime iso={i.receivedAt} /> },
            { key: 'model', label: 'Checkpoint', value: (i) => i.model },
            { key: 'excerpt', label: 'Excerpt', wide: true, value: (i) => i.excerpt ?? i.signalKey },
          ]}
        >
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
        </LabelQueueView>
      ) : null}
    </div>
  );
}
