import { USAGE_ENTRY_FIGURES } from '@weft/analytics';
import { latencySql } from './call-json';
import { JSON_ROOTS } from './call-fields';
import { CallsQueryPlan } from './calls';
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
  // A time bound is read on calls_ends first (its ended_at index): only the window's calls are
  // read on either side (their start rows by id, and for own usage the children of theirs).
  const after =
    req.endedAfterUs !== undefined ? `fromUnixTimestamp64Micro(${p.add(Math.floor(req.endedAfterUs), 'Int64')}, 'UTC')` : undefined;
  const ended = after ? `ended_at >= ${after}` : 'ended_at IS NOT NULL';
  const windowIds = `(${endedCallIdsSql(plan.projectParam, ended)})`;
  const columns = ['started_at', 'ended_at', ...value.columns];
  let calls = after
    ? plan.matchedCallsSql(p, columns, ended, { cond: `id IN ${windowIds}`, small: false })
    : plan.matchedCallsSql(p, columns);
  if (value.columns.includes('usage')) {
    const parents = after ? { parents: windowIds } : undefined;
    calls = withOwnUsageSql(calls, ['id', 'started_at', 'ended_at', ...value.columns], plan.projectParam, parents);
  }
  const rows = `SELECT id, ended_at, ${value.num} AS num, ${value.text} AS text FROM (${calls}) WHERE ${ended}`;
  const sql = `SELECT id, num, text FROM (${rows}) WHERE text IS NOT NULL ORDER BY ended_at DESC, id DESC${
    req.last !== undefined ? ` LIMIT ${p.int(req.last)}` : ''
  }`;
  return { sql, p };
}

/** A metric's value as (num, text) over a matched call's columns, and the columns it reads. */
function valueOf(metric: string, p: Params, projectSql: string): { num: string; text: string; columns: string[] } {
  const numeric = (num: string, columns: string[]) => ({ num: `toNullable(toFloat64(${num}))`, text: `toString(num)`, columns });
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
      return { num: `toNullable(toFloat64(${cost}))`, text: `if(num IS NULL, NULL, toString(num))`, columns: ['usage'] };
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
    num: `multiIf(${raw} = 'true', toNullable(1.), ${raw} = 'false', toNullable(0.), toFloat64OrNull(text))`,
    text: `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), toNullable(JSONExtractString(${raw})), toNullable(${raw}))`,
    columns: [dump],
  };
}
