import type { Call } from '@weft/api';
import type { Store } from '@weft/store';
import { callSizesSql, CallsQueryPlan, traceSizesSql } from './calls';
import { Params } from './params';

/**
 * Reads of the calls a plan matches (the query compiler's matchedCallsSql), for the services'
 * workers and routes that want columns of calls rather than the interface's stream: a page of
 * them oldest first, a trace's calls with whether each ended, their storage sizes.
 */

/**
 * The `columns` (and id) of the calls `plan` matches, oldest first (started_at, then id); a page
 * of them when `page` says so. `name` names the statement (its timing and log_comment).
 */
export async function matchedCallsOldestFirst<T>(
  store: Store,
  plan: CallsQueryPlan,
  columns: string[],
  page: { limit?: number; offset?: number },
  name: string,
): Promise<T[]> {
  const p = plan.params;
  let sql = `SELECT * FROM (${plan.matchedCallsSql(p, columns)}) ORDER BY started_at, id`;
  if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
  if (page.offset) sql += `${page.limit !== undefined ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(page.offset)}`;
  return store.rows<T>(sql, p.values, { name });
}

/** A call of a trace as a run's progress reads it (`ended`: 1 once it ended). */
export interface TraceCallRow {
  id: string;
  parent_id: string | null;
  op_name: string | null;
  inputs_dump: string | null;
  ended: number;
  output_dump: string | null;
  exception: string | null;
  summary_dump: string | null;
}

/** Every call of a trace, with its inputs, whether it ended, its output, exception and summary. */
export async function traceCalls(store: Store, projectId: string, traceId: string, name: string): Promise<TraceCallRow[]> {
  const plan = new CallsQueryPlan({ project_id: projectId, filter: { trace_ids: [traceId] }, sort_by: [] });
  const p = plan.params;
  const cols = ['parent_id', 'op_name', 'inputs_dump', 'ended_at', 'output_dump', 'exception', 'summary_dump'];
  return store.rows<TraceCallRow>(
    `SELECT id, parent_id, op_name, inputs_dump, ended_at IS NOT NULL AS ended, output_dump, exception, summary_dump
        FROM (${plan.matchedCallsSql(p, cols)})`,
    p.values,
    { name },
  );
}

/** The inputs and output of calls, by id (as the calls a plan of their ids matches). */
export async function callInputsAndOutputs(
  store: Store,
  projectId: string,
  ids: string[],
  name: string,
): Promise<{ id: string; inputs_dump: string | null; output_dump: string | null }[]> {
  const plan = new CallsQueryPlan({ project_id: projectId, filter: { call_ids: ids }, sort_by: [] });
  const p = plan.params;
  return store.rows<{ id: string; inputs_dump: string | null; output_dump: string | null }>(
    `SELECT id, inputs_dump, output_dump FROM (${plan.matchedCallsSql(p, ['inputs_dump', 'output_dump'])})`,
    p.values,
    { name },
  );
}

/**
 * Storage sizes for a batch of calls, from the size columns of calls_starts and calls_ends: per call, and per trace (summed
 * over every call of the trace; only asked for the batch's roots).
 */
export async function callStorageSizes(
  store: Store,
  projectId: string,
  calls: Call[],
  want: { perCall: boolean; perTrace: boolean },
): Promise<{ perCall: Map<string, number>; perTrace: Map<string, number> }> {
  const perCall = new Map<string, number>();
  const perTrace = new Map<string, number>();
  if (want.perCall && calls.length) {
    const p = new Params();
    const sql = callSizesSql(p.str(projectId), `id IN ${p.strArray(calls.map((c) => c.id))}`);
    for (const r of await store.rows<{ id: string; storage_size_bytes: number }>(sql, p.values, { name: 'storage.callStorageSizes' }))
      perCall.set(r.id, Number(r.storage_size_bytes));
  }
  const traces = [...new Set(calls.filter((c) => c.parent_id === null && c.trace_id).map((c) => c.trace_id))];
  if (want.perTrace && traces.length) {
    const p = new Params();
    const sql = traceSizesSql(p.str(projectId), `SELECT arrayJoin(${p.strArray(traces)})`);
    for (const r of await store.rows<{ trace_id: string; total_storage_size_bytes: number }>(sql, p.values, {
      name: 'storage.callStorageSizes',
    })) {
      perTrace.set(r.trace_id, Number(r.total_storage_size_bytes));
    }
  }
  return { perCall, perTrace };
}
