/**
 * What a page shows while its data loads or when the API refused: a line saying it is loading, or the shell's error
 * panel (a missing scope named, a 404 said plainly) with a retry. Renders `children(value)` once there is a value.
 *
 * @example
 * <ResourceView resource={suites} what="suites">{(s) => <SuitesTable suites={s.items} />}</ResourceView>
 */
import type { ComponentChildren } from 'preact';
import { ConsoleApiError } from '../../api-client.ts';
import { ErrorPanel } from '../page-state.tsx';
import type { Resource } from './use-resource.ts';

/** The error as a person reads it: the API's error name and its message. */
export function errorText(error: Error): string {
  if (error instanceof ConsoleApiError) return `${error.error}: ${error.message}`;
  return error.message || error.name;
}

/** The shell's error panel (a missing scope named, a 404 said plainly), with a retry when given. */
export function ErrorBox(props: { error: Error; what?: string; onRetry?: () => void }) {
  return (
    <div class="insights-error" data-what={props.what}>
      <ErrorPanel error={props.error} {...(props.onRetry ? { onRetry: props.onRetry } : {})} />
    </div>
  );
}

export function ResourceView<T>(props: { resource: Resource<T>; what: string; children: (value: T) => ComponentChildren }) {
  const { resource } = props;
  if (resource.error) return <ErrorBox error={resource.error} what={props.what} onRetry={resource.reload} />;
  if (resource.value === undefined) return <p class="loading" aria-busy="true">Loading {props.what}…</p>;
  return <>{props.children(resource.value)}</>;
}
