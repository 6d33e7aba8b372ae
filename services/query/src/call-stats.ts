import type { RouteRequestOf } from '@weft/api';
import { microsToIso, nowMicros, parseTimestampMicros } from '@weft/core';
import { CallStatsPlan, callStatsGranularity } from '@weft/query';
import type { Store } from '@weft/store';

/** POST /calls/stats: the reference's CallStatsRes, buckets as rows of `timestamp`, (`model`,) aggregates, `count`. */
export async function callStats(store: Store, req: RouteRequestOf<'callStats'>, signal: AbortSignal) {
  const startMicros = parseTimestampMicros(req.start)!;
  const endMicros = req.end === undefined ? nowMicros() : parseTimestampMicros(req.end)!;
  const asked = (req.usage_metrics?.length ?? 0) + (req.call_metrics?.length ?? 0) > 0;
  const granularity = asked ? callStatsGranularity((endMicros - startMicros) / 1e6, req.granularity) : 0;
  const plan = new CallStatsPlan(req, startMicros, endMicros, granularity || 1);
  const run = async (q: { sql: string; params: Record<string, unknown>; columns: string[] } | null) => {
    if (!q) return [];
    return (await store.rows<Record<string, unknown>>(q.sql, q.params, { name: 'call-stats.callStats', signal })).map((r) => {
      const out: Record<string, unknown> = {};
      for (const c of q.columns) out[c] = c === 'timestamp' || c === 'model' || r[c] === null ? r[c] : Number(r[c]);
      return out;
    });
  };
  const [usage_buckets, call_buckets] = await Promise.all([run(plan.usageQuery()), run(plan.callsQuery())]);
  return { start: microsToIso(startMicros), end: microsToIso(endMicros), granularity, timezone: req.timezone, usage_buckets, call_buckets };
}
