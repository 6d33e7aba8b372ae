import type { CallFilter, CallsQueryStatsReq, CallsStreamQueryReq } from '@weft/api';
import { ApiError, badRequest } from '@weft/core';
import { Params, type BuiltQuery } from './params';

/** Columns of a merged call, each re-aggregated from calls_merged (merges are eventual). */
const MERGED_COLUMNS: Record<string, string> = {
  trace_id: 'any(trace_id)',
  parent_id: 'any(parent_id)',
  thread_id: 'any(thread_id)',
  turn_id: 'any(turn_id)',
  op_name: 'any(op_name)',
  display_name: 'argMaxMerge(display_name)',
  started_at: 'any(started_at)',
  ended_at: 'any(ended_at)',
  attributes_dump: 'any(attributes_dump)',
  inputs_dump: 'any(inputs_dump)',
  input_refs: 'groupUniqArrayArray(input_refs)',
  output_dump: 'any(output_dump)',
  output_refs: 'groupUniqArrayArray(output_refs)',
  summary_dump: 'any(summary_dump)',
  exception: 'any(exception)',
  otel_dump: 'any(otel_dump)',
  svc_user_id: 'any(svc_user_id)',
  svc_run_id: 'any(svc_run_id)',
  svc_run_step: 'any(svc_run_step)',
  svc_run_step_end: 'any(svc_run_step_end)',
  deleted_at: 'any(deleted_at)',
};

/** Plain call fields that filter and sort directly (outside the aggregation). */
export const SORTABLE_CALL_FIELDS = new Set([
  'id', 'project_id', 'trace_id', 'parent_id', 'thread_id', 'turn_id', 'op_name', 'display_name',
  'started_at', 'ended_at', 'exception', 'svc_user_id', 'svc_run_id', 'svc_run_step', 'svc_run_step_end', 'deleted_at',
]);

const FILTER_LIMIT = 1000;

/** Inner query: one row per call of the project, merged; `where` narrows the raw parts by primary key. */
function mergedCallsSql(p: Params, projectId: string, where: string[] = []): string {
  const cols = Object.entries(MERGED_COLUMNS)
    .map(([name, expr]) => `${expr} AS ${name}`)
    .join(',\n    ');
  const conds = [`project_id = ${p.str(projectId)}`, ...where].join(' AND ');
  return `SELECT project_id, id,
    ${cols}
  FROM calls_merged
  WHERE ${conds}
  GROUP BY project_id, id`;
}

function filterConditions(p: Params, filter: CallFilter | undefined): { inner: string[]; outer: string[] } {
  const inner: string[] = [];
  const outer: string[] = [];
  if (!filter) return { inner, outer };
  const lists: [keyof CallFilter, string][] = [
    ['call_ids', 'id'],
    ['trace_ids', 'trace_id'],
    ['parent_ids', 'parent_id'],
    ['thread_ids', 'thread_id'],
    ['turn_ids', 'turn_id'],
    ['svc_user_ids', 'svc_user_id'],
    ['svc_run_ids', 'svc_run_id'],
  ];
  for (const [key, column] of lists) {
    const values = filter[key] as string[] | undefined;
    if (!values || values.length === 0) continue;
    checkLength(key, values);
    // Call ids are the primary key: narrowing there reads only those calls' parts.
    if (column === 'id') inner.push(`id IN ${p.strArray(values)}`);
    else outer.push(`${column} IN ${p.strArray(values)}`);
  }
  if (filter.op_names && filter.op_names.length > 0) {
    checkLength('op_names', filter.op_names);
    const exact = filter.op_names.filter((n) => !n.endsWith(':*'));
    const prefixes = filter.op_names.filter((n) => n.endsWith(':*')).map((n) => n.slice(0, -1));
    const ors: string[] = [];
    if (exact.length) ors.push(`op_name IN ${p.strArray(exact)}`);
    for (const pre of prefixes) ors.push(`startsWith(op_name, ${p.str(pre)})`);
    outer.push(`(${ors.join(' OR ')})`);
  }
  for (const [key, column] of [['input_refs', 'input_refs'], ['output_refs', 'output_refs']] as const) {
    const values = filter[key];
    if (!values || values.length === 0) continue;
    checkLength(key, values);
    outer.push(`hasAny(${column}, ${p.strArray(values)})`);
  }
  if (filter.trace_roots_only) outer.push('parent_id IS NULL');
  return { inner, outer };
}

function checkLength(key: string, values: readonly string[]): void {
  if (values.length > FILTER_LIMIT) {
    throw badRequest(`filter.${key}: at most ${FILTER_LIMIT} entries (got ${values.length})`, `filter.${key}`);
  }
}

function orderBy(sortBy: CallsStreamQueryReq['sort_by']): string {
  if (!sortBy) return 'started_at ASC, id ASC';
  if (sortBy.length === 0) return 'id ASC';
  const terms = sortBy.map((s, i) => {
    if (!SORTABLE_CALL_FIELDS.has(s.field)) {
      throw new ApiError(400, `sort_by[${i}].field: cannot sort by '${s.field}'`, { field: `sort_by[${i}].field` });
    }
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  if (!sortBy.some((s) => s.field === 'id')) terms.push('id ASC');
  return terms.join(', ');
}

export interface CallsQueryOptions {
  /** Compiles `query.$expr` into a condition over the merged call (libs/query expression compiler). */
  compileQuery?: (p: Params, expr: Record<string, unknown>) => string;
}

/** SELECT of merged, visible calls for /calls/stream_query. */
export function buildCallsQuery(req: CallsStreamQueryReq, opts: CallsQueryOptions = {}): BuiltQuery {
  const p = new Params();
  const { inner, outer } = filterConditions(p, req.filter);
  const conds = ['started_at IS NOT NULL', 'deleted_at IS NULL', ...outer];
  if (req.query) {
    if (!opts.compileQuery) throw new ApiError(501, 'not implemented yet: query expressions');
    conds.push(opts.compileQuery(p, req.query.$expr));
  }
  let sql = `SELECT * FROM (
  ${mergedCallsSql(p, req.project_id, inner)}
)
WHERE ${conds.join(' AND ')}
ORDER BY ${orderBy(req.sort_by)}`;
  if (req.limit !== undefined && req.limit > 0) sql += `\nLIMIT ${p.int(req.limit)}`;
  if (req.offset !== undefined && req.offset > 0) sql += `${req.limit ? '' : '\nLIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  return { sql, params: p.values };
}

/** COUNT for /calls/query_stats under the same filter (and `limit` capping the count, as the reference). */
export function buildCallsStatsQuery(req: CallsQueryStatsReq, opts: CallsQueryOptions = {}): BuiltQuery {
  const p = new Params();
  const { inner, outer } = filterConditions(p, req.filter);
  const conds = ['started_at IS NOT NULL', 'deleted_at IS NULL', ...outer];
  if (req.query) {
    if (!opts.compileQuery) throw new ApiError(501, 'not implemented yet: query expressions');
    conds.push(opts.compileQuery(p, req.query.$expr));
  }
  let innerSql = `SELECT id FROM (
  ${mergedCallsSql(p, req.project_id, inner)}
) WHERE ${conds.join(' AND ')}`;
  if (req.limit !== undefined && req.limit > 0) innerSql += ` LIMIT ${p.int(req.limit)}`;
  return { sql: `SELECT count() AS count FROM (${innerSql})`, params: p.values };
}
