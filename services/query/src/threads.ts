import type { ThreadsStreamQueryReq } from '@weft/api';
import { clickHouseToIso } from '@weft/core';
import { buildThreadsQuery } from '@weft/query';
import type { Store } from '@weft/store';

interface ThreadRow {
  thread_id: string;
  turn_count: number;
  start_time: string;
  last_updated: string;
  first_turn_id: string | null;
  last_turn_id: string | null;
  p50_turn_duration_ms: number | null;
  p99_turn_duration_ms: number | null;
}

/** Streams thread statistics as ClickHouse returns them (one row per thread). */
export async function* streamThreads(store: Store, req: ThreadsStreamQueryReq, signal: AbortSignal): AsyncGenerator<ThreadRow> {
  const { sql, params } = buildThreadsQuery(req);
  const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow', abort_signal: signal });
  for await (const rows of rs.stream<ThreadRow>()) {
    for (const r of rows) {
      const t = r.json();
      yield {
        ...t,
        turn_count: Number(t.turn_count),
        start_time: clickHouseToIso(t.start_time),
        last_updated: clickHouseToIso(t.last_updated),
        first_turn_id: t.first_turn_id || null,
        last_turn_id: t.last_turn_id || null,
      };
    }
  }
}
