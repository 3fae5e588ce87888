/**
 * What the labelling queues (annotations, failure-mode review) share: the items not yet labelled, the highlighted one
 * (it gets focus when it changes), each item's picks in order, who labels (kept in this browser), the status line,
 * and the keyboard (`useQueueKeys`: j / k move, a digit picks, u undoes the last pick, Enter submits). A page says
 * what a digit picks and how the picks are sent; `LabelQueueView` lays out the table of items and the highlighted one
 * with its submit button.
 *
 * @example
 * const q = useLabelQueue(list.value?.items, {
 *   onDigit: (n) => q.pick({ mode: choices[n - 1]! }),
 *   send: async (item, picks, labeller) => { await api.post(`/v1/review-queue/${item.id}/label`, { picks, labeller }); return 'Labelled.'; },
 * });
 * <LabelQueueView queue={q} columns={columns} label={(i) => `review item ${i.id}`} submitText="Submit label">…</LabelQueueView>
 */
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { DataTable, type Column } from './data-table.tsx';
import { explainError, type ActionStatus } from './page-state.tsx';
import { readLabeller, storeLabeller, useQueueKeys } from './queue-keys.ts';

export interface LabelQueue<I extends { id: string }, P> {
  /** The items not labelled in this visit. */
  items: I[];
  /** The highlighted item's index in `items`, and the item. */
  selectedIndex: number;
  selected: I | undefined;
  setIndex(index: number): void;
  /** The highlighted item's picks, oldest first. */
  picks: readonly P[];
  /** Adds a pick to the highlighted item (and clears the status line). */
  pick(pick: P): void;
  status: ActionStatus | undefined;
  setStatus(status: ActionStatus | undefined): void;
  labeller: string;
  setLabeller(name: string): void;
  sending: boolean;
  submit(): Promise<void>;
  itemRef: RefObject<HTMLDivElement | null>;
}

export interface LabelQueueOptions<I, P> {
  /** A digit typed while `item` is highlighted. */
  onDigit(digit: number, item: I): void;
  /** After `u` dropped `last`, the highlighted item's last pick. */
  onUndo?(last: P, item: I): void;
  /** When another item is highlighted (before it gets focus). */
  onSelect?(): void;
  /** Why the picks cannot be sent yet, if they cannot. */
  check?(item: I, picks: readonly P[]): string | undefined;
  /** Stores the picks; answers the status line's text. */
  send(item: I, picks: readonly P[], labeller: string): Promise<string>;
}

export function useLabelQueue<I extends { id: string }, P>(all: readonly I[] | undefined, options: LabelQueueOptions<I, P>): LabelQueue<I, P> {
  const [done, setDone] = useState<string[]>([]);
  const [index, setIndex] = useState(0);
  const [picksById, setPicksById] = useState<Record<string, P[]>>({});
  const [status, setStatus] = useState<ActionStatus | undefined>();
  const [labeller, setLabellerState] = useState(readLabeller);
  const [sending, setSending] = useState(false);
  const itemRef = useRef<HTMLDivElement>(null);

  const items = (all ?? []).filter((i) => !done.includes(i.id));
  const selectedIndex = Math.min(index, items.length - 1);
  const selected = items[selectedIndex];
  const picks = selected ? (picksById[selected.id] ?? []) : [];

  useEffect(() => {
    options.onSelect?.();
    itemRef.current?.focus();
  }, [selected?.id]);

  const submit = async () => {
    if (!selected || sending) return;
    const refusal = options.check?.(selected, picks);
    if (refusal) {
      setStatus({ ok: false, text: refusal });
      return;
    }
    setSending(true);
    try {
      setStatus({ ok: true, text: await options.send(selected, picks, labeller) });
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
      if (selected) options.onDigit(n, selected);
    },
    onUndo: () => {
      if (!selected || picks.length === 0) return;
      const last = picks[picks.length - 1]!;
      setPicksById((p) => ({ ...p, [selected.id]: picks.slice(0, -1) }));
      options.onUndo?.(last, selected);
    },
    onSubmit: () => void submit(),
  });

  return {
    items,
    selectedIndex,
    selected,
    setIndex,
    picks,
    pick: (pick) => {
      if (!selected) return;
      setPicksById((p) => ({ ...p, [selected.id]: [...(p[selected.id] ?? []), pick] }));
      setStatus(undefined);
    },
    status,
    setStatus,
    labeller,
    setLabeller: (name) => {
      setLabellerState(name);
      storeLabeller(name);
    },
    sending,
    submit,
    itemRef,
  };
}

/** "Labelling as": who labels, kept in this browser. */
export function LabellerField(props: { name: string; queue: LabelQueue<{ id: string }, unknown> }) {
  return (
    <label>
      Labelling as
      <input name={props.name} value={props.queue.labeller} onInput={(e) => props.queue.setLabeller((e.target as HTMLInputElement).value)} />
    </label>
  );
}

/** The items as a table (a click highlights one) and the highlighted item, focusable, with its submit button. */
export function LabelQueueView<I extends { id: string }, P>(props: {
  queue: LabelQueue<I, P>;
  columns: Column<I>[];
  label: (item: I) => string;
  submitText: string;
  children: ComponentChildren;
}) {
  const q = props.queue;
  if (!q.selected) return null;
  return (
    <div class="queue">
      <DataTable rows={q.items} rowKey={(i) => i.id} selectedIndex={q.selectedIndex} onRowClick={(_, i) => q.setIndex(i)} columns={props.columns} />
      <div class="queue-item" tabIndex={-1} ref={q.itemRef} data-item={q.selected.id} aria-label={props.label(q.selected)}>
        {props.children}
        <div class="actions">
          <button type="button" class="primary" disabled={q.sending} onClick={() => void q.submit()}>
            {props.submitText}
          </button>
        </div>
      </div>
    </div>
  );
}
