import { USAGE_ENTRY_FIGURES } from '@weft/analytics';
import { latencySql } from './call-json';
import { JSON_ROOTS } from './call-fields';
import { CallsQueryPlan, opNamesCondSql } from './calls';
import { callTotalCostSql } from './costs';
import { splitFieldPath } from './expr';
import { withOwnUsageSql } from './own-usage';
import type { Params } from './params';
import { endedCallIdsSql } from './repositories/calls';

/**
 * The per-call figures of the analytics catalogue (docs/analytics.md) a window's value can be,
 * beside a dotted path into the call: `latency` (ms), `tokens` (the call's own total tokens),
 * `cost` (its own, USD; NULL when no model of it has a price), `error` (1 when it raised, else 0)
 * and `status` (success, error, descendant_error: text only).
 */
export const CALL_FIGURES = ['latency', 'tokens', 'cost', 'error', 'status'] as const;
export type CallFigure = (typeof CALL_FIGURES)[number];

export interface CallWindowReq {
  project_id: string;
  /** Op refs (`…:*` for every version), as the calls filter's op_names; none: every op. */
  op_names?: string[];
  /** A figure (CALL_FIGURES) or a dotted path under inputs., output., attributes. or summary. */
  metric: string;
  /** Only calls that ended at or after this time (µs since the epoch). */
  endedAfterUs?: number;
  /** Only the latest `last` calls (by end) that have a value. */
  last?: number;
}

/**
 * The rows of a window of ended calls, each with its value at `metric`: `num` (a number:
 * JSON numbers, booleans as 1/0, numeric strings) and `text` (the value as text: a JSON string
 * unquoted, anything else as written). Calls without a value at the path are not in the window
 * (so "the last 10" are the last 10 that have one). A call joins a window when it ends (its
 * output and figures exist from then on), so windows are by end time. Newest first; the caller aggregates them, so
 * a figure is exactly what the same calls give when read one by one. `p` is the query's
 * parameters, which the caller may extend before sending `p.values`.
 */
export function callWindowSql(req: CallWindowReq): { sql: string; p: Params } {
  const plan = new CallsQueryPlan({
    project_id: req.project_id,
    filter: req.op_names?.length ? { op_names: req.op_names } : undefined,
    sort_by: [],
  });
  const p = plan.params;
  const value = valueOf(req.metric, p, plan.projectParam);
  const { calls, ended } = windowCallsSql(plan, p, ['started_at', 'ended_at', ...value.columns], req.endedAfterUs);
  const rows = `SELECT id, ended_at, ${value.num} AS num, ${value.text} AS text FROM (${calls}) WHERE ${ended}`;
  const sql = `SELECT id, num, text FROM (${rows}) WHERE text IS NOT NULL ORDER BY ended_at DESC, id DESC${
    req.last !== undefined ? ` LIMIT ${p.int(req.last)}` : ''
  }`;
  return { sql, p };
}

/**
 * Many windows' rows in one scan (the alert worker's batched pass, libs/objects alert-windows.ts):
 * every ended call of the project in any of the scopes, once, with `at` (its end, µs), `op_name`,
 * and its value at each of `metrics` as `nums[i]`/`texts[i]` (1-based, in the order given; the
 * same values as callWindowSql's num and text). `member(op_names)` is the SQL condition on a row
 * that it is in a scope (none: every op). `p` holds the parameters; the caller may add to it.
 */
export function callWindowsRowsSql(req: {
  project_id: string;
  /** Every scope's op refs; null when a window reads every op of the project. */
  op_names: string[] | null;
  metrics: string[];
  /** Only calls that ended at or after this time (µs): the oldest window start, or a look-back span. */
  endedAfterUs?: number;
}): { sql: string; p: Params; member: (opNames: string[]) => string } {
  const plan = new CallsQueryPlan({
    project_id: req.project_id,
    filter: req.op_names?.length ? { op_names: req.op_names } : undefined,
    sort_by: [],
  });
  const p = plan.params;
  const values = req.metrics.map((m, i) => valueOf(m, p, plan.projectParam, { num: `num_${i}`, text: `text_${i}` }));
  const columns = [...new Set(['op_name', 'started_at', 'ended_at', ...values.flatMap((v) => v.columns)])];
  const { calls, ended } = windowCallsSql(plan, p, columns, req.endedAfterUs);
  const each = values.map((v, i) => `${v.num} AS num_${i}, ${v.text} AS text_${i}`).join(', ');
  const rows = `SELECT id, toUnixTimestamp64Micro(ended_at) AS at, op_name, ${each} FROM (${calls}) WHERE ${ended}`;
  const sql = `SELECT id, at, op_name, [${values.map((_, i) => `num_${i}`).join(', ')}] AS nums, [${values
    .map((_, i) => `text_${i}`)
    .join(', ')}] AS texts FROM (${rows})`;
  return { sql, p, member: (opNames) => (opNames.length ? opNamesCondSql(opNames, p) : '1') };
}

/**
 * The matched calls of a window with `columns` (parameters in `p`, the plan's own) (own usage when `usage` is among them), and the
 * condition of having ended (since `endedAfterUs`, when given). A time bound is read on
 * calls_ends first (its ended_at index): only those calls' start rows are read, and for own
 * usage only their children.
 */
function windowCallsSql(
  plan: CallsQueryPlan,
  p: Params,
  columns: string[],
  endedAfterUs: number | undefined,
): { calls: string; ended: string } {
  if (endedAfterUs === undefined) {
    const calls = plan.matchedCallsSql(p, columns);
    return {
      calls: columns.includes('usage') ? withOwnUsageSql(calls, ['id', ...columns], plan.projectParam) : calls,
      ended: 'ended_at IS NOT NULL',
    };
  }
  const ended = `ended_at >= fromUnixTimestamp64Micro(${p.add(Math.floor(endedAfterUs), 'Int64')}, 'UTC')`;
  const ids = `(${endedCallIdsSql(plan.projectParam, ended)})`;
  const calls = plan.matchedCallsSql(p, columns, ended, { cond: `id IN ${ids}`, small: false });
  return {
    calls: columns.includes('usage') ? withOwnUsageSql(calls, ['id', ...columns], plan.projectParam, { parents: ids }) : calls,
    ended,
  };
}

/**
 * A metric's value as (num, text) over a matched call's columns, and the columns it reads; each
 * expression may name the other by its alias (`names`).
 */
function valueOf(
  metric: string,
  p: Params,
  projectSql: string,
  names = { num: 'num', text: 'text' },
): { num: string; text: string; columns: string[] } {
  const numeric = (num: string, columns: string[]) => ({ num: `toNullable(toFloat64(${num}))`, text: `toString(${names.num})`, columns });
  switch (metric as CallFigure) {
    case 'latency':
      return numeric(latencySql, []);
    case 'error':
      return numeric('exception IS NOT NULL', ['exception']);
    case 'status':
      return { num: `CAST(NULL, 'Nullable(Float64)')`, text: `toNullable(if(status = '', 'running', status))`, columns: ['status'] };
    case 'tokens':
      return numeric(`arraySum(u -> ${USAGE_ENTRY_FIGURES.own_total_tokens}, usage)`, ['usage']);
    case 'cost': {
      const cost = callTotalCostSql(projectSql, 'usage');
      return { num: `toNullable(toFloat64(${cost}))`, text: `if(${names.num} IS NULL, NULL, toString(${names.num}))`, columns: ['usage'] };
    }
  }
  const [root, ...rest] = splitFieldPath(metric);
  if (!(JSON_ROOTS as readonly string[]).includes(root!) || rest.length === 0 || rest.some((k) => k === '')) {
    throw new Error(`'${metric}' is neither a figure (${CALL_FIGURES.join(', ')}) nor a path under ${JSON_ROOTS.join('., ')}.`);
  }
  const dump = `${root}_dump`;
  const keys = rest.map((k) => (/^\d+$/.test(k) && k.length < 10 ? p.add(Number(k) + 1, 'Int64') : p.str(k))).join(', ');
  const raw = `JSONExtractRaw(ifNull(${dump}, ''), ${keys})`;
  return {
    num: `multiIf(${raw} = 'true', toNullable(1.), ${raw} = 'false', toNullable(0.), toFloat64OrNull(${names.text}))`,
    text: `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), toNullable(JSONExtractString(${raw})), toNullable(${raw}))`,
    columns: [dump],
  };
}
