import type { Call } from '@weft/api';
import { callSizesSql, Params, traceSizesSql } from '@weft/query';
import type { Store } from '@weft/store';

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
