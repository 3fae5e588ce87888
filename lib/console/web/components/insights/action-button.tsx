/**
 * A button that changes something through the API (retire a suite, ship an arm, stop a run): it asks the person to
 * confirm, shows that it is working, then says what happened or the API's refusal (a read-only key gets "Forbidden:
 * …", not a silent failure), and calls `onDone` so the page reloads what changed.
 *
 * @example
 * <ActionButton label="Retire" confirm="Retire suite forge-py? Sweeps stop running it." run={() => api.post(`/v1/suites/${id}/retire`, { reason })} onDone={reload} />
 */
import { useState } from 'preact/hooks';
import { errorText } from '../page-state.tsx';

export interface ActionButtonProps {
  label: string;
  /** The question asked before acting; no question, no confirmation. */
  confirm?: string;
  run: () => Promise<unknown>;
  onDone?: () => void;
  disabled?: boolean;
  danger?: boolean;
  /** What to say when it worked (default: '<label>: done'). */
  done?: string;
}

export function ActionButton(props: ActionButtonProps) {
  const [state, setState] = useState<{ busy: boolean; message?: string; failed?: boolean }>({ busy: false });
  const act = async () => {
    if (props.confirm && !globalThis.confirm(props.confirm)) return;
    setState({ busy: true });
    try {
      await props.run();
      setState({ busy: false, message: props.done ?? `${props.label}: done` });
      props.onDone?.();
    } catch (error) {
      setState({ busy: false, failed: true, message: errorText(error instanceof Error ? error : new Error(String(error))) });
    }
  };
  return (
    <span class="action">
      <button type="button" class={props.danger ? 'danger' : undefined} disabled={props.disabled || state.busy} onClick={() => void act()}>
        {state.busy ? `${props.label}…` : props.label}
      </button>
      {state.message && (
        <span class={state.failed ? 'error-text' : 'muted'} role={state.failed ? 'alert' : 'status'}>
          {state.message}
        </span>
      )}
    </span>
  );
}
