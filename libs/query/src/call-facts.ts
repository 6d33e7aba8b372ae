import { latencySql, opBaseNameSql } from './call-json';
import { CallsQueryPlan } from './calls';
import { callTotalCostSql } from './costs';
import { withOwnUsageSql, type ChildrenOf } from './own-usage';
import { Params, type BuiltQuery } from './params';
import { deleteStatement, type Store } from '@weft/store';

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

/**
 * A usage entry's figure (`u`, a tuple of the `usage` column), by the derived column summing it
 * over a call's own usage; metrics over model rows read the same expression per entry.
 */
export const USAGE_ENTRY_FIGURES = {
  own_requests: 'u.2',
  own_prompt_tokens: 'u.3',
  own_completion_tokens: 'u.4',
  // An entry's total_tokens, or its prompt + completion counts when it has none (as the UI's Tokens column).
  own_total_tokens: 'if(u.5 > 0, u.5, u.3 + u.4)',
} as const;

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
 * The shape of the fact rows a build writes (call_facts_days.format): raised when the facts' columns
 * or what they hold change (3: own usage by the token roll-up rule, own-usage.ts), so days built
 * in an older shape are built again rather than read.
 */
export const FACTS_FORMAT = 3;

/** The tables a day's facts are built from, and the column of call_facts_days holding each one's watermark. */
export const FACT_SOURCES = [
  { table: 'calls_starts', mark: 'starts_block' },
  { table: 'calls_ends', mark: 'ends_block' },
  { table: 'calls_deleted', mark: 'deleted_block' },
  { table: 'llm_token_prices', mark: 'prices_block' },
] as const;

/** The sources whose new rows touch particular days (a new price touches every day). */
export const CALL_MARKS = ['starts_block', 'ends_block', 'deleted_block'] as const;

/** A usage array's cost per entry (NULL where its model has no price), as a call's total cost sums them. */
export const usageCostsSql = (projectSql: string, usage = 'usage') => `arrayMap(own -> ${callTotalCostSql(projectSql, '[own]')}, ${usage})`;

export type Watermark = Record<(typeof FACT_SOURCES)[number]['mark'], number>;

/** A day of a project's facts: its date (YYYY-MM-DD, UTC), its build, and what the build had read. */
export interface FactDay extends Watermark {
  day: string;
  build: number;
  calls: number;
}

/** The days a query may read from facts (current ones), and the other days that have calls. */
export interface FactsCoverage {
  current: readonly FactDay[];
  otherDays: readonly string[];
  /**
   * Days whose facts hold every call but the few that rows written since their build touch
   * (`ids`, with other days' touched calls): their facts are read without those calls, and those
   * calls from the call tables.
   */
  patched?: { days: readonly FactDay[]; ids: readonly string[]; children: readonly string[] };
}

/** Whether a coverage has days read from facts (current or patched). */
export const readsFactDays = (facts: FactsCoverage | undefined): boolean =>
  !!facts && facts.current.length + (facts.patched?.days.length ?? 0) > 0;

// call_facts_days too: with the sources, what a project's coverage is computed from.
const SOURCE_LIST = [...FACT_SOURCES.map((s) => `'${s.table}'`), `'call_facts_days'`].join(', ');

/**
 * Per source table (and call_facts_days), the highest block number of its parts and of its
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

/** The latest mutation number of each source (a delete or update since a build makes its days stale). */
export const mutationsOf = (counters: readonly SourceCounter[]) => perSource(counters, (c) => Number(c.mutation));

/** The highest block number of each source's parts (a row written since a build is above its watermark). */
export const blocksOf = (counters: readonly SourceCounter[]) => perSource(counters, (c) => Number(c.block));

/** The project's days with facts and their current build. */
export function factDaysQuery(projectId: string): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT toString(day) AS day, build, calls, starts_block, ends_block, deleted_block, prices_block
      FROM call_facts_days FINAL WHERE project_id = ${p.str(projectId)} AND format = ${FACTS_FORMAT} ORDER BY day`,
    params: p.values,
  };
}

/** The call tables' block numbers after which written rows are new (a watermark's call marks). */
export type CallMarks = Pick<Watermark, (typeof CALL_MARKS)[number]>;

/**
 * The rows written after `after` that touch calls, as (id, starts, ends, deleted block) rows: a
 * new start or end touches its call and its parent (a child's usage is subtracted from its
 * parent's), a deletion its call. A call without a start row yet touches nothing (it is no
 * matched call until it has one).
 */
function touchedRowsSql(p: Params, projectSql: string, after: CallMarks): string {
  const since = (mark: (typeof CALL_MARKS)[number]) => p.add(after[mark], 'UInt64');
  const newStarts = `SELECT id, parent_id, _block_number AS b FROM calls_starts WHERE project_id = ${projectSql} AND _block_number > ${since('starts_block')}`;
  const newEnds = `SELECT id, _block_number AS b FROM calls_ends WHERE project_id = ${projectSql} AND _block_number > ${since('ends_block')}`;
  return `SELECT id, b AS sb, toUInt64(0) AS eb, toUInt64(0) AS db FROM (${newStarts})
      UNION ALL SELECT assumeNotNull(parent_id), b, 0, 0 FROM (${newStarts}) WHERE parent_id IS NOT NULL
      UNION ALL SELECT id, 0, b, 0 FROM (${newEnds})
      UNION ALL SELECT assumeNotNull(s.parent_id), 0, e.b, 0 FROM (${newEnds}) AS e
        INNER JOIN (SELECT id, parent_id FROM calls_starts WHERE project_id = ${projectSql} AND parent_id IS NOT NULL
          AND id IN (SELECT id FROM (${newEnds}))) AS s ON s.id = e.id
      UNION ALL SELECT id, 0, 0, _block_number FROM calls_deleted WHERE project_id = ${projectSql} AND _block_number > ${since('deleted_block')}`;
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

/**
 * The days the rows written after `after` touch, with the highest block number touching each
 * per source, and how many calls of the day they touch.
 */
export function touchedDaysQuery(projectId: string, after: CallMarks): BuiltQuery {
  const p = new Params();
  const pid = p.str(projectId);
  const touched = touchedRowsSql(p, pid, after);
  const sql = `SELECT toString(toDate(s.started_at)) AS day, max(t.sb) AS starts_block, max(t.eb) AS ends_block, max(t.db) AS deleted_block,
      uniqExact(t.id) AS calls
    FROM (${touched}) AS t
    INNER JOIN (SELECT id, started_at FROM calls_starts WHERE project_id = ${pid} AND id IN (SELECT id FROM (${touched}))) AS s ON s.id = t.id
    GROUP BY day`;
  return { sql, params: p.values };
}

/**
 * How a query reads a coverage: the days' builds read from facts (current and patched), a
 * condition on those rows leaving out the patched days' touched calls, and the calls read from
 * the call tables instead (the other days', and those touched calls), as a condition on starts.
 */
export function factsSplit(
  p: Params,
  projectSql: string,
  facts: FactsCoverage,
): { factDays: FactDay[]; factConds: string[]; calls?: { cond: string; of: ChildrenOf } } {
  const patch = facts.patched;
  const factDays = [...facts.current, ...(patch?.days ?? [])];
  const other = facts.otherDays.length ? onDaysSql(p, facts.otherDays) : undefined;
  // The calls read from the call tables are among these ids (withOwnUsageSql's `parents`).
  const starts = (cond: string) => `(${daysStartIdsSql(projectSql, cond)})`;
  if (!patch?.days.length) return { factDays, factConds: [], calls: other ? { cond: other, of: { parents: starts(other) } } : undefined };
  const touched = p.add(patch.ids, 'Array(String)');
  const days = patch.days.map((d) => d.day);
  const patchedCalls = `(${onDaysSql(p, days)} AND id IN ${touched})`;
  const cond = other ? `(${other} OR ${patchedCalls})` : patchedCalls;
  return {
    factDays,
    factConds: [`(day NOT IN ${p.add(days, 'Array(Date)')} OR id NOT IN ${touched})`],
    // The touched ids and their children as lists when no other day is read: by key, not a subquery in a subquery.
    calls: { cond, of: other ? { parents: starts(cond) } : { parents: touched, children: p.add(patch.children, 'Array(String)') } },
  };
}

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The rows of the given builds of days, as literals: a set lookup the primary key narrows to
 * those days' ranges (a bound array would be searched per row). Days and builds are read from
 * call_facts_days, never from a request; checked here all the same.
 */
export function factDaysWhereSql(days: readonly Pick<FactDay, 'day' | 'build'>[]): string {
  const pairs = days.map((d) => {
    if (!DAY_TEXT.test(d.day) || !Number.isSafeInteger(d.build)) throw new Error(`not a fact day: ${d.day} ${d.build}`);
    return `(toDate('${d.day}'), ${d.build})`;
  });
  return `(day, build) IN (${pairs.join(', ')})`;
}

/** The fact rows of the current days with `columns`, meeting `conds` (conditions over the matched calls' columns). */
export function factRowsSql(projectSql: string, current: readonly FactDay[], columns: readonly string[], conds: readonly string[]): string {
  const where = [`project_id = ${projectSql}`, factDaysWhereSql(current), ...conds];
  return `SELECT ${columns.join(', ')} FROM call_facts WHERE ${where.join(' AND ')}`;
}

/** A condition on `started_at` for a set of UTC days (a key range first, so only those days' granules are read). */
export function onDaysSql(p: Params, days: readonly string[]): string {
  const sorted = [...days].sort();
  const first = p.str(sorted[0]!);
  const last = p.str(sorted[sorted.length - 1]!);
  return `(started_at >= toDateTime64(toDate(${first}), 6, 'UTC') AND started_at < toDateTime64(toDate(${last}) + 1, 6, 'UTC')
    AND toDate(started_at) IN ${p.add(sorted, 'Array(Date)')})`;
}

/** Builds `days` of a project's facts as build `build`: every visible call started on those days, with its own usage. */
export function buildFactsQuery(projectId: string, days: readonly string[], build: number): BuiltQuery {
  const plan = new CallsQueryPlan({ project_id: projectId, sort_by: [] });
  const p = plan.params;
  const cols = [...FACT_COLUMNS, 'usage'];
  // A few days' ends and children are looked up by id; a whole history's are read at once.
  const few = days.length <= 3;
  const cond = onDaysSql(p, days);
  const matched = plan.matchedCallsSql(p, cols, undefined, { cond, small: few });
  const calls = withOwnUsageSql(
    matched,
    cols,
    plan.projectParam,
    few ? { parents: `(${daysStartIdsSql(plan.projectParam, cond)})` } : undefined,
  );
  const derived = Object.keys(DERIVED_FACT_COLUMNS) as DerivedFactColumnName[];
  const sql = `INSERT INTO call_facts (project_id, day, build, id, ${cols.join(', ')}, usage_cost, ${derived.join(', ')})
    SELECT ${plan.projectParam}, toDate(started_at), ${p.add(build, 'UInt64')}, id, ${cols.join(', ')}, ${usageCostsSql(plan.projectParam)} AS usage_cost,
      ${derived.map((d) => DERIVED_FACT_COLUMNS[d].sql('usage_cost')).join(', ')}
    FROM (${calls})`;
  return { sql, params: p.values };
}

/** The ids of the calls started on some days (`onDaysSql`'s condition): the matched calls of those days are among them. */
export const daysStartIdsSql = (projectSql: string, daysCond: string) =>
  `SELECT id FROM calls_starts WHERE project_id = ${projectSql} AND ${daysCond}`;

/** The calls per day of one build (for its call_facts_days rows). */
export function builtDaysQuery(projectId: string, build: number): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT toString(day) AS day, count() AS calls FROM call_facts
      WHERE project_id = ${p.str(projectId)} AND build = ${p.add(build, 'UInt64')} GROUP BY day`,
    params: p.values,
  };
}

/** Every project's days with calls, and the first and latest start on each (a day still being written is built now and then). */
export const PROJECT_DAYS_SQL = `SELECT project_id, toString(toDate(started_at)) AS day,
    toUnixTimestamp64Micro(min(started_at)) AS first_us, toUnixTimestamp64Micro(max(started_at)) AS last_us
  FROM calls_starts GROUP BY project_id, day`;

/** Every project's days with facts (a day whose calls have all gone is built again, empty). */
export const FACT_DAYS_SQL = `SELECT project_id, toString(day) AS day FROM call_facts_days FINAL`;

/**
 * The rows of builds no longer current, of days whose current build is older than `graceUs`
 * (a query that read the old build is over by then).
 */
export function supersededFactsWhere(p: Params, graceUs: number): string {
  return `(project_id, day) IN (SELECT project_id, day FROM call_facts_days FINAL WHERE build < ${p.add(graceUs, 'UInt64')})
    AND (project_id, day, build) NOT IN (SELECT project_id, day, build FROM call_facts_days FINAL)`;
}

/** Removes the rows of builds superseded before `graceUs` (supersededFactsWhere). */
export async function removeSupersededFacts(store: Store, graceUs: number): Promise<void> {
  const p = new Params();
  await store.command(deleteStatement('call_facts', supersededFactsWhere(p, graceUs), store.cluster), p.values, {
    name: 'facts.remove_superseded',
  });
}

/**
 * Records a build of a project's days (call_facts_days): its number, each day's calls, and the
 * sources' counters read before the build (what is written later counts as new).
 */
export async function recordBuiltDays(
  store: Store,
  projectId: string,
  days: string[],
  build: number,
  counts: Map<string, number>,
  mark: Watermark,
): Promise<void> {
  await store.insertRows(
    'call_facts_days',
    days.map((day) => ({ project_id: projectId, day, build, calls: counts.get(day) ?? 0, ...mark, format: FACTS_FORMAT })),
    { name: 'facts.days_insert' },
  );
}

/** Whether any superseded build's rows are left to remove (read from the key, cheap). */
export function supersededFactsCountQuery(graceUs: number): BuiltQuery {
  const p = new Params();
  return {
    sql: `SELECT count() AS n FROM (SELECT DISTINCT project_id, day, build FROM call_facts) WHERE ${supersededFactsWhere(p, graceUs)}`,
    params: p.values,
  };
}

/**
 * The project's days with calls other than `current` (sorted): read by key ranges around the
 * current days' runs, so only those other days' granules are read.
 */
export function otherDaysQuery(projectId: string, current: readonly string[]): BuiltQuery {
  const p = new Params();
  const at = (day: string, plus = 0) => `toDateTime64(toDate(${p.str(day)}) + ${plus}, 6, 'UTC')`;
  // Runs of consecutive current days, each [first, last].
  const runs: [string, string][] = [];
  for (const d of [...current].sort()) {
    const run = runs[runs.length - 1];
    if (run && Date.parse(`${d}T00:00:00Z`) - Date.parse(`${run[1]}T00:00:00Z`) === 86_400_000) run[1] = d;
    else runs.push([d, d]);
  }
  const gaps: string[] = [];
  runs.forEach(([first, last], i) => {
    const before = i === 0 ? '' : `started_at >= ${at(runs[i - 1]![1], 1)} AND `;
    gaps.push(`(${before}started_at < ${at(first)})`);
    if (i === runs.length - 1) gaps.push(`started_at >= ${at(last, 1)}`);
  });
  const where = gaps.length ? `(${gaps.join(' OR ')})` : '1';
  return {
    sql: `SELECT DISTINCT toString(toDate(started_at)) AS day FROM calls_starts
      WHERE project_id = ${p.str(projectId)} AND ${where} ORDER BY day`,
    params: p.values,
  };
}
