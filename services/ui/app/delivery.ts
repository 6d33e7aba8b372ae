import { useEffect, useState } from 'preact/hooks';
import { ApiError, post } from './api';
import type { ProjectDelivery } from './types';

/**
 * A project's delivery counts and lag (/project/delivery), read again every `everyMs` while shown;
 * after a refusal (a project the key may not read) it is not asked again.
 */
export function useDelivery(projectId: string, everyMs: number): { data?: ProjectDelivery; error?: unknown } {
  const [state, setState] = useState<{ data?: ProjectDelivery; error?: unknown }>({});
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      post<ProjectDelivery>('/project/delivery', { project_id: projectId }, abort.signal).then(
        (data) => {
          setState({ data });
          if (!abort.signal.aborted) timer = setTimeout(read, everyMs);
        },
        (error: unknown) => {
          if (abort.signal.aborted) return;
          setState((st) => ({ data: st.data, error }));
          // A refusal (401, 403, 404) stays one: not asked again. A server error or a lost
          // connection may pass: asked again, six times less often.
          if (!(error instanceof ApiError && error.status >= 400 && error.status < 500)) timer = setTimeout(read, everyMs * 6);
        },
      );
    void read();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [projectId, everyMs]);
  return state;
}

/** Seconds as the lag is read: `0.4 s`, `42 s`, `3 min 5 s`. */
export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '—';
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}
