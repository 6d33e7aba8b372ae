import { isAdditive, OTHER_VALUE } from '@weft/analytics';
import { analyticsQueryReq, parseBody, type AnalyticsQueryReq, type AnalyticsQueryRes } from '@weft/api';
import { MetricsQueryPlan } from './planner';

/**
 * /analytics/batch: a dashboard's queries answered together. Each query over the calls is a scan
 * of them (or of their facts), so queries that differ only in their metrics are asked once with
 * all of them; a `top` over metrics that add up is folded here from the whole answer (the rows the
 * engine's `top` gives that query alone), so "Cost per op" (top 12) and the ops table share one
 * scan; a query without dimensions rides as the `totals` of a query over the same calls. Each
 * answer is the one /analytics/query gives that query alone.
 */

type Row = Record<string, unknown>;

/**
 * A batch query checked as /analytics/query checks it (its body, then its plan), with the
 * batch's project: the ApiError it alone would get is thrown.
 */
export function checkBatchQuery(projectId: string, body: Record<string, unknown>): AnalyticsQueryReq {
  const req = parseBody(analyticsQueryReq, { ...body, project_id: projectId });
  // `auto` is resolved to a width before planning: any width checks the rest.
  new MetricsQueryPlan(req.bucket === 'auto' ? { ...req, bucket: undefined, bucket_seconds: 60 } : req);
  return req;
}

/** The request a group runs, and the batch's queries it answers (their index). */
export interface BatchGroup {
  request: AnalyticsQueryReq;
  members: number[];
}

/** Whether a query's `top` is folded from a whole answer: every metric adds up (and `count` ranks the values). */
const foldsTop = (q: AnalyticsQueryReq) => q.top !== undefined && q.order_by === undefined && q.metrics.every(isAdditive);

/** What a group asks the engine, but its metrics (and totals): a folded `top` is not asked for. */
function shared(q: AnalyticsQueryReq): Partial<AnalyticsQueryReq> {
  const { metrics: _m, totals: _t, top, ...rest } = q;
  return foldsTop(q) ? rest : { ...rest, top };
}
// A parsed request's keys come in the schema's order: equal requests serialize alike.
const groupKey = (q: AnalyticsQueryReq) => JSON.stringify(shared(q));
/** The calls a query is over, whatever it groups them by. */
const scopeKey = (q: AnalyticsQueryReq) => JSON.stringify([q.filter ?? null, q.query ?? null, q.from ?? null, q.to ?? null]);
/** A query answered by another's totals: no dimension, nothing that orders or cuts its one row. */
const rides = (q: AnalyticsQueryReq) => q.dimensions.length === 0 && q.top === undefined && q.order_by === undefined;

/** The batch's checked queries (undefined: refused) in groups, each one request. */
export function planBatch(queries: readonly (AnalyticsQueryReq | undefined)[]): BatchGroup[] {
  const groups = new Map<string, { members: number[]; riders: number[] }>();
  const riders: number[] = [];
  queries.forEach((q, i) => {
    if (!q) return;
    if (rides(q)) return riders.push(i);
    const key = groupKey(q);
    const g = groups.get(key) ?? { members: [], riders: [] };
    g.members.push(i);
    groups.set(key, g);
  });
  for (const i of riders) {
    const q = queries[i]!;
    // The group over the same calls holding the most of its metrics.
    const held = (g: { members: number[] }) => q.metrics.filter((m) => g.members.some((j) => queries[j]!.metrics.includes(m))).length;
    const host = [...groups.values()].filter((g) => scopeKey(queries[g.members[0]!]!) === scopeKey(q)).sort((a, b) => held(b) - held(a))[0];
    if (host) host.riders.push(i);
    else {
      // With the other queries without dimensions over the same calls: one row each, whatever their limit.
      const key = `totals ${scopeKey(q)}`;
      const g = groups.get(key) ?? { members: [], riders: [] };
      g.members.push(i);
      groups.set(key, g);
    }
  }
  return [...groups.values()].map(({ members, riders: rs }) => {
    const all = [...members, ...rs].map((i) => queries[i]!);
    const first = queries[members[0]!]!;
    if (members.length === 1 && rs.length === 0 && !foldsTop(first)) return { request: first, members };
    const metrics = [...new Set([...all.flatMap((q) => [...q.metrics, ...(foldsTop(q) ? ['count'] : [])])])];
    const totals = rs.length > 0 || all.some((q) => q.totals);
    return { request: { ...shared(first), metrics, totals } as AnalyticsQueryReq, members: [...members, ...rs] };
  });
}

/**
 * A query's answer from its group's: its rows (folded, ordered and cut to its own names) or, for
 * a query without dimensions, the group's totals. Undefined when the group's answer cannot give it
 * (cut at its limit, or without totals): the query is then asked alone.
 */
export function answerFrom(q: AnalyticsQueryReq, group: AnalyticsQueryRes, request: AnalyticsQueryReq): AnalyticsQueryRes | undefined {
  const own = (r: Record<string, unknown> | undefined) => r && Object.fromEntries(q.metrics.map((m) => [m, r[m] ?? null]));
  if (q.dimensions.length === 0 && request.dimensions.length > 0) {
    if (!group.totals) return undefined;
    const totals = own(group.totals) as Record<string, number | null>;
    return { rows: [totals], truncated: false, ...(q.totals ? { totals } : {}) };
  }
  if (group.truncated) return undefined;
  if (q.totals && !group.totals) return undefined;
  const rows = ordered(foldsTop(q) && request.top === undefined ? folded(group.rows, q) : group.rows, q).map((r) => ({
    ...Object.fromEntries(q.dimensions.map((d) => [d, r[d]])),
    ...own(r),
  }));
  return {
    rows,
    truncated: false,
    ...(group.bucket_seconds !== undefined ? { bucket_seconds: group.bucket_seconds } : {}),
    ...(q.totals ? { totals: own(group.totals) as Record<string, number | null> } : {}),
  };
}

/** The rows with the `top` dimension's values outside its n with the most calls folded into one (ties: the smaller value first). */
function folded(rows: Row[], q: AnalyticsQueryReq): Row[] {
  const { dimension, n } = q.top!;
  const calls = new Map<unknown, number>();
  for (const r of rows) calls.set(r[dimension], (calls.get(r[dimension]) ?? 0) + Number(r.count));
  const kept = new Set(
    [...calls.entries()]
      .sort((x, y) => y[1] - x[1] || compare(x[0], y[0]))
      .slice(0, n)
      .map(([v]) => v),
  );
  const out = new Map<string, Row>();
  for (const r of rows) {
    const row: Row = { ...r, [dimension]: kept.has(r[dimension]) ? r[dimension] : OTHER_VALUE };
    const key = JSON.stringify(q.dimensions.map((d) => row[d]));
    const into = out.get(key);
    if (!into) out.set(key, row);
    else for (const m of new Set([...q.metrics, 'count'])) into[m] = Number(into[m]) + Number(row[m]);
  }
  return [...out.values()];
}

/**
 * The rows in the order the engine gives them for this query alone (its `order_by`, the same for
 * every query of its group, or by default its first metric, descending, or time; then every dimension).
 */
function ordered(rows: Row[], q: AnalyticsQueryReq): Row[] {
  if (q.order_by !== undefined) return rows;
  const dims = q.dimensions;
  const first = dims.includes('time') ? { field: 'time', desc: false } : { field: q.metrics[0]!, desc: true };
  return [...rows].sort((x, y) => {
    const [u, v] = [x[first.field], y[first.field]];
    const c = compare(u, v);
    // Descending, NULLs still last.
    if (c !== 0) return first.desc && u !== null && u !== undefined && v !== null && v !== undefined ? -c : c;
    for (const d of dims) {
      const e = compare(x[d], y[d]);
      if (e !== 0) return e;
    }
    return 0;
  });
}

/** Ascending, NULLs last (the engine's order for a dimension's values). */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [typeof a === 'object' ? JSON.stringify(a) : String(a), typeof b === 'object' ? JSON.stringify(b) : String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
