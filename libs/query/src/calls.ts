import type { CallFilter, CallsQueryStatsReq, CallsStreamQueryReq } from '@weft/api';
import { ApiError, badRequest } from '@weft/core';
import { CallFieldResolver } from './call-fields';
import { callLineSelects } from './call-json';
import { MERGED_END_COLUMNS } from './end-columns';
import { compileQuery, type FieldRef } from './expr';
import { Params, type BuiltQuery } from './params';

/** Columns of a merged call, each re-aggregated from calls_merged (merges are eventual). */
export const MERGED_CALL_COLUMNS: Record<string, string> = {
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

/** Always returned, whatever `columns` says (reference REQUIRED_CALL_COLUMNS). */
const REQUIRED_COLUMNS = ['trace_id', 'op_name', 'started_at'];
/** Call field name → the merged columns it is read from. */
const FIELD_COLUMNS: Record<string, string[]> = {
  attributes: ['attributes_dump', 'otel_dump'],
  inputs: ['inputs_dump'],
  output: ['output_dump'],
  summary: ['summary_dump'],
};

const FILTER_LIMIT = 1000;

/**
 * Merged columns that only a call's start part writes: on a start part they already hold the
 * merged value, so conditions and sort keys over them can be evaluated without merging.
 */
const START_COLUMNS = new Set([
  'trace_id',
  'parent_id',
  'thread_id',
  'turn_id',
  'op_name',
  'started_at',
  'attributes_dump',
  'inputs_dump',
  'input_refs',
  'otel_dump',
  'svc_user_id',
  'svc_run_id',
  'svc_run_step',
]);
const onlyStart = (cols: Iterable<string>) => [...cols].every((c) => START_COLUMNS.has(c));

/**
 * Merged columns that only an end part writes, copied to calls_ends (SCHEMA.md): a query over
 * start and end columns (latency, status, costs) joins calls_starts with calls_ends instead of
 * re-aggregating the project in calls_merged. The output is not among them (not copied).
 */
const END_COLUMNS = new Set([
  'ended_at',
  'exception',
  'summary_dump',
  'output_refs',
  'svc_run_step_end',
  ...Object.keys(MERGED_END_COLUMNS),
]);

/**
 * How calls_starts and calls_ends are joined on the call id: by sorting both sides and merging,
 * instead of a hash table. calls_ends is stored in id order, so its side is a read in order;
 * the hash join built a table of the starts (or, when the engine swapped the sides, of the whole
 * project's ends). 10M calls, CPU: a filtered count 3.6 → 1.1 s, a latency sort over the project
 * 5.0 → 4.0 s, over one op 1.5 → 1.25 s.
 */
export const JOIN_BY_ID_SETTINGS = `join_algorithm = 'full_sorting_merge'`;

/** A column's expression over calls_merged: the merged columns, and calls_ends' ready-made ones (status, usage). */
const mergedColumnSql = (c: string): string | undefined => MERGED_CALL_COLUMNS[c] ?? MERGED_END_COLUMNS[c];

/** One term of the total order: a non-NULL expression, its ClickHouse type (to bind a cursor), a direction. */
export interface SortKey {
  sql: string;
  type: 'UInt8' | 'Int64' | 'Float64' | 'String' | "DateTime64(6, 'UTC')";
  desc: boolean;
}

/** Keyset cursor: the sort-key values of the last row sent. */
export type Cursor = unknown[];

/**
 * Normalised sort keys for a field: every nullable term becomes (isNull, value-or-zero), so that
 * ORDER BY and the keyset condition of the next page agree exactly (NULLs last either way).
 * A dynamic (JSON) field gives the reference's three-term order: present first, then numeric,
 * then text.
 */
function sortKeysOf(ref: FieldRef, desc: boolean): SortKey[] {
  const isNull = (x: string): SortKey => ({ sql: `isNull(${x})`, type: 'UInt8', desc: false });
  const x = ref.sql;
  switch (ref.kind) {
    case 'json': {
      const num = `if(isFinite(toFloat64OrNull(${x})), toFloat64OrNull(${x}), NULL)`;
      return [
        isNull(x),
        isNull(num),
        { sql: `ifNull(${num}, 0)`, type: 'Float64', desc },
        { sql: `ifNull(${x}, '')`, type: 'String', desc },
      ];
    }
    case 'number':
      return [isNull(x), { sql: `ifNull(toFloat64(${x}), 0)`, type: 'Float64', desc }];
    case 'datetime':
      return [isNull(x), { sql: `ifNull(toUnixTimestamp64Micro(${x}), 0)`, type: 'Int64', desc }];
    case 'bool':
      return [isNull(x), { sql: `ifNull(toUInt8(${x}), 0)`, type: 'UInt8', desc }];
    case 'array':
      return [{ sql: `toString(${x})`, type: 'String', desc }];
    default:
      return [isNull(x), { sql: `ifNull(${x}, '')`, type: 'String', desc }];
  }
}

/** `(keys) > (cursor)` in the keys' own directions, with every cursor value bound. */
function afterCursor(keys: SortKey[], cursor: Cursor, p: Params): string {
  let cond = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i]!;
    const v = p.add(cursor[i], k.type);
    const op = k.desc ? '<' : '>';
    cond = cond === '' ? `${k.sql} ${op} ${v}` : `(${k.sql} ${op} ${v} OR (${k.sql} = ${v} AND ${cond}))`;
  }
  return cond;
}

function checkLength(key: string, values: readonly string[]): void {
  if (values.length > FILTER_LIMIT) {
    throw badRequest(`filter.${key}: at most ${FILTER_LIMIT} entries (got ${values.length})`, `filter.${key}`);
  }
}

type CallsReq = Pick<CallsStreamQueryReq, 'project_id' | 'filter' | 'query'> &
  Partial<Pick<CallsStreamQueryReq, 'sort_by' | 'columns' | 'include_costs'>>;

/**
 * A calls query, compiled once and run page by page. Two phases per page:
 *  1. the ids: re-aggregate only the columns the filter, query and sort touch (after narrowing
 *     the parts by primary key and skip indexes), filter, order, limit;
 *  2. the rows: re-aggregate every wanted column, for those ids only (primary-key reads).
 */
export class CallsQueryPlan {
  private readonly base = new Params();
  private readonly resolver = new CallFieldResolver();
  private readonly projectSql: string;
  /** Conditions on raw start parts (trace_id, op_name, ...): a skip-index prefilter of ids. */
  private readonly prefilter: string[] = [];
  /** Conditions on the primary key itself. */
  private readonly idConds: string[] = [];
  /** Conditions on merged rows. */
  private readonly conds: string[] = ['started_at IS NOT NULL', 'deleted_at IS NULL'];
  /** The conditions of `conds` that read end-part columns (evaluated after joining calls_ends). */
  private readonly endConds = new Set<string>();
  readonly keys: SortKey[];
  /** Merged columns the rows phase reads. */
  readonly columns: Set<string>;
  /** Field names the caller asked for (undefined: all). */
  readonly selected?: Set<string>;
  /**
   * True when every condition and sort key reads start-part columns only: pages can then be
   * picked from the start parts directly (top-N by the sort keys, no merge of the whole
   * project), and only those candidates are merged and checked (deleted calls drop out there).
   */
  readonly fromStartParts: boolean;
  /**
   * True when every condition and sort key reads start-part or end-part columns (not the output,
   * not display_name): the matching ids come from calls_starts joined with calls_ends, no merge.
   */
  readonly fromStartsAndEnds: boolean;
  private startOnly = true;
  /** The filter names few calls (ids, traces, parents, threads, turns): calls_ends is read by those ids. */
  private narrow = false;
  /** A condition or sort reads deleted_at itself (not only the implicit "not deleted"). */
  private readsDeletedAt = false;

  constructor(private readonly req: CallsReq) {
    const p = this.base;
    this.projectSql = p.str(req.project_id);
    this.resolver.used.add('started_at').add('deleted_at');
    this.addFilter(req.filter);
    if (req.query) {
      // A top-level $and is kept as separate conditions, so that its terms on start columns
      // filter calls_starts before any join (compiled whole first: limits and error paths).
      const whole = compileQuery(req.query.$expr, new CallFieldResolver(), new Params());
      const and = (req.query.$expr as { $and?: unknown }).$and;
      for (const term of Array.isArray(and) && whole ? and : [req.query.$expr]) {
        const qr = new CallFieldResolver();
        this.addCond(compileQuery(term, qr, p), qr.used);
      }
    }
    this.keys = this.orderKeys();
    this.fromStartParts = this.startOnly;
    this.fromStartsAndEnds =
      !this.startOnly &&
      !this.readsDeletedAt &&
      [...this.resolver.used].every((c) => c === 'deleted_at' || START_COLUMNS.has(c) || END_COLUMNS.has(c));
    const wanted = this.projection();
    this.selected = wanted;
    this.columns = new Set(
      wanted ? [...wanted].flatMap((f) => FIELD_COLUMNS[f] ?? (f in MERGED_CALL_COLUMNS ? [f] : [])) : Object.keys(MERGED_CALL_COLUMNS),
    );
    for (const c of this.resolver.used) this.columns.add(c);
  }

  private addCond(sql: string, cols: Iterable<string>): void {
    this.conds.push(sql);
    if (!onlyStart(cols)) this.endConds.add(sql);
    this.track(cols);
  }

  private track(cols: Iterable<string>): void {
    for (const c of cols) {
      this.resolver.used.add(c);
      // deleted_at is in neither split table (calls_deleted answers "not deleted" only).
      if (c === 'deleted_at') this.readsDeletedAt = true;
    }
    if (!onlyStart(cols)) this.startOnly = false;
  }

  private addFilter(filter: CallFilter | undefined): void {
    if (!filter) return;
    const p = this.base;
    const lists: [keyof CallFilter, string][] = [
      ['trace_ids', 'trace_id'],
      ['parent_ids', 'parent_id'],
      ['thread_ids', 'thread_id'],
      ['turn_ids', 'turn_id'],
      ['svc_user_ids', 'svc_user_id'],
      ['svc_run_ids', 'svc_run_id'],
    ];
    if (filter.call_ids?.length) {
      checkLength('call_ids', filter.call_ids);
      this.idConds.push(`id IN ${p.strArray(filter.call_ids)}`);
      this.narrow = true;
    }
    for (const [key, column] of lists) {
      const values = filter[key] as string[] | undefined;
      if (!values) continue;
      // As the reference's in-memory server: an empty thread/turn list matches nothing.
      if (values.length === 0) {
        if (key === 'thread_ids' || key === 'turn_ids') this.conds.push('0');
        continue;
      }
      checkLength(key, values);
      const cond = `${column} IN ${p.strArray(values)}`;
      if (key !== 'svc_user_ids' && key !== 'svc_run_ids') this.narrow = true;
      // These columns come from the start part only, so a raw part matching them names a matching call.
      this.prefilter.push(cond);
      this.addCond(cond, [column]);
    }
    if (filter.op_names?.length) {
      checkLength('op_names', filter.op_names);
      const exact = filter.op_names.filter((n) => !n.endsWith(':*'));
      const prefixes = filter.op_names.filter((n) => n.endsWith(':*')).map((n) => n.slice(0, -1));
      const ors: string[] = [];
      if (exact.length) ors.push(`op_name IN ${p.strArray(exact)}`);
      for (const pre of prefixes) ors.push(`startsWith(op_name, ${p.str(pre)})`);
      const cond = `(${ors.join(' OR ')})`;
      this.prefilter.push(cond);
      this.addCond(cond, ['op_name']);
    }
    for (const key of ['input_refs', 'output_refs'] as const) {
      const values = filter[key];
      if (!values?.length) continue;
      checkLength(key, values);
      const exact = values.filter((n) => !n.endsWith(':*'));
      const ors: string[] = [];
      if (exact.length) ors.push(`hasAny(${key}, ${p.strArray(exact)})`);
      for (const pre of values.filter((n) => n.endsWith(':*'))) {
        ors.push(`arrayExists(r -> startsWith(r, ${p.str(pre.slice(0, -1))}), ${key})`);
      }
      this.addCond(`(${ors.join(' OR ')})`, [key]);
    }
    if (filter.trace_roots_only) {
      this.addCond('parent_id IS NULL', ['parent_id']);
    }
  }

  private orderKeys(): SortKey[] {
    const sortBy = this.req.sort_by ?? [{ field: 'started_at', direction: 'asc' as const }];
    const keys: SortKey[] = [];
    sortBy.forEach((s, i) => {
      let ref: FieldRef;
      const r = new CallFieldResolver();
      try {
        ref = r.resolve(s.field, this.base);
      } catch (e) {
        if (e instanceof ApiError) throw new ApiError(400, `sort_by[${i}].field: ${e.reason}`, { field: `sort_by[${i}].field` });
        throw e;
      }
      this.track(r.used);
      if (s.field === 'started_at') {
        // Never NULL on a visible call, and the plain column is what calls_starts is ordered by:
        // a page in this order is a key range read in order (forwards or backwards).
        keys.push({ sql: 'started_at', type: "DateTime64(6, 'UTC')", desc: s.direction === 'desc' });
        return;
      }
      // display_name is renamed by later parts: never from the start part alone.
      if (s.field === 'display_name' || s.field === 'summary.weave.trace_name') this.startOnly = false;
      keys.push(...sortKeysOf(ref, s.direction === 'desc'));
    });
    // The id tiebreak makes the order total, which keyset paging needs. Ascending, except under
    // `started_at desc` alone: (started_at, id) both descending is calls_starts' key read
    // backwards (in order, stopping at the page size), where a mixed direction sorts the range.
    const byStartDesc = keys.length === 1 && keys[0]!.sql === 'started_at' && keys[0]!.desc;
    keys.push({ sql: 'id', type: 'String', desc: byStartDesc });
    return keys;
  }

  /** Reference §3.5: top-level names only, costs imply summary, summary implies its status inputs. */
  private projection(): Set<string> | undefined {
    const cols = this.req.columns;
    if (!cols || cols.length === 0) return undefined;
    const out = new Set<string>(['id', 'project_id', ...REQUIRED_COLUMNS]);
    for (const c of cols) out.add(c.split('.')[0]!.replace(/_dump$/, ''));
    if (this.req.include_costs) out.add('summary');
    if (out.has('summary')) ['ended_at', 'exception', 'display_name'].forEach((c) => out.add(c));
    return out;
  }

  private aggregates(columns: Iterable<string>): string {
    return [...columns]
      .filter((c) => mergedColumnSql(c))
      .map((c) => `${mergedColumnSql(c)} AS ${c}`)
      .join(', ');
  }

  /** Phase 1: the ids of the matching calls, in order, optionally after a cursor, limited. */
  private idsSql(p: Params, page: PageSpec, ordered = true): string {
    const where = [`project_id = ${this.projectSql}`, ...this.idConds];
    if (this.prefilter.length) {
      where.push(`id IN (SELECT id FROM calls_merged WHERE project_id = ${this.projectSql} AND ${this.prefilter.join(' AND ')})`);
    }
    const conds = [...this.conds];
    if (page.after) conds.push(afterCursor(this.keys, page.after, p));
    let sql = `SELECT id FROM (
    SELECT id, ${this.aggregates(this.resolver.used)}
    FROM calls_merged WHERE ${where.join(' AND ')}
    GROUP BY project_id, id
  ) WHERE ${conds.join(' AND ')}`;
    if (ordered) sql += `\n  ORDER BY ${this.orderBy()}`;
    if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
    if (page.offset) sql += `${page.limit === undefined ? ' LIMIT 18446744073709551615' : ''} OFFSET ${p.int(page.offset)}`;
    return sql;
  }

  private orderBy(): string {
    return this.keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  }

  /**
   * One page of calls as (cursor, line) rows, in key order: `line` is the Call as JSON text
   * (call-json.ts), `cursor` the JSON array of the row's sort keys (where the next page starts).
   * The ids come from the start parts (fromStartParts) or from phase 1; the rows re-aggregate
   * every wanted column for those ids only (primary-key reads of calls_merged).
   */
  linesQuery(page: PageSpec): BuiltQuery {
    const p = this.base.clone();
    const ids = this.fromStartParts
      ? this.candidatesSql(p, page)
      : this.fromStartsAndEnds
        ? this.joinedIdsSql(p, page)
        : this.idsSql(p, page);
    const keys = this.keys.map((k, i) => `${k.sql} AS _k${i}`).join(', ');
    const cursor = `concat('[', arrayStringConcat([${this.keys.map((_, i) => `toJSONString(_k${i})`).join(', ')}], ','), ']')`;
    let row = `SELECT project_id, id, ${this.aggregates(this.columns)}
    FROM calls_merged
    WHERE project_id = ${this.projectSql} AND id IN (
    ${ids}
    )
    GROUP BY project_id, id`;
    for (const list of callLineSelects(this.selected)) row = `SELECT *, ${list} FROM (\n${row}\n)`;
    const sql = `SELECT cursor, line FROM (
  SELECT ${keys}, ${cursor} AS cursor, line FROM (
${row}
  )
)
ORDER BY ${this.keys.map((_, i) => `_k${i} ${this.keys[i]!.desc ? 'DESC' : 'ASC'}`).join(', ')}`;
    return { sql, params: p.values };
  }

  /**
   * Conditions a start part must meet: every condition on start columns but deletion, which
   * calls_deleted answers (under fromStartParts, that is every condition).
   */
  private startConds(withDeleted = false): string[] {
    const conds = [
      `project_id = ${this.projectSql}`,
      ...this.idConds,
      ...this.conds.filter((c) => c !== 'deleted_at IS NULL' && c !== 'started_at IS NOT NULL' && !this.endConds.has(c)),
    ];
    if (!withDeleted) conds.push(`id NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${this.projectSql})`);
    return conds;
  }

  /**
   * The count of matching calls when every condition is on start columns (fromStartParts): the
   * start rows that match, less those deleted. FINAL folds a replayed start while reading (and
   * costs nothing where parts do not overlap, the usual case for time-ordered inserts); the
   * deleted ones are found by id (a small set, the id bloom filter), so the count never reads
   * the id of every call as a `NOT IN` would (10M calls: ~150 → ~70 ms of CPU).
   */
  startCountSql(): string {
    const where = this.startConds(true).join(' AND ');
    return `SELECT (SELECT count() FROM calls_starts FINAL WHERE ${where})
      - (SELECT count() FROM calls_starts FINAL WHERE ${where} AND id IN (SELECT id FROM calls_deleted WHERE project_id = ${this.projectSql})) AS count`;
  }

  /**
   * The ids of one page straight from calls_starts (only when `fromStartParts`): the next `limit`
   * visible calls by the sort keys after `after`. Read in key order when the sort is started_at.
   * A start part replayed before the engine folded it may appear twice here (no `LIMIT 1 BY id`:
   * it stops the engine from ending the in-order read at the page size, ×10 at 10M calls); the
   * rows query merges by id, so the page holds it once and may be one row short, which is why
   * `mayBeShort` tells the stream not to take a short page for the end. A narrow filter (a trace,
   * ids, a thread) matches few rows, where `LIMIT 1 BY id` costs nothing and spares the stream
   * a query for an empty last page.
   */
  private candidatesSql(p: Params, page: PageSpec): string {
    const conds = this.startConds();
    if (page.after) conds.push(afterCursor(this.keys, page.after, p));
    let sql = `SELECT id FROM calls_starts
    WHERE ${conds.join(' AND ')}
    ORDER BY ${this.orderBy()}${this.narrow ? ' LIMIT 1 BY id' : ''}`;
    if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
    if (page.offset) sql += `${page.limit === undefined ? ' LIMIT 18446744073709551615' : ''} OFFSET ${p.int(page.offset)}`;
    return sql;
  }

  /**
   * calls_starts (the start conditions) joined with calls_ends: one row per visible call with the
   * start and end `columns` under their merged names (end columns NULL while a call runs). The
   * starts are the hashed side (the filtered, smaller one); calls_ends is read for the whole
   * project unless the filter is narrow (then by those ids: a primary-key lookup). `final`: FINAL
   * on both, so a replayed part not yet folded is one row (charts over the whole project); without
   * it a replay may repeat a row, which the rows query folds and counts take DISTINCT (FINAL
   * would evaluate the conditions after merging instead of in PREWHERE: ×2–3 on a filter).
   */
  private joinedSql(columns: Iterable<string>, final: boolean, endsOnly?: string): string {
    const cols = [...new Set(columns)];
    const startCols = [...new Set(['started_at', ...cols.filter((c) => START_COLUMNS.has(c))])];
    const endCols = cols.filter((c) => END_COLUMNS.has(c));
    const fin = final ? ' FINAL' : '';
    const startWhere = this.startConds().join(' AND ');
    const starts = `SELECT id, ${startCols.join(', ')} FROM calls_starts${fin} WHERE ${startWhere}`;
    if (endCols.length === 0) return starts;
    const endWhere = [`project_id = ${this.projectSql}`];
    if (this.narrow) endWhere.push(`id IN (SELECT id FROM calls_starts WHERE ${startWhere})`);
    if (endsOnly) endWhere.push(endsOnly);
    return `SELECT s.id AS id, ${[...startCols.map((c) => `s.${c} AS ${c}`), ...endCols.map((c) => `e.${c} AS ${c}`)].join(', ')}
    FROM (SELECT id, ${endCols.join(', ')} FROM calls_ends${fin} WHERE ${endWhere.join(' AND ')}) AS e
    ${endsOnly ? 'INNER' : 'RIGHT'} JOIN (${starts}) AS s ON e.id = s.id
    SETTINGS ${JOIN_BY_ID_SETTINGS}`;
  }

  /** Phase 1 under fromStartsAndEnds: the start conditions on calls_starts, the rest on the joined rows. */
  private joinedIdsSql(p: Params, page: PageSpec, ordered = true): string {
    const conds = [...this.endConds];
    if (page.after) conds.push(afterCursor(this.keys, page.after, p));
    let sql = `SELECT ${ordered ? '' : 'DISTINCT '}id FROM (
    ${this.joinedSql(this.resolver.used, false)}
  )${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`;
    if (ordered) sql += `\n  ORDER BY ${this.orderBy()}${this.narrow ? ' LIMIT 1 BY id' : ''}`;
    if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
    if (page.offset) sql += `${page.limit === undefined ? ' LIMIT 18446744073709551615' : ''} OFFSET ${p.int(page.offset)}`;
    return sql;
  }

  /**
   * One row per matching call with `columns` (merged column names), for aggregates over the
   * matched set (the same set counts count): from calls_starts and calls_ends when the plan and
   * the columns allow, else re-aggregated from calls_merged. `endsOnly`: a condition on end
   * columns only that no running call meets (e.g. "has usage"), evaluated on calls_ends before
   * the join, which then keeps only ended calls.
   */
  matchedCallsSql(p: Params, columns: string[], endsOnly?: string): string {
    const joinable = columns.every((c) => START_COLUMNS.has(c) || END_COLUMNS.has(c));
    if (joinable && (this.fromStartParts || this.fromStartsAndEnds)) {
      const rows = this.joinedSql([...columns, ...this.resolver.used], true, endsOnly);
      return `SELECT id, ${columns.join(', ')} FROM (${rows})${this.endConds.size ? ` WHERE ${[...this.endConds].join(' AND ')}` : ''}`;
    }
    const rows = `SELECT id, ${columns.map((c) => `${mergedColumnSql(c)} AS ${c}`).join(', ')}
    FROM calls_merged WHERE project_id = ${this.projectSql} AND id IN (${this.matchingIdsSql(p)})
    GROUP BY project_id, id`;
    return endsOnly ? `SELECT * FROM (${rows}) WHERE ${endsOnly}` : rows;
  }

  /** The matching ids (no order), capped by `limit`: the body of counts and storage sums. */
  matchingIdsSql(p: Params, limit?: number): string {
    if (this.fromStartsAndEnds) return this.joinedIdsSql(p, { limit }, false);
    if (!this.fromStartParts) return this.idsSql(p, { limit }, false);
    // Start parts carry every column the conditions read: no merge. FINAL folds a replayed start
    // part (an identical key) while reading, and only where parts overlap, which time-ordered
    // inserts rarely do: no hash of every id, as DISTINCT would build.
    return `SELECT id FROM calls_starts FINAL WHERE ${this.startConds().join(' AND ')}${limit !== undefined ? ` LIMIT ${p.int(limit)}` : ''}`;
  }

  /** A page may hold fewer rows than its limit before the end (fromStartParts: replays folded by the rows query). */
  get mayBeShort(): boolean {
    return (this.fromStartParts || this.fromStartsAndEnds) && !this.narrow;
  }

  get params(): Params {
    return this.base.clone();
  }

  get projectParam(): string {
    return this.projectSql;
  }
}

/** One page: after a cursor, limited, offset. */
export interface PageSpec {
  after?: Cursor;
  limit?: number;
  offset?: number;
}

/** COUNT for /calls/query_stats under the same filter and query (`limit` caps the count, as the reference). */
export function buildCallsStatsQuery(req: CallsQueryStatsReq): BuiltQuery & { plan: CallsQueryPlan } {
  const plan = new CallsQueryPlan({ ...req, sort_by: [] });
  const p = plan.params;
  const ids = plan.matchingIdsSql(p, req.limit || undefined);
  let sql = plan.fromStartParts && !req.limit ? plan.startCountSql() : `SELECT count() AS count FROM (${ids})`;
  if (req.include_total_storage_size) {
    // Trace totals are only carried by roots, so the sum is over the matching roots' traces.
    const roots = `SELECT any(trace_id) FROM calls_merged WHERE project_id = ${plan.projectParam} AND id IN (${ids}) GROUP BY project_id, id HAVING any(parent_id) IS NULL`;
    sql = `SELECT (${sql}) AS count, (SELECT sum(total_storage_size_bytes) FROM (${traceSizesSql(plan.projectParam, roots)})) AS total_storage_size_bytes`;
  }
  return { sql, params: p.values, plan };
}

/**
 * Storage size of one call (reference §3.9): bytes of the attributes, inputs, output and
 * summary JSON, from calls_merged_stats re-aggregated per call (start and end parts each carry
 * the sizes of the dumps they wrote).
 */
export function callSizesSql(projectParam: string, idCondition: string): string {
  return `SELECT id, any(trace_id) AS trace_id,
    toInt64(ifNull(any(attributes_size_bytes), 0) + ifNull(any(inputs_size_bytes), 0) + ifNull(any(output_size_bytes), 0) + ifNull(any(summary_size_bytes), 0)) AS storage_size_bytes
  FROM calls_merged_stats WHERE project_id = ${projectParam} AND ${idCondition}
  GROUP BY project_id, id`;
}

/** Per trace: the sum of its calls' storage sizes (`tracesSql` selects trace ids). */
export function traceSizesSql(projectParam: string, tracesSql: string): string {
  const ids = `id IN (SELECT id FROM calls_merged_stats WHERE project_id = ${projectParam} AND trace_id IN (${tracesSql}))`;
  return `SELECT trace_id, toInt64(sum(storage_size_bytes)) AS total_storage_size_bytes FROM (${callSizesSql(projectParam, ids)}) GROUP BY trace_id`;
}
