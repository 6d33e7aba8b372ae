import { isAdditive, OTHER_VALUE } from '@weft/analytics';
import { post } from './api';
import type { MetricsAnswer, MetricsQueryBody as Body } from './dashboard';

/**
 * A dashboard's /analytics/query requests, shared. Each one is a scan of the project's calls (or
 * their facts), and the engine runs them one after another, so the charts' queries are merged:
 * requests made in the same turn that differ only in their metrics go out once with all of them
 * (a chart reads its own), and a `top` over counts and sums is folded here from the whole answer
 * (the same rows the server's `top` gives), so "Cost per op" and the ops table share one scan.
 * A merged answer cut at its limit, or a merged request refused, is asked again per chart: a
 * chart's answer and its error are always its own.
 */

type Row = Record<string, unknown>;

interface Waiting {
  body: Body;
  resolve: (a: MetricsAnswer) => void;
  reject: (e: unknown) => void;
}

type Totals = Record<string, number | null>;
interface TotalsWaiting {
  body: Body;
  resolve: (t: Totals) => void;
  reject: (e: unknown) => void;
}

/** The bodies asked for in this turn, grouped; totals ride with a group over the same calls. */
interface Group {
  waiting: Waiting[];
  totals: TotalsWaiting[];
}

let pending: Waiting[] = [];
let pendingTotals: TotalsWaiting[] = [];

function later<T extends { reject: (e: unknown) => void }>(queue: T[], item: T, signal?: AbortSignal): void {
  signal?.addEventListener('abort', () => item.reject(signal.reason), { once: true });
  if (pending.length === 0 && pendingTotals.length === 0) setTimeout(flush, 0);
  queue.push(item);
}

/** The answer to one /analytics/query body, sent merged with the other bodies asked for in this turn. */
export function queryMetrics(body: Body, signal?: AbortSignal): Promise<MetricsAnswer> {
  return new Promise<MetricsAnswer>((resolve, reject) => later(pending, { body, resolve, reject }, signal));
}

/**
 * Each of `body`'s metrics over every call it matches (no dimension): the `totals` of a chart query
 * over the same calls asked for in this turn (the server computes them in that query's scan),
 * else a query of their own.
 */
export function queryTotals(body: Body, signal?: AbortSignal): Promise<Totals> {
  return new Promise<Totals>((resolve, reject) => later(pendingTotals, { body, resolve, reject }, signal));
}

function flush(): void {
  const groups = new Map<string, Group>();
  for (const w of pending) {
    const key = groupKey(w.body);
    const group = groups.get(key) ?? { waiting: [], totals: [] };
    group.waiting.push(w);
    groups.set(key, group);
  }
  for (const t of pendingTotals) {
    // The group over the same calls whose metrics hold the most of the totals' (no metric added, often).
    const hosts = [...groups.values()].filter((g) => scopeKey(g.waiting[0]!.body) === scopeKey(t.body));
    const shared = (g: Group) => t.body.metrics.filter((m) => g.waiting.some((w) => w.body.metrics.includes(m))).length;
    const host = hosts.sort((a, b) => shared(b) - shared(a))[0];
    if (host) host.totals.push(t);
    else void totalsAlone(t);
  }
  pending = [];
  pendingTotals = [];
  for (const group of groups.values()) void send(group);
}

/** Whether a body's `top` is folded here: its dimension's counts come with the answer, and every metric adds up. */
const foldsTop = (b: Body) => b.top !== undefined && b.order_by === undefined && b.metrics.every(isAdditive);

/** What the server is asked for this body when merged: without its metrics, and without a `top` folded here. */
function shared(b: Body): Record<string, unknown> {
  const { metrics: _metrics, top, ...rest } = b;
  return foldsTop(b) ? rest : { ...rest, top };
}

// Bodies are built by one function (dashboard.ts chartQuery), so equal bodies serialize alike; a
// key list passed to JSON.stringify would also drop the nested filter's members.
const groupKey = (b: Body) => JSON.stringify(shared(b));

/** The calls a body is over (its project, filter, query and range), whatever it groups them by. */
const scopeKey = (b: Body) => JSON.stringify([b.project_id, b.filter ?? {}, b.query ?? null, b.from ?? null, b.to ?? null]);

async function send({ waiting, totals }: Group): Promise<void> {
  if (totals.length === 0 && waiting.length === 1 && !foldsTop(waiting[0]!.body)) return alone(waiting[0]!);
  const metrics = [
    ...new Set([
      ...waiting.flatMap((w) => [...w.body.metrics, ...(foldsTop(w.body) ? ['count'] : [])]),
      ...totals.flatMap((t) => t.body.metrics),
    ]),
  ];
  let answer: MetricsAnswer;
  try {
    answer = await post<MetricsAnswer>('/analytics/query', {
      ...shared(waiting[0]!.body),
      metrics,
      ...(totals.length ? { totals: true } : {}),
    });
  } catch {
    // One chart's bad metric must not take the others' answers: each asks alone.
    for (const w of waiting) void alone(w);
    for (const t of totals) void totalsAlone(t);
    return;
  }
  // The totals count every matched call, whether or not the rows were cut at their limit.
  for (const t of totals) if (!resolveTotals(t, answer)) void totalsAlone(t);
  for (const w of waiting) {
    if (answer.truncated) void alone(w);
    else w.resolve({ ...answer, rows: ordered(foldsTop(w.body) ? folded(answer.rows, w.body) : answer.rows, w.body) });
  }
}

async function totalsAlone(t: TotalsWaiting): Promise<void> {
  try {
    const answer = await post<MetricsAnswer>('/analytics/query', { ...t.body, dimensions: [], totals: true });
    if (!resolveTotals(t, answer)) t.reject(new Error('/analytics/query answered without totals'));
  } catch (e) {
    t.reject(e);
  }
}

/** The totals' own metrics from an answer's `totals`; false when it has none. */
function resolveTotals(t: TotalsWaiting, answer: MetricsAnswer): boolean {
  if (!answer.totals) return false;
  t.resolve(Object.fromEntries(t.body.metrics.map((m) => [m, answer.totals![m] ?? null])));
  return true;
}

async function alone(w: Waiting): Promise<void> {
  try {
    w.resolve(await post<MetricsAnswer>('/analytics/query', w.body));
  } catch (e) {
    w.reject(e);
  }
}

/** The rows with the `top` dimension's values outside its n with the most calls folded into one (ties: the smaller value first). */
function folded(rows: Row[], b: Body): Row[] {
  const { dimension, n } = b.top!;
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
    const key = JSON.stringify((b.dimensions ?? []).map((d) => row[d]));
    const into = out.get(key);
    if (!into) out.set(key, row);
    else for (const m of new Set([...b.metrics, 'count'])) into[m] = Number(into[m]) + Number(row[m]);
  }
  return [...out.values()];
}

/**
 * The rows in the order the server gives them for this body alone (its `order_by`, the same for
 * every body merged, or by default its first metric, descending, or time; then every dimension).
 */
function ordered(rows: Row[], b: Body): Row[] {
  if (b.order_by !== undefined) return rows;
  const dims = b.dimensions ?? [];
  const first = dims.includes('time') ? { field: 'time', desc: false } : { field: b.metrics[0]!, desc: true };
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

/** Ascending, NULLs last (the server's order for a dimension's values). */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [typeof a === 'object' ? JSON.stringify(a) : String(a), typeof b === 'object' ? JSON.stringify(b) : String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
