import type { ThreadsStreamQueryReq } from '@weft/api';
import { ApiError, microsToClickHouse, parseTimestampMicros } from '@weft/core';
import { notDeletedSql } from './repositories/calls';
import { Params, type BuiltQuery } from './params';

/**
 * A turn call: its own turn (turn_id = id) in a thread. calls_starts.is_turn holds this, computed
 * as the row is stored (the schema holds this text; a unit test compares them).
 */
export const TURN_SQL = "ifNull(turn_id = id, 0) AND ifNull(thread_id, '') != ''";

export const THREAD_SORT_FIELDS = ['thread_id', 'turn_count', 'start_time', 'last_updated', 'p50_turn_duration_ms', 'p99_turn_duration_ms'];

/**
 * Thread statistics (reference §4) over turn calls only: a turn call is its own turn (id = turn_id)
 * and belongs to a thread. The turn calls are read from calls_starts (a time window is a key
 * range there; skip indexes on turn_id/thread_id) and joined with their end times from
 * calls_ends: no merge of whole calls. The turns (a tenth of the calls or fewer) are the hashed
 * side, as written: the planner's swap hashed the ends instead.
 * Quantiles are exact (linear interpolation at level·(n−1), like the reference's in-memory server);
 * durations are whole milliseconds (dateDiff), turns not yet ended are left out of them.
 */
export function buildThreadsQuery(req: ThreadsStreamQueryReq, candidates?: readonly string[]): BuiltQuery {
  const p = new Params();
  const { starts, ends, order } = threadConditions(req, p);
  // Only the candidate threads (threadCandidatesQuery), all of them: the caller takes the page.
  // Their turns are found by the thread bloom filter (idx_thread_id_exact), their ends by id.
  if (candidates) starts.push(`thread_id IN ${p.strArray(candidates)}`);
  if (req.filter?.thread_ids || candidates) ends.push(`id IN (SELECT id FROM calls_starts WHERE ${starts.join(' AND ')})`);

  let sql = `SELECT thread_id, turn_count, toString(start_time) AS start_time, toString(last_updated) AS last_updated,
  first_turn_id, last_turn_id, p50_turn_duration_ms, p99_turn_duration_ms
FROM (
  SELECT thread_id,
    toInt64(count()) AS turn_count,
    min(call_start) AS start_time,
    max(call_end) AS last_updated,
    argMin(id, call_start) AS first_turn_id,
    argMax(id, call_end) AS last_turn_id,
    quantilesExactInclusive(0.5, 0.99)(duration) AS _q,
    _q[1] AS p50_turn_duration_ms,
    _q[2] AS p99_turn_duration_ms
  FROM (
    SELECT s.id AS id, s.thread_id AS thread_id, s.started_at AS call_start, e.call_end AS call_end,
      if(call_end IS NULL, NULL, dateDiff('millisecond', call_start, call_end)) AS duration
    FROM (SELECT id, ended_at AS call_end FROM calls_ends FINAL WHERE ${ends.join(' AND ')}) AS e
    RIGHT JOIN (SELECT id, thread_id, started_at FROM calls_starts FINAL WHERE ${starts.join(' AND ')}) AS s ON e.id = s.id
    SETTINGS query_plan_join_swap_table = 'false'
  )
  GROUP BY thread_id
  HAVING last_updated IS NOT NULL
)
ORDER BY ${order.join(', ')}`;
  if (candidates) return { sql, params: p.values };
  if (req.limit) sql += ` LIMIT ${p.int(req.limit)}`;
  if (req.offset) sql += `${req.limit ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  return { sql, params: p.values };
}

/** Sort fields a thread's turn calls alone decide (no end time): turn_count, start_time, thread_id. */
const START_SORT_FIELDS = new Set(['turn_count', 'start_time', 'thread_id']);
/** The largest page (limit + offset) the candidates serve; beyond it, one query over every thread. */
const MAX_CANDIDATE_PAGE = 1000;
/**
 * A page of threads sorted on what their turn calls alone decide (turn_count, start_time,
 * thread_id) needs the end times (last_updated, durations) of a few threads only: the
 * candidates are the first `max` threads in that order from calls_starts alone (no join, no
 * quantiles), and buildThreadsQuery(req, candidates) computes their statistics. Exact: a thread
 * that is not a candidate sorts after every candidate, so when at least limit + offset
 * candidates keep a row (a thread without an ended turn has none) — or every thread is a
 * candidate — the page is the first rows of theirs. Otherwise the caller runs the whole query
 * (docs/performance.md, "Threads: candidates first").
 * Undefined when the sort or the page does not allow it.
 */
export function threadCandidatesQuery(req: ThreadsStreamQueryReq): (BuiltQuery & { max: number; want: number }) | undefined {
  const sortBy = req.sort_by ?? [{ field: 'last_updated', direction: 'desc' as const }];
  const want = (req.limit ?? 0) + (req.offset ?? 0);
  if (!req.limit || want > MAX_CANDIDATE_PAGE || !sortBy.every((s) => START_SORT_FIELDS.has(s.field))) return undefined;
  const p = new Params();
  const { starts, order } = threadConditions(req, p);
  // A few threads more than the page, for the ones with no ended turn (left out of the result).
  const max = 2 * want + 100;
  const sql = `SELECT thread_id FROM (
  SELECT thread_id, toInt64(count()) AS turn_count, min(started_at) AS start_time
  FROM calls_starts FINAL WHERE ${starts.join(' AND ')}
  GROUP BY thread_id
)
ORDER BY ${order.join(', ')}
LIMIT ${p.int(max)}`;
  return { sql, params: p.values, max, want };
}

/** The turn calls' conditions (calls_starts), their end rows' (calls_ends) and the ORDER BY terms. */
function threadConditions(req: ThreadsStreamQueryReq, p: Params): { starts: string[]; ends: string[]; order: string[] } {
  const pid = p.str(req.project_id);
  const starts = [
    `project_id = ${pid}`,
    // TURN_SQL, ready-made (calls_starts.is_turn): one byte per call instead of two id columns.
    'is_turn = 1',
    notDeletedSql(pid),
  ];
  const f = req.filter;
  if (f?.thread_ids) {
    if (f.thread_ids.length > 1000)
      throw new ApiError(400, `filter.thread_ids: at most 1000 entries (got ${f.thread_ids.length})`, { field: 'filter.thread_ids' });
    starts.push(`thread_id IN ${p.strArray(f.thread_ids)}`);
  }
  // The turn calls' end times (calls_ends): by id when the threads are named, else the project's,
  // narrowed to ends after the window's start (a call ends after it starts; a minmax index).
  const ends = [`project_id = ${pid}`];
  if (f?.after_datetime) {
    const after = p.add(microsToClickHouse(parseTimestampMicros(f.after_datetime)!), "DateTime64(6, 'UTC')");
    starts.push(`started_at > ${after}`);
    ends.push(`ended_at > ${after}`);
  }
  if (f?.before_datetime)
    starts.push(`started_at < ${p.add(microsToClickHouse(parseTimestampMicros(f.before_datetime)!), "DateTime64(6, 'UTC')")}`);

  const order = (req.sort_by ?? [{ field: 'last_updated', direction: 'desc' as const }]).map((s, i) => {
    if (!THREAD_SORT_FIELDS.includes(s.field)) {
      throw new ApiError(400, `sort_by[${i}].field: unsupported sort field '${s.field}' (supported: ${THREAD_SORT_FIELDS.join(', ')})`, {
        field: `sort_by[${i}].field`,
      });
    }
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  order.push('thread_id ASC');

  return { starts, ends, order };
}
