import type { RouteRequestOf } from '@weft/api';
import { buildOwnUsageRowsQuery, rollUpUsage, traceIdsOf, type OwnUsageRow, type UsageByModel } from '@weft/query';
import type { Store } from '@weft/store';

interface UsageAnswer {
  call_usage: Record<string, UsageByModel>;
  unfinished_call_ids: string[];
}

async function usageOf(
  store: Store,
  req: Parameters<typeof buildOwnUsageRowsQuery>[0],
  limit: number,
  withCosts: boolean,
  signal: AbortSignal,
): Promise<{ usage: Record<string, UsageByModel>; unfinished: string[] }> {
  const { sql, params } = buildOwnUsageRowsQuery(req, limit, withCosts);
  const rows = await store.rows<OwnUsageRow>(sql, params, { name: 'usage.usageOf', signal });
  const unfinished = rows
    .filter((r) => Number(r.running) === 1)
    .map((r) => r.id)
    .sort();
  return { usage: rollUpUsage(rows, withCosts), unfinished };
}

/** POST /trace/usage: every matched call's usage with its matched descendants'. */
export async function traceUsage(store: Store, req: RouteRequestOf<'traceUsage'>, signal: AbortSignal): Promise<UsageAnswer> {
  const { usage, unfinished } = await usageOf(store, req, req.limit, req.include_costs, signal);
  return { call_usage: usage, unfinished_call_ids: unfinished };
}

/** POST /calls/usage: each named call's usage with its descendants' (read over the calls' traces); `{}` for an unknown id. */
export async function callsUsage(store: Store, req: RouteRequestOf<'callsUsage'>, signal: AbortSignal): Promise<UsageAnswer> {
  if (req.call_ids.length === 0) return { call_usage: {}, unfinished_call_ids: [] };
  const traces = await traceIdsOf(store, req.project_id, req.call_ids, signal);
  const found = traces.length
    ? await usageOf(store, { project_id: req.project_id, filter: { trace_ids: traces } }, req.limit, req.include_costs, signal)
    : { usage: {}, unfinished: [] };
  const call_usage: Record<string, UsageByModel> = {};
  for (const id of req.call_ids) call_usage[id] = found.usage[id] ?? {};
  return { call_usage, unfinished_call_ids: found.unfinished };
}
