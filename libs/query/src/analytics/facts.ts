import { USAGE_ENTRY_FIGURES } from '@weft/analytics';
import { deleteStatement, type Store } from '@weft/store';
import { latencySql, opBaseNameSql } from '../call-json';
import { CallsQueryPlan } from '../calls';
import { callTotalCostSql } from '../costs';
import { withOwnUsageSql, type ChildrenOf } from '../own-usage';
import { Params, type BuiltQuery } from '../params';

/**
 * Analytics facts: the per-call base of /analytics/query (each visible call once, with its own
 * usage) kept per (project, day) in `call_facts`, so that a day nothing has changed since its
 * build is read as rows instead of joined and rolled up again (migration 201).
 *
 * Exact by construction: a build records, per source table, the last block number it could have
 * read (`_block_number` of every row, the mutation numbers of deletes). A day's facts are used
 * only while no row written after that touches the day — a start or end of one of its calls or
 * of a child of one (a child's usage is subtracted from its parent's), a deletion — no mutation
 * ran on the sources since, and no price was added or removed (costs are kept per usage entry).
 * Everything else is read from the call tables as before.
 */

/** The matched calls' columns a fact row keeps (besides `id` and own `usage`), named as the calls' rows name them. */
export const FACT_COLUMNS: ReadonlySet<string> = new Set([
  'started_at',
  'ended_at',
  'op_name',
  'status',
  'exception',
  'parent_id',
  'trace_id',
  'thread_id',
  'svc_user_id',
]);

/**
 * What queries compute from a call's columns, kept computed in its fact row (migration 202): over
 * facts a query groups and sums these; over the call tables it computes them with the same SQL
 * (`sql`, from the columns `from`), so both read the same values.
 */
export interface DerivedFactColumn {
  /** `usageCosts`: the usage entries' costs (usageCostsSql, or a column holding them). */
  sql: (usageCosts: string) => string;
  /** The matched calls' columns it is computed from. */
  from: readonly string[];
}

const ownUsage = (figure: keyof typeof USAGE_ENTRY_FIGURES): DerivedFactColumn => ({
  sql: () => `toInt64(arraySum(u -> ${USAGE_ENTRY_FIGURES[figure]}, usage))`,
  from: ['usage'],
});

export const DERIVED_FACT_COLUMNS = {
  op_base: { sql: () => opBaseNameSql('op_name'), from: ['op_name'] },
  latency_ms: { sql: () => `if(ended_at IS NULL, NULL, toFloat64(${latencySql}))`, from: ['started_at', 'ended_at'] },
  errored: { sql: () => 'exception IS NOT NULL', from: ['exception'] },
  own_requests: ownUsage('own_requests'),
  own_prompt_tokens: ownUsage('own_prompt_tokens'),
  own_completion_tokens: ownUsage('own_completion_tokens'),
  own_total_tokens: ownUsage('own_total_tokens'),
  // The sum of the entries' costs (an entry without a price counts 0).
  own_cost_total: { sql: (usageCosts) => `arraySum(x -> ifNull(x, 0), ${usageCosts})`, from: ['usage'] },
} satisfies Record<string, DerivedFactColumn>;

export type DerivedFactColumnName = keyof typeof DERIVED_FACT_COLUMNS;

export const isDerivedFactColumn = (name: string): name is DerivedFactColumnName => Object.hasOwn(DERIVED_FACT_COLUMNS, name);

/**
 * Fact rows' `columns` (matched calls' columns, `usage_cost`, derived columns) computed over the
 * call tables' matched calls `calls` (with the base columns `callColumnsFor` names): a day without
 * current facts reads as its facts would.
 */
export function asFactRowsSql(columns: readonly string[], calls: string, projectSql: string): string {
  const costs = usageCostsSql(projectSql);
  const terms = columns.map((c) => {
    if (isDerivedFactColumn(c)) return `${DERIVED_FACT_COLUMNS[c].sql(costs)} AS ${c}`;
    return c === 'usage_cost' ? `${costs} AS usage_cost` : c;
  });
  return `SELECT ${terms.join(', ')} FROM (${calls})`;
}

/** The matched calls' columns `asFactRowsSql` computes fact columns from. */
export function callColumnsFor(columns: readonly string[]): string[] {
  const base = new Set<string>();
  for (const c of columns) {
    if (isDerivedFactColumn(c)) for (const f of DERIVED_FACT_COLUMNS[c].from) base.add(f);
    else base.add(c === 'usage_cost' ? 'usage' : c);
  }
  return [...base];
}

/**
 * The shape of the fact rows a build writes (call_facts_segments.format): raised when the facts'
 * columns or what they hold change (4: built by segment), so segments built in an older shape are
 * built again rather than read.
 */
export const FACTS_FORMAT = 4;

/** The tables a segment's facts are built from, and the column of call_facts_segments holding each one's watermark. */
export const FACT_SOURCES = [
  { table: 'calls_starts', mark: 'starts_block' },
  { table: 'calls_ends', mark: 'ends_block' },
  { table: 'calls_deleted', mark: 'deleted_block' },
  { table: 'llm_token_prices', mark: 'prices_block' },
] as const;

/** The sources whose new rows touch particular calls (a new price touches every segment). */
export const CALL_MARKS = ['starts_block', 'ends_block', 'deleted_block'] as const;

/** A usage array's cost per entry (NULL where its model has no price), as a call's total cost sums them. */
export const usageCostsSql = (projectSql: string, usage = 'usage') => `arrayMap(own -> ${callTotalCostSql(projectSql, '[own]')}, ${usage})`;

export type Watermark = Record<(typeof FACT_SOURCES)[number]['mark'], number>;

/** Calls started in [from, to) (µs since the epoch); null: unbounded on that side. */
export type StartRange = readonly [from: number | null, to: number | null];

/**
 * A segment of a project's facts: the calls started in [from_us, to_us) of one UTC day (YYYY-MM-DD),
 * its build, how many calls it holds and what the build had read (or a later look found current).
 */
export interface FactSegment extends Watermark {
  day: string;
  from_us: number;
  to_us: number;
  build: number;
  calls: number;
}

/** The segments a query may read from facts (current ones), and the start ranges it reads from the call tables. */
export interface FactsCoverage {
  current: readonly FactSegment[];
  /** Where no segment is read (ranges between them, before the first, after the last): from the call tables. */
  other: readonly StartRange[];
  /**
   * Segments whose facts hold every call but the few that rows written since their build touch
   * (`ids`, with other segments' touched calls): their facts are read without those calls, and
   * those calls from the call tables.
   */
  patched?: { segments: readonly FactSegment[]; ids: readonly string[]; children: readonly string[] };
}

/** Whether a coverage has segments read from facts (current or patched). */
export const readsFacts = (facts: FactsCoverage | undefined): boolean =>
  !!facts && facts.current.length + (facts.patched?.segments.length ?? 0) > 0;

// call_facts_segments too: with the sources, what a project's coverage is computed from.
const SOURCE_LIST = [...FACT_SOURCES.map((s) => `'${s.table}'`), `'call_facts_segments'`].join(', ');

/**
 * Per source table (and call_facts_segments), the highest block number of its parts and of its
 * mutations (a delete's number comes from the same counter).
 */
export const SOURCE_COUNTERS_SQL = `SELECT table, toUInt64(max(block)) AS block, toUInt64(max(mutation)) AS mutation FROM (
    SELECT table, max_block_number AS block, 0 AS mutation FROM system.parts
    WHERE database = currentDatabase() AND active AND table IN (${SOURCE_LIST})
    UNION ALL
    SELECT table, 0 AS block, toUInt64OrZero(extract(mutation_id, '(\\\\d+)')) AS mutation FROM system.mutations
    WHERE database = currentDatabase() AND table IN (${SOURCE_LIST})
  ) GROUP BY table`;

export interface SourceCounter {
  table: string;
  block: number | string;
  mutation: number | string;
}

/** A number per source (0 for a table with no parts and no mutations), by its watermark's name. */
function perSource(counters: readonly SourceCounter[], pick: (c: SourceCounter) => number): Watermark {
  const mark = {} as Watermark;
  for (const s of FACT_SOURCES) {
    const c = counters.find((x) => x.table === s.table);
    mark[s.mark] = c ? pick(c) : 0;
  }
  return mark;
}

/** A build's watermark from the counters read before it: every row and delete up to it is in what the build read. */
export const watermarkOf = (counters: readonly SourceCounter[]) =>
  perSource(counters, (c) => Math.max(Number(c.block), Number(c.mutation)));

/** The latest mutation number of each source (a delete or update since a build makes its segments stale). */
export const mutationsOf = (counters: readonly SourceCounter[]) => perSource(counters, (c) => Number(c.mutation));

/** The highest block number of each source's parts (a row written since a build is above its watermark). */
export const blocksOf = (counters: readonly SourceCounter[]) => perSource(counters, (c) => Number(c.block));

/**
 * The project's segments, by start (their rows' latest versions: FINAL first, then the
 * removed ones and older shapes left out — a condition inside FINAL could hide a removal).
 */
export function factSegmentsQuery(projectId: string): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT toString(day) AS day, from_us, to_us, build, calls, starts_block, ends_block, deleted_block, prices_block
      FROM (SELECT * FROM call_facts_segments FINAL WHERE project_id = ${p.str(projectId)})
      WHERE to_us > from_us AND format = ${FACTS_FORMAT} ORDER BY from_us`,
    params: p.values,
  };
}

/** The call tables' block numbers after which written rows are new (a watermark's call marks). */
export type CallMarks = Pick<Watermark, (typeof CALL_MARKS)[number]>;

/** The rows of the call tables written after `after` (few: a block-number condition reads only new parts' rows). */
function newRowsSql(p: Params, projectSql: string, after: CallMarks): { starts: string; ends: string; deleted: string } {
  const since = (mark: (typeof CALL_MARKS)[number]) => p.add(after[mark], 'UInt64');
  const rows = (table: string, columns: string, mark: (typeof CALL_MARKS)[number]) =>
    `SELECT ${columns}, _block_number AS b FROM ${table} PREWHERE project_id = ${projectSql} AND _block_number > ${since(mark)}`;
  return {
    starts: rows('calls_starts', 'id, parent_id, started_at', 'starts_block'),
    ends: rows('calls_ends', 'id', 'ends_block'),
    deleted: rows('calls_deleted', 'id', 'deleted_block'),
  };
}

/**
 * The start rows of calls `idsSql` that are not among the new starts: looked up by id, which the
 * id index makes cheap only because such calls are few (ends of calls started before, parents).
 */
const olderStartsSql = (projectSql: string, starts: string, idsSql: string, columns: string, startCond = '1') =>
  `SELECT ${columns} FROM calls_starts WHERE project_id = ${projectSql} AND ${startCond}
        AND id IN (SELECT id FROM (${idsSql}) WHERE id NOT IN (SELECT id FROM (${starts})))`;

/**
 * The rows written after `after` that touch calls, as (id, starts, ends, deleted block) rows: a
 * new start or end touches its call and its parent (a child's usage is subtracted from its
 * parent's), a deletion its call. A call without a start row yet touches nothing (it is no
 * matched call until it has one). An ended call's parent comes from its new start row when it
 * has one, so only calls started before are looked up.
 */
function touchedRowsSql(p: Params, projectSql: string, after: CallMarks): string {
  const { starts, ends, deleted } = newRowsSql(p, projectSql, after);
  const endedParents = `SELECT id, parent_id FROM (${starts}) WHERE id IN (SELECT id FROM (${ends}))
        UNION ALL ${olderStartsSql(projectSql, starts, `SELECT id FROM (${ends})`, 'id, parent_id')}`;
  return `SELECT id, b AS sb, toUInt64(0) AS eb, toUInt64(0) AS db FROM (${starts})
      UNION ALL SELECT assumeNotNull(parent_id), b, 0, 0 FROM (${starts}) WHERE parent_id IS NOT NULL
      UNION ALL SELECT id, 0, b, 0 FROM (${ends})
      UNION ALL SELECT assumeNotNull(s.parent_id), 0, e.b, 0 FROM (${ends}) AS e
        INNER JOIN (SELECT * FROM (${endedParents}) WHERE parent_id IS NOT NULL) AS s ON s.id = e.id
      UNION ALL SELECT id, 0, 0, b FROM (${deleted})`;
}

/** The ids of the children of calls `ids`, at most `limit` (the parent_id bloom filter finds them). */
export function childIdsQuery(projectId: string, ids: readonly string[], limit: number): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT id FROM calls_starts WHERE project_id = ${p.str(projectId)} AND parent_id IN ${p.add(ids, 'Array(String)')} LIMIT ${p.int(limit)}`,
    params: p.values,
  };
}

/** The ids of the calls the rows written after `after` touch (touchedRowsSql), at most `limit`. */
export function touchedIdsQuery(projectId: string, after: CallMarks, limit: number): BuiltQuery {
  const p = new Params();
  return { sql: `SELECT DISTINCT id FROM (${touchedRowsSql(p, p.str(projectId), after)}) LIMIT ${p.int(limit)}`, params: p.values };
}

/** How many rows of the call tables were written after `after` (starts, ends and deletions). */
export function newRowsCountQuery(projectId: string, after: CallMarks): BuiltQuery {
  const p = new Params();
  const { starts, ends, deleted } = newRowsSql(p, p.str(projectId), after);
  return {
    sql: `SELECT (SELECT count() FROM (${starts})) + (SELECT count() FROM (${ends})) + (SELECT count() FROM (${deleted})) AS n`,
    params: p.values,
  };
}

/**
 * The segments (of `segments`, sorted by start) the rows written after `after` touch: per
 * segment's index, the highest block number touching it per source and how many of its calls
 * they touch. A touched call outside every segment is left out (it is read from the call tables).
 */
export function touchedSegmentsQuery(
  projectId: string,
  after: CallMarks,
  segments: readonly Pick<FactSegment, 'from_us' | 'to_us'>[],
): BuiltQuery {
  const p = new Params();
  const pid = p.str(projectId);
  const touched = touchedRowsSql(p, pid, after);
  const { starts } = newRowsSql(p, pid, after);
  const froms = p.add(
    segments.map((s) => s.from_us),
    'Array(Int64)',
  );
  const tos = p.add(
    segments.map((s) => s.to_us),
    'Array(Int64)',
  );
  // A touched call's start: its new start row, or (started before) its start row looked up; only
  // starts within the segments' span (a bulk of new calls after them is no side of the join).
  const span = startRangesSql(p, [[segments[0]?.from_us ?? 0, Math.max(0, ...segments.map((s) => s.to_us))]]);
  const startsOf = `SELECT id, started_at FROM (${starts}) WHERE ${span}
      UNION ALL ${olderStartsSql(pid, starts, `SELECT id FROM (${touched})`, 'id, started_at', span)}`;
  // The segment a start falls in: the number of segments starting at or before it (1-based), if it is before that one's end.
  const sql = `SELECT seg - 1 AS segment, max(t.sb) AS starts_block, max(t.eb) AS ends_block, max(t.db) AS deleted_block, uniqExact(t.id) AS calls
    FROM (${touched}) AS t
    INNER JOIN (SELECT id, arrayCount(f -> f <= toUnixTimestamp64Micro(started_at), ${froms}) AS n,
        if(n > 0 AND toUnixTimestamp64Micro(started_at) < ${tos}[n], n, 0) AS seg
      FROM (${startsOf})) AS s ON s.id = t.id
    WHERE seg > 0
    GROUP BY seg`;
  return { sql, params: p.values };
}

/** A condition on `started_at` for start ranges (key ranges, so only their granules are read). */
export function startRangesSql(p: Params, ranges: readonly StartRange[]): string {
  const bound = (op: string, us: number) => `started_at ${op} fromUnixTimestamp64Micro(${p.add(us, 'Int64')}, 'UTC')`;
  const terms = ranges.map(([from, to]) => {
    const parts = [...(from === null ? [] : [bound('>=', from)]), ...(to === null ? [] : [bound('<', to)])];
    return parts.length ? `(${parts.join(' AND ')})` : '1';
  });
  return terms.length ? `(${terms.join(' OR ')})` : '0';
}

/**
 * How a query reads a coverage: the segments' builds read from facts (current and patched), a
 * condition on those rows leaving out the patched segments' touched calls, and the calls read
 * from the call tables instead (the other ranges', and those touched calls), as a condition on starts.
 */
export function factsSplit(
  p: Params,
  projectSql: string,
  facts: FactsCoverage,
): { segments: FactSegment[]; factConds: string[]; calls?: { cond: string; of: ChildrenOf } } {
  const patch = facts.patched;
  const segments = [...facts.current, ...(patch?.segments ?? [])];
  const other = facts.other.length ? startRangesSql(p, facts.other) : undefined;
  // The calls read from the call tables are among these ids (withOwnUsageSql's `parents`).
  const starts = (cond: string) => `(${startIdsSql(projectSql, cond)})`;
  if (!patch?.segments.length)
    return { segments, factConds: [], calls: other ? { cond: other, of: { parents: starts(other) } } : undefined };
  const touched = p.add(patch.ids, 'Array(String)');
  const patchedCalls = `(${startRangesSql(
    p,
    patch.segments.map((s) => [s.from_us, s.to_us]),
  )} AND id IN ${touched})`;
  const cond = other ? `(${other} OR ${patchedCalls})` : patchedCalls;
  return {
    segments,
    // By (day, build): a build may hold other days' segments, current ones.
    factConds: [`(NOT ${factSegmentsWhereSql(patch.segments)} OR id NOT IN ${touched})`],
    // The touched ids and their children as lists when no other range is read: by key, not a subquery in a subquery.
    calls: { cond, of: other ? { parents: starts(cond) } : { parents: touched, children: p.add(patch.children, 'Array(String)') } },
  };
}

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The rows of the given segments' builds, as literals: a set lookup the primary key narrows to
 * those builds' ranges (a bound array would be searched per row). Days and builds are read from
 * call_facts_segments, never from a request; checked here all the same.
 */
export function factSegmentsWhereSql(segments: readonly Pick<FactSegment, 'day' | 'build'>[]): string {
  const pairs = segments.map((d) => {
    if (!DAY_TEXT.test(d.day) || !Number.isSafeInteger(d.build)) throw new Error(`not a fact segment: ${d.day} ${d.build}`);
    return `(toDate('${d.day}'), ${d.build})`;
  });
  return `(day, build) IN (${pairs.join(', ')})`;
}

/** The fact rows of the segments with `columns`, meeting `conds` (conditions over the matched calls' columns). */
export function factRowsSql(
  projectSql: string,
  segments: readonly FactSegment[],
  columns: readonly string[],
  conds: readonly string[],
): string {
  const where = [`project_id = ${projectSql}`, factSegmentsWhereSql(segments), ...conds];
  return `SELECT ${columns.join(', ')} FROM call_facts WHERE ${where.join(' AND ')}`;
}

/**
 * Builds the facts of the calls started in `ranges` as build `build`: every visible call started
 * there, with its own usage. A build holds at most one range of a day (a segment is a day's
 * (day, build) pair).
 */
export function buildFactsQuery(projectId: string, ranges: readonly (readonly [number, number])[], build: number): BuiltQuery {
  const plan = new CallsQueryPlan({ project_id: projectId, sort_by: [] });
  const p = plan.params;
  const cols = [...FACT_COLUMNS, 'usage'];
  // A few days' ends and children are looked up by id; a whole history's are read at once.
  const few = Math.max(...ranges.map((r) => r[1])) - Math.min(...ranges.map((r) => r[0])) <= 3 * 86_400_000_000;
  const cond = startRangesSql(p, ranges);
  const matched = plan.matchedCallsSql(p, cols, undefined, { cond, small: few });
  const calls = withOwnUsageSql(
    matched,
    cols,
    plan.projectParam,
    few ? { parents: `(${startIdsSql(plan.projectParam, cond)})` } : undefined,
  );
  const derived = Object.keys(DERIVED_FACT_COLUMNS) as DerivedFactColumnName[];
  const sql = `INSERT INTO call_facts (project_id, day, build, id, ${cols.join(', ')}, usage_cost, ${derived.join(', ')})
    SELECT ${plan.projectParam}, toDate(started_at), ${p.add(build, 'UInt64')}, id, ${cols.join(', ')}, ${usageCostsSql(plan.projectParam)} AS usage_cost,
      ${derived.map((d) => DERIVED_FACT_COLUMNS[d].sql('usage_cost')).join(', ')}
    FROM (${calls})`;
  return { sql, params: p.values };
}

/** The ids of the calls started where `startsCond` says: the matched calls there are among them. */
export const startIdsSql = (projectSql: string, startsCond: string) =>
  `SELECT id FROM calls_starts WHERE project_id = ${projectSql} AND ${startsCond}`;

/** How many calls of each day one build holds (its segments' rows). */
export function builtCallsQuery(projectId: string, build: number): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT toString(day) AS day, count() AS calls FROM call_facts
      WHERE project_id = ${p.str(projectId)} AND build = ${p.add(build, 'UInt64')} GROUP BY day`,
    params: p.values,
  };
}

/** Every project's days with calls, and the first and latest start on each (µs). */
export const PROJECT_DAYS_SQL = `SELECT project_id, toString(toDate(started_at)) AS day,
    toUnixTimestamp64Micro(min(started_at)) AS first_us, toUnixTimestamp64Micro(max(started_at)) AS last_us
  FROM calls_starts GROUP BY project_id, day`;

/** Every project's days with segments (a day whose calls have all gone has its segments built again, empty). */
export const FACT_SEGMENT_DAYS_SQL = `SELECT DISTINCT project_id, toString(day) AS day FROM call_facts_segments`;

/** A segment's row: a build of it, a later look that found it current (its watermark moved on), or its removal. */
export interface SegmentRow extends FactSegment {
  project_id: string;
}

/** Writes segment rows in one insert (a merge's new segment and the removal of the one it absorbed are seen together). */
export async function recordSegments(store: Store, rows: readonly SegmentRow[], version: number): Promise<void> {
  await store.insertRows(
    'call_facts_segments',
    rows.map((r) => ({ ...r, format: FACTS_FORMAT, version })),
    { name: 'facts.segments_insert' },
  );
}

/** A build no segment reads any more, replaced at `at` (ms): its rows go once the queries that read it are over. */
export interface RetiredBuild {
  day: string;
  build: number;
  /** When its segment was replaced (ms). */
  at: number;
}

/** Every project's current segments (conditions on a row's latest version go outside FINAL). */
const CURRENT_SEGMENTS = `(SELECT * FROM call_facts_segments FINAL) WHERE to_us > from_us AND format = ${FACTS_FORMAT}`;

/**
 * The rows of builds no segment reads: the `retired` ones (replaced more than a grace ago), and
 * on days no segment changed on since `graceUs`, every build but the current ones (older shapes,
 * builds whose replacement this process did not see).
 */
export function supersededFactsWhere(p: Params, graceUs: number, retired: readonly RetiredBuild[]): string {
  const grace = p.add(graceUs, 'UInt64');
  // A day none of whose segments was built since the grace began (a removal comes with a new build of the same day).
  const quiet = `(project_id, day) NOT IN (SELECT project_id, day FROM ${CURRENT_SEGMENTS} AND build >= ${grace})
    AND build < ${grace}
    AND (project_id, day, build) NOT IN (SELECT project_id, day, build FROM ${CURRENT_SEGMENTS})`;
  if (!retired.length) return `(${quiet})`;
  // A build may hold one range of several days: a retired one is its day's rows of it.
  return `(${factSegmentsWhereSql(retired)} OR (${quiet}))`;
}

/** Removes the rows of superseded builds (supersededFactsWhere). */
export async function removeSupersededFacts(store: Store, graceUs: number, retired: readonly RetiredBuild[]): Promise<void> {
  const p = new Params();
  await store.command(deleteStatement('call_facts', supersededFactsWhere(p, graceUs, retired), store.cluster), p.values, {
    name: 'facts.remove_superseded',
  });
}

/** Whether any superseded build's rows are left to remove (read from the key, cheap). */
export function supersededFactsCountQuery(graceUs: number, retired: readonly RetiredBuild[]): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT count() AS n FROM (SELECT DISTINCT project_id, day, build FROM call_facts) WHERE ${supersededFactsWhere(p, graceUs, retired)}`,
    params: p.values,
  };
}

/** Whether the project has calls started in `ranges` (the ranges a query would read from the call tables). */
export function callsInRangesQuery(projectId: string, ranges: readonly StartRange[]): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT count() AS n FROM (SELECT 1 FROM calls_starts WHERE project_id = ${p.str(projectId)} AND ${startRangesSql(p, ranges)} LIMIT 1)`,
    params: p.values,
  };
}

/** The calls started in each minute of `range` (a new range's size, to cut it: fact-segments.ts splitByCalls). */
export function startCountsQuery(projectId: string, range: readonly [number, number]): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT toUnixTimestamp(toStartOfMinute(started_at)) * 1000000 AS at_us, count() AS calls FROM calls_starts
      WHERE project_id = ${p.str(projectId)} AND ${startRangesSql(p, [range])} GROUP BY at_us ORDER BY at_us`,
    params: p.values,
  };
}

/** The start ranges outside `covered` (sorted by start, not overlapping): before, between and after them. */
export function gapsOf(covered: readonly Pick<FactSegment, 'from_us' | 'to_us'>[]): StartRange[] {
  const gaps: StartRange[] = [];
  let at: number | null = null;
  for (const s of covered) {
    if (at === null ? true : s.from_us > at) gaps.push([at, s.from_us]);
    at = s.to_us;
  }
  gaps.push([at, null]);
  return gaps;
}
