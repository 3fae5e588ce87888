/**
 * Where a page stands when it has nothing to show yet: loading, or an error said plainly. A 403 names the scope the
 * key lacks; a 404 of a whole route (a deployment without that part) says so instead of "failed". `LoadView` does
 * both for a `useLoad` result and renders `children(value)` once there is a value.
 *
 * @example
 * if (page.loading && !page.value) return <Loading what="jobs" />;
 * if (page.error) return <ErrorPanel error={page.error} onRetry={page.reload} />;
 * <LoadView load={suites} what="suites">{(s) => <SuitesTable suites={s.items} />}</LoadView>
 */
import type { ComponentChildren } from 'preact';
import { ConsoleApiError } from '../api-client.ts';
import type { Loaded } from './use-load.ts';

export function Loading(props: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}

/** The scope a 403 says is missing (`… needs the admin scope; …`), if it says. */
export function missingScope(error: unknown): string | undefined {
  if (!(error instanceof ConsoleApiError) || error.status !== 403) return undefined;
  return /needs the (\w+) scope/.exec(error.message)?.[1];
}

/** The error in one line: the API's error name and its message. */
export function errorText(error: Error): string {
  if (error instanceof ConsoleApiError) return `${error.error}: ${error.message}`;
  return error.message || error.name;
}

/** What a person should read for an error. */
export function explainError(error: Error): { title: string; detail: string } {
  if (error instanceof ConsoleApiError) {
    const scope = missingScope(error);
    if (scope) return { title: `This key lacks the ${scope} scope`, detail: `${error.message}. Sign in with a key that has the ${scope} scope.` };
    if (error.status === 403) return { title: 'The API refused this key', detail: error.message };
    if (error.status === 404 && /RouteNotFound|No route/i.test(`${error.error} ${error.message}`)) {
      return { title: 'Not available in this deployment', detail: `The API has no such route yet (${error.message}).` };
    }
    if (error.status === 404) return { title: 'Not found', detail: error.message };
    if (error.status === 400) return { title: 'The API refused the request', detail: error.message };
    return { title: `The API answered ${error.status}`, detail: `${error.error}: ${error.message}` };
  }
  return { title: 'Something went wrong', detail: error.message };
}

export function ErrorPanel(props: { error: Error; onRetry?: () => void }) {
  const { title, detail } = explainError(props.error);
  return (
    <div class="error-panel" role="alert">
      <strong>{title}</strong>
      <p>{detail}</p>
      {props.onRetry ? (
        <button type="button" onClick={props.onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** The error panel (with a retry) when the load failed, loading while there is no value, else `children(value)`. */
export function LoadView<T>(props: { load: Loaded<T>; what: string; children: (value: T) => ComponentChildren }) {
  const { load } = props;
  if (load.error) return <ErrorPanel error={load.error} onRetry={load.reload} />;
  if (load.value === undefined) return <Loading what={props.what} />;
  return <>{props.children(load.value)}</>;
}

/** How the last action went (stored, refused and why), read out. */
export interface ActionStatus {
  ok: boolean;
  text: string;
}

/** The last action's outcome, read out; an empty line until there is one. */
export function StatusLine(props: { status: ActionStatus | undefined }) {
  const { status } = props;
  return (
    <p class={`status-line ${status ? (status.ok ? 'ok' : 'bad') : ''}`} role="status" aria-live="polite">
      {status?.text ?? ''}
    </p>
  );
}
