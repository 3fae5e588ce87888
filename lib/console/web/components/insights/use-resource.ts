/**
 * Loads what a page shows and says where it stands: loading, the value, or the API's error (its name and message, so a
 * person reads "NotFound: no suite x", not "failed"). `reload()` fetches again (after an action changed it). A result
 * that arrives after the inputs changed (the person moved on) is dropped.
 *
 * @example
 * const suites = useResource(() => api.get<{ items: SuiteRow[] }>('/v1/suites'), []);
 * if (suites.error) return <ErrorBox error={suites.error} />;
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  value: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ value: T | undefined; error: Error | undefined; loading: boolean }>({ value: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  const lastTick = useRef(tick);
  useEffect(() => {
    const mine = ++generation.current;
    // A reload keeps showing the value it replaces; other inputs (another id, other filters) show loading.
    const reloading = lastTick.current !== tick;
    lastTick.current = tick;
    setState((s) => (reloading ? { ...s, loading: true } : { value: undefined, error: undefined, loading: true }));
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
