import { SEARCH_SETTINGS, searchNarrowing } from './search';
import type { CallFilter, CallsQueryStatsReq, CallsStreamQueryReq } from '@weft/api';
import { ApiError, badRequest } from '@weft/core';
import { CallFieldResolver, FeedbackColumns, RefExpansions, interfaceCallField } from './call-fields';
import { callLineSelects, fragmentLineSql } from './call-json';
import { compileQuery, type FieldRef } from './expr';
import { Params, type BuiltQuery } from './params';
import { notDeletedSql } from './repositories/calls';

/**
 * Where each column of a call row is stored (SCHEMA.md): a Call is its row of calls_starts
 * joined by id with its row of calls_ends (absent while it runs: the end columns read NULL), its
 * latest rename from calls_renames, and nothing of a deleted call (calls_deleted). No read
 * merges parts any more. Columns that only a call's start part writes:
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

/** Columns that only an end part writes, in calls_ends. */
const END_PART_COLUMNS = ['ended_at', 'exception', 'summary_dump', 'output_refs', 'svc_run_step_end', 'output_dump'];
/**
 * calls_ends' ready-made columns (SCHEMA.md): the status and the per-model usage,
 * computed by the engine when the end row is stored. Read by filters and charts, never sent.
 */
const READY_END_COLUMNS = ['status', 'usage'];
const END_COLUMNS = new Set([...END_PART_COLUMNS, ...READY_END_COLUMNS]);

/** Each half's ready-made parts of a full Call line (call-json.ts LINE_FRAGMENTS). */
const START_FRAGMENTS = new Set(['line_start', 'line_svc', 'line_trace_name']);
const END_FRAGMENTS = new Set(['line_tail']);
/** What a full line (no projection) reads: the fragments, the start's dumps spliced between them, and what is computed per read. */
const LINE_COLUMNS = [
  'line_start',
  'attributes_dump',
  'otel_dump',
  'inputs_dump',
  'line_svc',
  'line_trace_name',
  'line_tail',
  'started_at',
  'ended_at',
  'display_name',
];

/** Every column of a call row: the start's, the end's, the display name (renamed by later parts) and deleted_at. */
export const CALL_COLUMNS: readonly string[] = [...START_COLUMNS, ...END_PART_COLUMNS, 'display_name', 'deleted_at'];

/**
 * How calls_ends is joined with the starts on the call id: by sorting both sides and merging,
 * not with a hash table. calls_ends is stored in id order, so its side is a read in order and
 * the starts are sorted; the hash join built a table of the starts — or, when the planner
 * swapped the sides, of the whole project's ends (docs/performance.md, "Reads").
 */
const JOIN_BY_ID_SETTINGS = `join_algorithm = 'full_sorting_merge'`;

/** Always returned, whatever `columns` says (reference REQUIRED_CALL_COLUMNS). */
const REQUIRED_COLUMNS = ['trace_id', 'op_name', 'started_at'];
/** Call field name → the columns it is read from. */
const FIELD_COLUMNS: Record<string, string[]> = {
  attributes: ['attributes_dump', 'otel_dump'],
  inputs: ['inputs_dump'],
  output: ['output_dump'],
  summary: ['summary_dump'],
};

const FILTER_LIMIT = 1000;
/**
 * The largest page whose ids are picked by their own query and bound (idsFirst): bound values
 * travel in the request's URL on a server (~45 bytes an id; ClickHouse takes 1 MiB by default),
 * and 5,000 is the default page size (WEFT_QUERY_PAGE_ROWS).
 */
const MAX_BOUND_IDS = 5_000;

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
    // The reference's text after the field's name (callers match on it).
    const message = `Parameter: '${key}' request length is greater than max length (${FILTER_LIMIT}). Actual length: ${values.length}`;
    throw badRequest(`filter.${key}: ${message}`, `filter.${key}`);
  }
}

type CallsReq = Pick<CallsStreamQueryReq, 'project_id' | 'filter' | 'query'> &
  Partial<Pick<CallsStreamQueryReq, 'sort_by' | 'columns' | 'include_costs' | 'expand_columns'>>;

/**
 * A calls query, compiled once and run page by page over calls_starts ⋈ calls_ends (SCHEMA.md):
 *  - conditions and sort keys on start columns only: a page is the next `limit` rows of
 *    calls_starts in key order (for started_at, a key range read in order), then joined with
 *    those calls' end rows by primary key;
 *  - otherwise phase 1 picks the page's ids from the joined narrow columns the conditions and
 *    sort read, and phase 2 reads every wanted column of those ids only.
 */
/**
 * Whether `column` (an op name) is one of `opNames`: op refs, exact, or `…:*` for every version
 * of the op (the calls filter's op_names; alert windows' op_scope, call-values.ts).
 */
export function opNamesCondSql(opNames: readonly string[], p: Params, column = 'op_name'): string {
  const exact = opNames.filter((n) => !n.endsWith(':*'));
  const prefixes = opNames.filter((n) => n.endsWith(':*')).map((n) => n.slice(0, -1));
  const ors: string[] = [];
  if (exact.length) ors.push(`${column} IN ${p.strArray(exact)}`);
  for (const pre of prefixes) ors.push(`startsWith(${column}, ${p.str(pre)})`);
  return `(${ors.join(' OR ')})`;
}

export class CallsQueryPlan {
  private readonly base = new Params();
  /** Feedback read as columns (`feedback.[type].payload…` in filters and sorts), joined by the call's ref. */
  private readonly feedback = new FeedbackColumns(this.base);
  /** Fields under `expand_columns` read the referenced objects' values, joined by ref. */
  private readonly expansions: RefExpansions;
  private readonly resolver: CallFieldResolver;
  private readonly projectSql: string;
  /** Conditions on the primary key itself. */
  private readonly idConds: string[] = [];
  /** Searches' conditions on `id` from the text indexes (search.ts), for a span of start times or all. */
  private readonly searches: ((within?: string) => string)[] = [];
  /** Conditions on call rows (in SQL over the columns of CALL_COLUMNS). */
  private readonly conds: string[] = [];
  /** The conditions of `conds` that read more than start columns (evaluated after joining calls_ends). */
  private readonly endConds = new Set<string>();
  readonly keys: SortKey[];
  /** Columns the rows phase reads. */
  readonly columns: Set<string>;
  /** Field names the caller asked for (undefined: all). */
  readonly selected?: Set<string>;
  /**
   * True when every condition and sort key reads start columns only: a page is read straight
   * from calls_starts in the sort order (top-N by the keys, stopping at the page size).
   */
  readonly fromStartParts: boolean;
  private startOnly = true;
  /** The filter names few calls (ids, traces, parents, threads, turns): calls_ends is read by those ids. */
  private narrow = false;

  constructor(private readonly req: CallsReq) {
    const p = this.base;
    this.projectSql = p.str(req.project_id);
    this.expansions = new RefExpansions(req.expand_columns ?? [], p);
    this.resolver = new CallFieldResolver(this.projectSql, this.feedback, this.expansions);
    this.resolver.used.add('started_at');
    this.addFilter(req.filter);
    if (req.query) {
      // A top-level $and is kept as separate conditions, so that its terms on start columns
      // filter calls_starts before any join (compiled whole first: limits and error paths).
      const whole = compileQuery(req.query.$expr, new CallFieldResolver(this.projectSql, this.feedback, this.expansions), new Params());
      const and = (req.query.$expr as { $and?: unknown }).$and;
      for (const term of Array.isArray(and) && whole ? and : [req.query.$expr]) {
        const qr = new CallFieldResolver(this.projectSql, this.feedback, this.expansions);
        this.addCond(compileQuery(term, qr, p), qr.used);
        // A search keeps its exact condition and reads only the calls its index names (search.ts).
        const narrowed = searchNarrowing(term, this.projectSql, p);
        if (narrowed) this.searches.push(narrowed);
      }
    }
    this.keys = this.orderKeys();
    this.fromStartParts = this.startOnly;
    const wanted = this.projection();
    this.selected = wanted;
    this.columns = new Set(wanted ? [...wanted].flatMap((f) => FIELD_COLUMNS[f] ?? (CALL_COLUMNS.includes(f) ? [f] : [])) : CALL_COLUMNS);
    for (const c of this.resolver.used) this.columns.add(c);
  }

  private addCond(sql: string, cols: Iterable<string>): void {
    this.conds.push(sql);
    if (!onlyStart(cols)) this.endConds.add(sql);
    this.track(cols);
  }

  private track(cols: Iterable<string>): void {
    for (const c of cols) this.resolver.used.add(c);
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
      if (key !== 'svc_user_ids' && key !== 'svc_run_ids') this.narrow = true;
      this.addCond(`${column} IN ${p.strArray(values)}`, [column]);
    }
    if (filter.op_names?.length) {
      checkLength('op_names', filter.op_names);
      this.addCond(opNamesCondSql(filter.op_names, p), ['op_name']);
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
      const r = new CallFieldResolver(this.projectSql, this.feedback, this.expansions);
      try {
        ref = r.resolve(s.field, this.base);
      } catch (e) {
        if (e instanceof ApiError) throw new ApiError(e.status, `sort_by[${i}].field: ${e.reason}`, { field: `sort_by[${i}].field` });
        throw e;
      }
      this.track(r.used);
      if (s.field === 'started_at') {
        // Never NULL on a visible call, and the plain column is what calls_starts is ordered by:
        // a page in this order is a key range read in order (forwards or backwards).
        keys.push({ sql: 'started_at', type: "DateTime64(6, 'UTC')", desc: s.direction === 'desc' });
        return;
      }
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
    for (const c of cols) out.add(interfaceCallField(c.split('.')[0]!.replace(/_dump$/, '')));
    if (this.req.include_costs) out.add('summary');
    if (out.has('summary')) ['ended_at', 'exception', 'display_name'].forEach((c) => out.add(c));
    return out;
  }

  /** The sort keys selected as `_k0`, `_k1`, … (what cursorSql and keyOrderSql read). */
  private keySelects(): string[] {
    return this.keys.map((k, i) => `${k.sql} AS _k${i}`);
  }

  /** A row's cursor (its sort keys as a JSON array) from the keys selected as `_k0`, `_k1`, …: what afterCursor reads back. */
  private cursorSql(): string {
    return `concat('[', arrayStringConcat([${this.keys.map((_, i) => `toJSONString(_k${i})`).join(', ')}], ','), ']')`;
  }

  /** The sort order over the keys selected as `_k0`, `_k1`, …. */
  private keyOrderSql(): string {
    return this.keys.map((k, i) => `_k${i} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  }

  private orderBy(): string {
    return this.keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  }

  private static limitOffset(p: Params, page: PageSpec): string {
    let sql = '';
    if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
    if (page.offset) sql += `${page.limit === undefined ? ' LIMIT 18446744073709551615' : ''} OFFSET ${p.int(page.offset)}`;
    return sql;
  }

  /**
   * One page of calls as (cursor, line) rows, in key order: `line` is the Call as JSON text
   * (call-json.ts), `cursor` the JSON array of the row's sort keys (where the next page starts).
   * A replayed part the engine has not folded yet may repeat a row: each id is kept once.
   */
  linesQuery(page: PageSpec, pageIds?: readonly string[]): BuiltQuery {
    const p = this.base.clone();
    // A full Call is spliced from the fragments stored with each half; a projection is built
    // field by field from the columns (call-json.ts).
    const full = !this.selected;
    const rowCols = full ? [...LINE_COLUMNS, ...this.resolver.used] : [...this.columns, 'project_id'];
    let row: string;
    if (this.fromStartParts) {
      // The page's start rows in key order; their end rows by primary key (the same page's ids).
      const startCols = rowCols.filter((c) => START_COLUMNS.has(c) || START_FRAGMENTS.has(c) || c === 'display_name');
      row = this.joinedSql(rowCols, false, {
        starts: this.startPageSql(p, page, ['id', ...new Set(startCols)]),
        ids: `(${page.after && page.upTo ? this.startSpanIdsSql(p, page.after, page.upTo) : this.startPageSql(p, page, ['id'])})`,
      });
    } else {
      // The page's ids, picked by pageIdsQuery (bound: both halves read by key, the pick run
      // once), or picked here as a subquery, which the engine then runs once for each half.
      const ids = pageIds ? p.strArray(pageIds) : `(${this.joinedIdsSql(p, page)})`;
      // A search's span bounds the ids' start rows too (a key range, not a lookup over the project).
      const within = spanSql(page.span, p);
      row = this.joinedSql(rowCols, false, { ids, ...(within ? { within } : {}) });
    }
    if (full) row = `SELECT *, ${fragmentLineSql} AS line FROM (\n${row}\n)`;
    else for (const list of callLineSelects(this.selected)) row = `SELECT *, ${list} FROM (\n${row}\n)`;
    const keys = this.keySelects().join(', ');
    const sql = `SELECT cursor, line FROM (
  SELECT ${keys}, ${this.cursorSql()} AS cursor, line, id FROM (
${row}
  )
)
ORDER BY ${this.keyOrderSql()}
LIMIT 1 BY id`;
    return { sql, params: p.values };
  }

  /**
   * The ids whose end rows a ranged page joins: every start row in its span of start times, a
   * superset of the page's (the join keeps its own) read by key range alone, cheaper than the
   * page's own conditions read a second time.
   */
  private startSpanIdsSql(p: Params, after: Cursor, upTo: Cursor): string {
    const ends = [p.add(after[0], "DateTime64(6, 'UTC')"), p.add(upTo[0], "DateTime64(6, 'UTC')")];
    const [from, to] = this.keys[0]!.desc ? [ends[1], ends[0]] : ends;
    return `SELECT id FROM calls_starts WHERE project_id = ${this.projectSql} AND started_at >= ${from} AND started_at <= ${to}`;
  }

  /**
   * True when a page's ids are picked from joined rows (a condition or sort key on end columns):
   * the caller then runs pageIdsQuery first and hands its ids to linesQuery. In one query the
   * pick (a join of the filter's starts with the project's ends) ran twice, once for each half
   * of the page's rows. Only for a
   * page of at most MAX_BOUND_IDS rows (the ids travel as a bound array); an unpaged query keeps
   * the subquery.
   */
  idsFirst(page: PageSpec): boolean {
    return !this.fromStartParts && page.limit !== undefined && page.limit <= MAX_BOUND_IDS;
  }

  /** The ids of one page (when `idsFirst`), in page order, as rows of `id`. */
  pageIdsQuery(page: PageSpec): BuiltQuery {
    const p = this.base.clone();
    return { sql: this.joinedIdsSql(p, page), params: p.values };
  }

  /**
   * Conditions a start row must meet: every condition on start columns, and not deleted
   * (calls_deleted is small: a page of start rows is exactly a page of visible calls).
   */
  private startConds(withDeleted = false, within?: string, searched = true): string[] {
    const conds = [
      `project_id = ${this.projectSql}`,
      ...(within ? [within] : []),
      ...this.idConds,
      ...(searched ? this.searches.map((s) => s(within)) : []),
      ...this.conds.filter((c) => !this.endConds.has(c)),
    ];
    if (!withDeleted) conds.push(notDeletedSql(this.projectSql));
    return conds;
  }

  /**
   * The count of matching calls when every condition reads start columns (fromStartParts): the
   * matching start rows less the deleted ones. FINAL folds a replayed start while reading (and
   * costs nothing where parts do not overlap, the usual case for time-ordered inserts); the
   * deleted ones are looked up by id (a small set; the id bloom filter), so the count does not
   * read every call's id as a `NOT IN` does.
   */
  startCountSql(): string {
    const where = this.startConds(true).join(' AND ');
    return `SELECT (SELECT count() FROM calls_starts FINAL WHERE ${where})
      - (SELECT count() FROM calls_starts FINAL WHERE ${where} AND id IN (SELECT id FROM calls_deleted WHERE project_id = ${this.projectSql})) AS count`;
  }

  /**
   * One page straight from calls_starts (only when `fromStartParts`): the next `limit` visible
   * calls by the sort keys after `after`, with `select`. Read in key order when the sort is
   * started_at. A start part replayed before the engine folded it may appear twice here (no
   * `LIMIT 1 BY id`: it stops the engine from ending the in-order read at the page size); the lines query keeps each id once, so the page may be one row short, which is
   * why `mayBeShort` tells the stream not to take a short page for the end. A narrow filter (a
   * trace, ids, a thread) matches few rows, where `LIMIT 1 BY id` costs nothing and spares the
   * stream a query for an empty last page.
   */
  private startPageSql(p: Params, page: PageSpec, select: string[]): string {
    const conds = this.startConds(false, spanSql(page.span, p));
    if (page.after) conds.push(afterCursor(this.keys, page.after, p));
    // Keys are never NULL (sortKeysOf), so "not after the last row" is "up to it, included".
    if (page.upTo) conds.push(`NOT ${afterCursor(this.keys, page.upTo, p)}`);
    return `SELECT ${select.join(', ')} FROM calls_starts
    WHERE ${conds.join(' AND ')}
    ORDER BY ${this.orderBy()}${this.narrow ? ' LIMIT 1 BY id' : ''}${CallsQueryPlan.limitOffset(p, page)}`;
  }

  /**
   * calls_starts (the start conditions) joined with calls_ends and calls_renames: one row per
   * visible call with `columns` under the names of CALL_COLUMNS (end columns NULL while a call
   * runs, deleted_at NULL: deleted calls are left out). The starts are the hashed side (the
   * filtered, smaller one); calls_ends is read for the whole project unless the filter is narrow
   * or `page.ids` names the rows (then by those ids: a primary-key lookup; the right-hand side of
   * `IN`: a parenthesised subquery or a bound array). `page.starts`: the
   * start rows, already selected. `final`: FINAL on both, so a replayed part not yet folded is
   * one row (charts over the whole project); without it a replay may repeat a row, which pages
   * fold (`LIMIT 1 BY id`) and counts take DISTINCT (FINAL would evaluate the conditions after
   * merging instead of in PREWHERE: ×2–3 on a filter).
   */
  private joinedSql(
    columns: Iterable<string>,
    final: boolean,
    page: { ids?: string; starts?: string; endsOnly?: string; startCond?: string; slice?: boolean; within?: string } = {},
  ): string {
    const cols = [...new Set(columns)];
    const startCols = [...new Set(['started_at', ...cols.filter((c) => START_COLUMNS.has(c) || START_FRAGMENTS.has(c))])];
    const endCols = [...new Set(cols.filter((c) => END_COLUMNS.has(c) || END_FRAGMENTS.has(c)))];
    const renamed = cols.includes('display_name');
    const fin = final ? ' FINAL' : '';
    // Rows named by id (a page's picks) need no search's narrowing: they were picked with it.
    const startWhere = [...this.startConds(false, page.within, !page.ids), ...(page.startCond ? [page.startCond] : [])].join(' AND ');
    const starts =
      page.starts ??
      `SELECT id, ${[...startCols, ...(renamed ? ['display_name'] : [])].join(', ')} FROM calls_starts${fin} WHERE ${startWhere}${page.ids ? ` AND id IN ${page.ids}` : ''}`;
    const select = [
      's.id AS id',
      ...startCols.map((c) => `s.${c} AS ${c}`),
      ...endCols.map((c) => `e.${c} AS ${c}`),
      // A rename (/call/update) wins over the start part's name.
      ...(renamed ? ['if(empty(r.id), s.display_name, toNullable(r.display_name)) AS display_name'] : []),
      ...(cols.includes('deleted_at') ? ["CAST(NULL, 'Nullable(DateTime64(3, \\'UTC\\'))') AS deleted_at"] : []),
      ...(cols.includes('project_id') ? [`${this.projectSql} AS project_id`] : []),
    ];
    let from = `(${starts}) AS s`;
    if (endCols.length) {
      const endWhere = [`project_id = ${this.projectSql}`];
      if (page.ids) endWhere.push(`id IN ${page.ids}`);
      // A search's span of start times (page.within) is small too: the ends of the calls its starts pick.
      else if (this.narrow || page.slice || page.within) endWhere.push(`id IN (SELECT id FROM calls_starts WHERE ${startWhere})`);
      // A condition no running call meets is evaluated on calls_ends first; only ended calls join.
      if (page.endsOnly) endWhere.push(page.endsOnly);
      const ends = `(SELECT id, ${endCols.join(', ')} FROM calls_ends${fin} WHERE ${endWhere.join(' AND ')}) AS e`;
      // A page's end rows (by id) are the small side: hashed, after the page's start rows.
      if (page.ids) from = `${from} LEFT JOIN ${ends} ON e.id = s.id`;
      else from = `${ends} ${page.endsOnly ? 'INNER' : 'RIGHT'} JOIN ${from} ON e.id = s.id`;
    }
    const feedbackCols = cols.flatMap((c) => this.feedback.byName.get(c) ?? []);
    if (feedbackCols.length) {
      // One row per call ref holding each feedback column (any row of its type, as the reference);
      // a call without such feedback reads '' (no match in the LEFT JOIN).
      const picks = feedbackCols.map(
        (c) => `${c.typeSql ? `anyIf(${c.column}, feedback_type = ${c.typeSql})` : `any(${c.column})`} AS ${c.name}`,
      );
      const prefix = `concat('weave:///', ${this.projectSql}, '/call/')`;
      from += `\n    LEFT JOIN (SELECT svc_ref, ${picks.join(', ')} FROM feedback WHERE project_id = ${this.projectSql} AND startsWith(svc_ref, ${prefix}) GROUP BY svc_ref) AS f ON f.svc_ref = concat(${prefix}, s.id)`;
      select.push(...feedbackCols.map((c) => `ifNull(f.${c.name}, '') AS ${c.name}`));
    }
    if (renamed) {
      // Renames are few: the project's latest one per call, hashed.
      from += `\n    LEFT JOIN (SELECT id, argMax(display_name, renamed_at) AS display_name FROM calls_renames WHERE project_id = ${this.projectSql} GROUP BY id) AS r ON r.id = s.id`;
    }
    const sql = `SELECT ${select.join(', ')}\n    FROM ${from}${endCols.length && !page.ids ? `\n    SETTINGS ${JOIN_BY_ID_SETTINGS}` : ''}`;
    return this.withExpansions(sql, cols);
  }

  /**
   * The joined rows with the expanded ref columns among `cols` (x_<n>): each the value of the
   * object version its ref names (one of the project's, live or not; NULL when none), or of the
   * table row a row ref names (`…/attr/rows/id/<row digest>`, as an evaluation's `inputs.example`;
   * only the rows the matched refs name are read), joined by the ref read from the row's dump or
   * from the outer expansion's value.
   */
  private withExpansions(rowsSql: string, cols: string[]): string {
    const wanted = this.expansions.columns.filter((c) => cols.includes(c.name));
    if (wanted.length === 0) return rowsSql;
    const objects = `SELECT concat('weave:///', project_id, '/', if(kind = 'op', 'op', 'object'), '/', object_id, ':', digest) AS ref, any(val_dump) AS val
      FROM object_versions WHERE project_id = ${this.projectSql} GROUP BY project_id, kind, object_id, digest`;
    // A row ref's key: 'row:' and the row's digest; any other ref is its own key.
    const keyOf = (ref: string) =>
      `if(position(${ref}, '/attr/rows/id/') > 0, concat('row:', extract(${ref}, '/attr/rows/id/([^/]+)')), ${ref})`;
    let from = `(${rowsSql}) AS j`;
    for (const c of wanted) {
      const source = c.source.startsWith('x_') ? `t_${c.source}.val` : `j.${c.source}`;
      const ref = RefExpansions.refSql(c, source);
      // Only a ref read from the call row names the rows to read ahead; one under another expansion reads them by its outer value.
      const rowDigests = c.source.startsWith('x_')
        ? ''
        : ` AND digest IN (SELECT extract(${RefExpansions.refSql(c, c.source)}, '/attr/rows/id/([^/]+)') FROM (${rowsSql}))`;
      const rows = `SELECT concat('row:', digest) AS ref, any(val_dump) AS val
      FROM table_rows WHERE project_id = ${this.projectSql}${rowDigests} GROUP BY digest`;
      from += `\n    LEFT JOIN (${objects}\n      UNION ALL ${rows}) AS t_${c.name} ON t_${c.name}.ref = ${keyOf(ref)}`;
    }
    const selects = wanted.map((c) => `if(t_${c.name}.ref = '', NULL, t_${c.name}.val) AS ${c.name}`);
    return `SELECT j.*, ${selects.join(', ')}\n    FROM ${from}`;
  }

  /** Phase 1 when a condition or sort key reads more than start columns: the start conditions on calls_starts, the rest on the joined rows. */
  private joinedIdsSql(p: Params, page: PageSpec, ordered = true): string {
    const conds = [...this.endConds];
    if (page.after) conds.push(afterCursor(this.keys, page.after, p));
    const within = spanSql(page.span, p);
    let sql = `SELECT ${ordered ? '' : 'DISTINCT '}id FROM (
    ${this.joinedSql(this.resolver.used, false, within ? { within } : {})}
  )${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`;
    // A replay not folded yet repeats a row: kept once where an offset counts rows (this path sorts the joined rows anyway).
    if (ordered) sql += `\n  ORDER BY ${this.orderBy()}${this.narrow || page.offset ? ' LIMIT 1 BY id' : ''}`;
    return sql + CallsQueryPlan.limitOffset(p, page);
  }

  /**
   * One row per matching call with `columns` (names of CALL_COLUMNS, or calls_ends' ready-made
   * ones), for aggregates over the matched set (the same set counts count), replays folded
   * (FINAL). `endsOnly`: a condition on end columns that no running call meets (e.g. "has
   * usage"), evaluated on calls_ends before the join, which then keeps only ended calls.
   * `slice`: a condition on start columns (some days); when `small`, a small part of the
   * project, whose end rows are then read by id.
   */
  matchedCallsSql(_p: Params, columns: string[], endsOnly?: string, slice?: { cond: string; small: boolean }): string {
    const rows = this.joinedSql([...columns, ...this.resolver.used], true, { endsOnly, startCond: slice?.cond, slice: slice?.small });
    return `SELECT id, ${columns.join(', ')} FROM (${rows})${this.endConds.size ? ` WHERE ${[...this.endConds].join(' AND ')}` : ''}`;
  }

  /**
   * The filter and query as conditions on rows that have the matched calls' columns (analytics
   * facts: analytics/facts.ts), or null when one reads a column `columns` does not have.
   */
  conditionsOver(columns: ReadonlySet<string>): string[] | null {
    for (const c of this.resolver.used) if (!columns.has(c)) return null;
    return [...this.idConds, ...this.searches.map((s) => s()), ...this.conds];
  }

  /** Whether the query searches text ($contains, $like…): its reads are heavy work, not a page by keys. */
  get searching(): boolean {
    return this.searches.length > 0;
  }

  /**
   * The direction a search's page is read in by start time, when it can be read a span at a time
   * (a search, sorted by started_at first): its first `limit` rows within a span next to the
   * page's start are the first overall once the span holds that many (services/query calls.ts).
   */
  get searchSpanOrder(): 'asc' | 'desc' | null {
    if (!this.searching || this.keys[0]!.sql !== 'started_at') return null;
    return this.keys[0]!.desc ? 'desc' : 'asc';
  }

  /**
   * Whether a long read may go by ranged pages (rangeCutsQuery, PageSpec.upTo): pages read
   * straight from calls_starts in start-time order (a key range each), with no search and no
   * narrow filter. The range, not a limit, bounds each page, so pages need not wait for the
   * one before to know where they begin, and can be read side by side.
   */
  get rangedPages(): boolean {
    return this.fromStartParts && !this.narrow && !this.searching && this.keys[0]!.sql === 'started_at';
  }

  /**
   * The keys (cursors, as the lines query gives them) that end the next `pages` pages of `rows`
   * start rows after `after`: every `rows`-th row's and the last row's, each with `total`, the
   * rows found (fewer than rows × pages: the end); none at the end. A
   * replayed start part not yet folded has its original's keys, so it falls in the same page
   * (where `LIMIT 1 BY id` keeps one).
   */
  rangeCutsQuery(after: Cursor | undefined, rows: number, pages: number): BuiltQuery {
    const p = this.base.clone();
    const keys = this.keySelects();
    const starts = this.startPageSql(p, { ...(after ? { after } : {}), limit: rows * pages }, keys);
    const sql = `SELECT cursor, total FROM (
  SELECT ${this.cursorSql()} AS cursor, row_number() OVER (ORDER BY ${this.keyOrderSql()}) AS n, count() OVER () AS total FROM (${starts})
) WHERE n % ${p.int(rows)} = 0 OR n = total ORDER BY n`;
    return { sql, params: p.values };
  }

  /**
   * Whether an offset is read as a cursor (offsetCursorQuery) before the first page, as pages
   * read straight from calls_starts in key order are. An offset counts calls, and a replayed start
   * the engine has not folded yet is two rows there; other pages keep each id once themselves.
   */
  get offsetByCursor(): boolean {
    return this.fromStartParts && !this.narrow && !this.searching;
  }

  /**
   * The cursor of the `offset`-th call in key order (a page after it is the page after the
   * offset), or no row past the last. Keys alone are read in key order, and a row whose id is the
   * row's before is a replay the engine has not folded yet (identical keys sort side by side):
   * left out before the offset is counted. `slack` more rows than the offset are read for those
   * replays (retried writes, folded within seconds); none (`undefined`): up to the end. At 10M
   * calls, FINAL cannot read newest-first in key order and `LIMIT 1 BY id` hashes every id: both
   * ×2–20 (docs/performance.md).
   */
  offsetCursorQuery(offset: number, slack?: number): BuiltQuery {
    const p = this.base.clone();
    const keys = this.keySelects();
    const prefix = this.startPageSql(p, slack === undefined ? {} : { limit: offset + slack }, keys);
    const id = `_k${this.keys.length - 1}`;
    const sql = `SELECT ${this.cursorSql()} AS cursor FROM (
  SELECT *, lagInFrame(${id}) OVER (ORDER BY ${this.keyOrderSql()} ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS _previous FROM (${prefix})
) WHERE ${id} != _previous
ORDER BY ${this.keyOrderSql()} LIMIT 1 OFFSET ${p.int(offset - 1)}`;
    return { sql, params: p.values };
  }

  /** Engine settings the plan's statements need (a search's: search.ts SEARCH_SETTINGS). */
  get settings(): Record<string, number> {
    return this.searching ? { ...SEARCH_SETTINGS } : {};
  }

  /** The project's first (asc) or last (desc) start time, as text: where a search's first span begins. */
  startEdgeQuery(order: 'asc' | 'desc'): BuiltQuery {
    const p = this.base.clone();
    return {
      sql: `SELECT toString(started_at) AS at FROM calls_starts WHERE project_id = ${this.projectSql} ORDER BY started_at ${order === 'desc' ? 'DESC' : 'ASC'} LIMIT 1`,
      params: p.values,
    };
  }

  /** The matching ids (no order), capped by `limit`: the body of counts and storage sums. */
  matchingIdsSql(p: Params, limit?: number): string {
    if (!this.fromStartParts) return this.joinedIdsSql(p, { limit }, false);
    // Start parts carry every column the conditions read. FINAL folds a replayed start part (an
    // identical key) while reading, and only where parts overlap, which time-ordered inserts
    // rarely do: no hash of every id, as DISTINCT would build.
    return `SELECT id FROM calls_starts FINAL WHERE ${this.startConds().join(' AND ')}${limit !== undefined ? ` LIMIT ${p.int(limit)}` : ''}`;
  }

  /** A page may hold fewer rows than its limit before the end (a replay not yet folded is kept once). */
  get mayBeShort(): boolean {
    return !this.narrow;
  }

  get params(): Params {
    return this.base.clone();
  }

  get projectParam(): string {
    return this.projectSql;
  }
}

/** One page: after a cursor, limited, offset; a search's page may look at a span of start times only. */
export interface PageSpec {
  after?: Cursor;
  /** The last row's keys, included (a ranged page: CallsQueryPlan.rangedPages). */
  upTo?: Cursor;
  limit?: number;
  offset?: number;
  span?: StartSpan;
}

/** The calls started within `ms` of `from` (a start time as text), after it (asc) or before it (desc), `from` included. */
export interface StartSpan {
  from: string;
  ms: number;
  order: 'asc' | 'desc';
}

/** A span as a condition on calls_starts' `started_at` (the key's second column: a key range). */
function spanSql(span: StartSpan | undefined, p: Params): string | undefined {
  if (!span) return undefined;
  const from = p.add(span.from, "DateTime64(6, 'UTC')");
  const ms = p.add(span.ms, 'Int64');
  return span.order === 'desc'
    ? `started_at >= ${from} - toIntervalMillisecond(${ms})`
    : `started_at < ${from} + toIntervalMillisecond(${ms})`;
}

/** COUNT for /calls/query_stats under the same filter and query (`limit` caps the count, as the reference). */
export function buildCallsStatsQuery(req: CallsQueryStatsReq): BuiltQuery & { plan: CallsQueryPlan } {
  const plan = new CallsQueryPlan({ ...req, sort_by: [] });
  const p = plan.params;
  const ids = plan.matchingIdsSql(p, req.limit || undefined);
  let sql = plan.fromStartParts && !req.limit ? plan.startCountSql() : `SELECT count() AS count FROM (${ids})`;
  if (req.include_total_storage_size) {
    // Trace totals are only carried by roots, so the sum is over the matching roots' traces.
    const roots = `SELECT DISTINCT trace_id FROM calls_starts WHERE project_id = ${plan.projectParam} AND id IN (${ids}) AND parent_id IS NULL`;
    sql = `SELECT (${sql}) AS count, (SELECT sum(total_storage_size_bytes) FROM (${traceSizesSql(plan.projectParam, roots)})) AS total_storage_size_bytes`;
  }
  return { sql, params: p.values, plan };
}

/**
 * Storage size of one call (reference §3.9): bytes of the attributes, inputs, output and
 * summary JSON, from the size columns of calls_starts and calls_ends (a
 * running call has no output or summary yet). Replays not yet folded are read once (FINAL).
 */
export function callSizesSql(projectParam: string, idCondition: string): string {
  return `SELECT s.id AS id, s.trace_id AS trace_id,
    toInt64(s.attributes_size_bytes + s.inputs_size_bytes + e.output_size_bytes + e.summary_size_bytes) AS storage_size_bytes
  FROM (SELECT id, ifNull(trace_id, '') AS trace_id, attributes_size_bytes, inputs_size_bytes FROM calls_starts FINAL
    WHERE project_id = ${projectParam} AND ${idCondition}) AS s
  LEFT JOIN (SELECT id, output_size_bytes, summary_size_bytes FROM calls_ends FINAL
    WHERE project_id = ${projectParam} AND id IN (SELECT id FROM calls_starts WHERE project_id = ${projectParam} AND ${idCondition})) AS e ON e.id = s.id`;
}

/** Per trace: the sum of its calls' storage sizes (`tracesSql` selects trace ids). */
export function traceSizesSql(projectParam: string, tracesSql: string): string {
  return `SELECT trace_id, toInt64(sum(storage_size_bytes)) AS total_storage_size_bytes FROM (${callSizesSql(projectParam, `trace_id IN (${tracesSql})`)}) GROUP BY trace_id`;
}
