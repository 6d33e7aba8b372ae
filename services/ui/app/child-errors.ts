import { postJsonl } from './api';
import { callStatus } from './format';
import type { Call } from './types';

/**
 * Trace roots that say "success" though a call under them failed: OTLP roots, whose spans carry
 * no counts of their children's errors (the Weave SDK's roots have `summary.status_counts`, and
 * the server derives their status from it). One request per page of the calls table: the
 * failed calls of those roots' traces.
 */
export function rootsToCheck(rows: Call[]): Call[] {
  return rows.filter((c) => !c.parent_id && callStatus(c) === 'success' && !c.summary?.status_counts);
}

/** Trace ids (among these roots') where some call failed. */
export async function tracesWithErrors(projectId: string, roots: Call[], signal?: AbortSignal): Promise<Set<string>> {
  const traceIds = [...new Set(roots.map((c) => c.trace_id))];
  if (traceIds.length === 0) return new Set();
  const failed = await postJsonl<{ trace_id: string }>(
    '/calls/stream_query',
    {
      project_id: projectId,
      filter: { trace_ids: traceIds },
      query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] } },
      columns: ['id', 'trace_id'],
      limit: 10_000,
    },
    signal,
  );
  return new Set(failed.map((c) => c.trace_id));
}
