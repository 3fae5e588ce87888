/**
 * The keyboard of the labelling queues: j / k move between items, a digit picks a label, Enter submits, u undoes the
 * last pick. Keys typed into a field (the labeller's name) are left alone.
 *
 * @example
 * useQueueKeys({ onMove: (d) => setIndex((i) => i + d), onDigit: pick, onSubmit: submit, onUndo: undo });
 */
import { useEffect, useRef } from 'preact/hooks';

export interface QueueKeyHandlers {
  onMove(delta: 1 | -1): void;
  onDigit(digit: number): void;
  onSubmit(): void;
  onUndo(): void;
}

function typing(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  return Boolean(target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)));
}

export function useQueueKeys(handlers: QueueKeyHandlers): void {
  // The latest handlers, without re-binding the listener on every render.
  const current = useRef(handlers);
  current.current = handlers;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
      const h = current.current;
      if (event.key === 'j' || event.key === 'ArrowDown') h.onMove(1);
      else if (event.key === 'k' || event.key === 'ArrowUp') h.onMove(-1);
      else if (/^[0-9]$/.test(event.key)) h.onDigit(Number(event.key));
      else if (event.key === 'Enter') {
        // Enter on a focused button is that button's click.
        if ((event.target as HTMLElement | null)?.tagName === 'BUTTON') return;
        h.onSubmit();
      } else if (event.key === 'u') h.onUndo();
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
}

const LABELLER_STORAGE = 'flywheel.console.labeller';

/** Who labels: the name a person typed once on a queue page (this browser), `console` until then. */
export function readLabeller(): string {
  try {
    return globalThis.localStorage.getItem(LABELLER_STORAGE) || 'console';
  } catch {
    return 'console';
  }
}

export function storeLabeller(name: string): void {
  try {
    globalThis.localStorage.setItem(LABELLER_STORAGE, name);
  } catch {
    // storage off: the name lasts this page only
  }
}
