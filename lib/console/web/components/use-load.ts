/**
 * Loads what a page shows and says where it stands: loading, the value, or the API's error. A result that arrives
 * after the inputs changed (the person moved on) is dropped; `reload()` fetches again after an action.
 *
 * @example
 * const jobs = useLoad(() => api.get<JobsPage>('/v1/jobs', { status }), [status]);
 * if (jobs.error) return <ErrorPanel error={jobs.error} onRetry={jobs.reload} />;
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  value: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ value: T | undefined; error: Error | undefined; loading: boolean }>({ value: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  useEffect(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (value) => {
        if (mine === generation.current) setState({ value, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState({ value: undefined, error: error instanceof Error ? error : new Error(String(error)), loading: false });
      },
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
