import type { CallsQueryStatsReq, CallsStreamQueryReq, Call } from '@weft/api';
import { buildCallsQuery, buildCallsStatsQuery } from '@weft/query';
import { callFromRow, type MergedCallRow, type Store } from '@weft/store';

/** Streams merged calls as ClickHouse returns them; `signal` cancels the query. */
export async function* streamCalls(store: Store, req: CallsStreamQueryReq, signal: AbortSignal): AsyncGenerator<Call> {
  const { sql, params } = buildCallsQuery(req);
  const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow', abort_signal: signal });
  for await (const rows of rs.stream<MergedCallRow>()) {
    for (const row of rows) yield callFromRow(row.json());
  }
}

export async function countCalls(store: Store, req: CallsQueryStatsReq): Promise<{ count: number }> {
  const { sql, params } = buildCallsStatsQuery(req);
  const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  const [row] = await rs.json<{ count: number }>();
  return { count: Number(row?.count ?? 0) };
}
