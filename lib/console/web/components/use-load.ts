/**
 * Loads what a page shows and says where it stands: loading, the value, or the API's error. A result that arrives
 * after the inputs changed (the person moved on) is dropped; `reload()` fetches again after an action.
 *
 * While it loads again, the value it replaces stays shown (a list keeps its rows while a filter changes), unless
 * `clearOnChange` is set: then only a `reload()` keeps it, and other inputs (another id) show loading, not the last
 * record.
 *
 * @example
 * const jobs = useLoad(() => api.get<JobsPage>('/v1/jobs', { status }), [status]);
 * if (jobs.error) return <ErrorPanel error={jobs.error} onRetry={jobs.reload} />;
 * const suite = useLoad(() => api.get<Suite>(`/v1/suites/${id}`), [id], { clearOnChange: true });
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  value: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[], options: { clearOnChange?: boolean } = {}): Loaded<T> {
  const [state, setState] = useState<{ value: T | undefined; error: Error | undefined; loading: boolean }>({ value: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  const lastTick = useRef(tick);
  useEffect(() => {
    const mine = ++generation.current;
    const reloading = lastTick.current !== tick;
    lastTick.current = tick;
    const clear = options.clearOnChange === true && !reloading;
    setState((s) => (clear ? { value: undefined, error: undefined, loading: true } : { ...s, loading: true }));
    load().then(
      (value) => {
        if (mine === generation.current) setState({ value, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState({ value: undefined, error: error instanceof Error ? error : new Error(String(error)), loading: false });
      },
    );
    // The caller names what the load depends on, as with useEffect.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
