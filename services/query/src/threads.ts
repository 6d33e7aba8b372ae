import type { ThreadsStreamQueryReq } from '@weft/api';
import { clickHouseToIso } from '@weft/core';
import { buildThreadsQuery, threadCandidatesQuery } from '@weft/query';
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

const asThread = (t: ThreadRow): ThreadRow => ({
  ...t,
  turn_count: Number(t.turn_count),
  start_time: clickHouseToIso(t.start_time),
  last_updated: clickHouseToIso(t.last_updated),
  first_turn_id: t.first_turn_id || null,
  last_turn_id: t.last_turn_id || null,
});

/**
 * Streams thread statistics as ClickHouse returns them (one row per thread). A page sorted on
 * what the turn calls alone decide is computed for its candidate threads only, when they are
 * enough (threadCandidatesQuery); otherwise one query over every thread of the window.
 */
export async function* streamThreads(store: Store, req: ThreadsStreamQueryReq, signal: AbortSignal): AsyncGenerator<ThreadRow> {
  const cq = threadCandidatesQuery(req);
  if (cq) {
    const found = await store.rows<{ thread_id: string }>(cq.sql, cq.params, { name: 'threads.candidates', signal });
    const candidates = found.map((r) => r.thread_id);
    const q = buildThreadsQuery(req, candidates);
    const rows = candidates.length ? await store.rows<ThreadRow>(q.sql, q.params, { name: 'threads.ofCandidates', signal }) : [];
    if (rows.length >= cq.want || candidates.length < cq.max) {
      const from = req.offset ?? 0;
      for (const t of rows.slice(from, from + req.limit!)) yield asThread(t);
      return;
    }
  }
  const { sql, params } = buildThreadsQuery(req);
  for await (const r of store.streamRows<ThreadRow>(sql, params, { name: 'threads.stream', signal })) yield asThread(r);
}
