import { useEffect, useState } from 'preact/hooks';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
}

/** Runs `load` whenever `deps` change; a newer run aborts the older one. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [state, setState] = useState<AsyncState<T>>({ data: undefined, error: undefined, loading: true });
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ data: s.data, error: undefined, loading: true }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, error: undefined, loading: false }),
      (error) => !abort.signal.aborted && setState({ data: undefined, error, loading: false }),
    );
    return () => abort.abort();
  }, deps);
  return state;
}
