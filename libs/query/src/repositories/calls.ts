import type { Store } from '@weft/store';
import { Params } from '../params';
import { expiredRowsSql, type RetentionCutoffs, type RetentionTable } from '../retention';

/**
 * The calls' statements other than the query compiler's (calls.ts and the plans beside it, the
 * calls' read model): lookups by id, the fragments other entities' statements join on, and what
 * retention and deletion jobs remove. The tables are calls_starts, calls_ends, calls_renames and
 * calls_deleted, filled from call_parts by materialized views (SCHEMA.md); the call parts' insert
 * is libs/store's (call-parts.ts).
 */

/**
 * Not a deleted call of the project. `identity(id)`: the engine otherwise analyses the primary
 * key against the deleted set (which a NOT IN can never use to skip a granule) before reading,
 * twice per page.
 */
export const notDeletedSql = (projectSql: string) => `identity(id) NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${projectSql})`;

/** One table's rows to remove and the condition that names them (`{target:String}`: a deletion job's target). */
export interface TableRows {
  table: string;
  where: string;
}

/** The given live calls' traces: every live call in them, with its parent (the descendants' walk of a delete). */
export async function liveCallsInTracesOf(
  store: Store,
  projectId: string,
  callIds: string[],
): Promise<{ id: string; parent_id: string | null }[]> {
  const p = new Params();
  const project = p.str(projectId);
  return store.rows<{ id: string; parent_id: string | null }>(
    `SELECT DISTINCT id, parent_id FROM calls_starts
        WHERE project_id = ${project} AND trace_id IN (
            SELECT trace_id FROM calls_starts WHERE project_id = ${project} AND id IN ${p.strArray(callIds)})
          AND ${notDeletedSql(project)}`,
    p.values,
    { name: 'call-mutations.withDescendants' },
  );
}

/** The traces of the given calls. */
export async function traceIdsOf(store: Store, projectId: string, callIds: string[], signal?: AbortSignal): Promise<string[]> {
  return (
    await store.rows<{ trace_id: string }>(
      `SELECT DISTINCT trace_id FROM calls_starts WHERE project_id = {p:String} AND id IN {ids:Array(String)} AND trace_id IS NOT NULL`,
      { p: projectId, ids: callIds },
      { name: 'usage.traceIdsOf', signal },
    )
  ).map((r) => r.trace_id);
}

/** A live call as an annotation queue item copies it: ids, op, start and end (null while running). */
export interface QueuedCallRow {
  id: string;
  started_at: string;
  ended_at: string | null;
  op_name: string | null;
  trace_id: string | null;
}

/** The given calls that exist and are not deleted, as queue items copy them. */
export async function liveCallsForQueue(store: Store, projectId: string, callIds: string[]): Promise<QueuedCallRow[]> {
  const q = new Params();
  const qpid = q.str(projectId);
  const qids = q.strArray(callIds);
  return store.rows<QueuedCallRow>(
    `SELECT s.id AS id, s.started_at AS started_at, e.ended_at AS ended_at, s.op_name AS op_name, s.trace_id AS trace_id
     FROM (SELECT id, started_at, op_name, trace_id FROM calls_starts FINAL WHERE project_id = ${qpid} AND id IN ${qids}) AS s
     LEFT JOIN (SELECT id, ended_at FROM calls_ends FINAL WHERE project_id = ${qpid} AND id IN ${qids}) AS e ON e.id = s.id
     WHERE s.id NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${qpid} AND id IN ${qids})
     SETTINGS join_use_nulls = 1`,
    q.values,
    { name: 'annotation-queues.rows' },
  );
}

/** The given calls that exist and are not deleted, with their inputs and output (null while running). */
export async function liveCallBodies(
  store: Store,
  projectId: string,
  callIds: string[],
): Promise<{ id: string; inputs_dump: string | null; output_dump: string | null }[]> {
  const p = new Params();
  const pid = p.str(projectId);
  const list = p.strArray(callIds);
  return store.rows<{ id: string; inputs_dump: string | null; output_dump: string | null }>(
    `SELECT s.id AS id, s.inputs_dump AS inputs_dump, e.output_dump AS output_dump
        FROM (SELECT id, inputs_dump FROM calls_starts FINAL WHERE project_id = ${pid} AND id IN ${list}) AS s
        LEFT JOIN (SELECT id, output_dump FROM calls_ends FINAL WHERE project_id = ${pid} AND id IN ${list}) AS e ON e.id = s.id
        WHERE s.id NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${pid} AND id IN ${list})
        SETTINGS join_use_nulls = 1`,
    p.values,
    { name: 'actions.call_bodies' },
  );
}

/** A call with its end (if any) and how many of its children whose op name contains `childOp` ended. */
export interface CallProgressRow {
  attributes_dump: string | null;
  ended: number | null;
  output_dump: string | null;
  exception: string | null;
  completed: string | number;
}

/** One call's attributes and end, and the count of its ended children whose op name contains `childOp` (a run's progress). */
export async function callProgress(store: Store, projectId: string, callId: string, childOp: string): Promise<CallProgressRow | undefined> {
  const p = new Params();
  const pid = p.str(projectId);
  const id = p.str(callId);
  return store.row<CallProgressRow>(
    `SELECT s.attributes_dump AS attributes_dump, e.ended AS ended, e.output_dump AS output_dump, e.exception AS exception,
          (SELECT count() FROM (SELECT c.id FROM calls_starts AS c FINAL
             WHERE c.project_id = ${pid} AND c.parent_id = ${id} AND position(ifNull(c.op_name, ''), ${p.str(childOp)}) > 0
               AND c.id IN (SELECT id FROM calls_ends WHERE project_id = ${pid}))) AS completed
        FROM (SELECT id, attributes_dump FROM calls_starts FINAL WHERE project_id = ${pid} AND id = ${id}) AS s
        LEFT JOIN (SELECT id, 1 AS ended, output_dump, exception FROM calls_ends FINAL WHERE project_id = ${pid} AND id = ${id}) AS e ON e.id = s.id
        SETTINGS join_use_nulls = 1`,
    p.values,
    { name: 'evaluations.status' },
  );
}

/** How many end rows a project has (a key range's count: cheap), e.g. to tell a small project from a large one. */
export async function endRowCount(store: Store, projectId: string): Promise<number> {
  const row = await store.row<{ n: string }>(
    'SELECT count() AS n FROM calls_ends WHERE project_id = {pid:String}',
    { pid: projectId },
    { name: 'calls.end_rows' },
  );
  return Number(row?.n ?? 0);
}

/** One call's start as a run's resume needs it, and whether it ended (a count of its end rows). */
export async function callStartAndEnded(
  store: Store,
  projectId: string,
  callId: string,
): Promise<
  | { trace_id: string; inputs_dump: string | null; attributes_dump: string | null; svc_user_id: string | null; ended: string | number }
  | undefined
> {
  const p = new Params();
  const pid = p.str(projectId);
  const id = p.str(callId);
  return store.row(
    `SELECT trace_id, inputs_dump, attributes_dump, svc_user_id,
          (SELECT count() FROM calls_ends WHERE project_id = ${pid} AND id = ${id}) AS ended
        FROM calls_starts FINAL WHERE project_id = ${pid} AND id = ${id} LIMIT 1`,
    p.values,
    { name: 'evaluations.root' },
  );
}

// Fragments: the calls' side of statements that read several entities at once (one statement, not one per entity).

/** Per project within `scope` (a condition on project_id): its calls and latest start (µs), as rows (project_id, calls, objects = 0, last). */
export const projectCallActivitySql = (scope: string) =>
  `SELECT project_id, uniqExact(id) AS calls, 0 AS objects, toUnixTimestamp64Micro(max(started_at)) AS last
    FROM calls_starts WHERE ${scope} GROUP BY project_id`;

/** Scalar subqueries: the stored bytes of a project's calls, start side and end side (storage_size_bytes' columns). */
export const callsStorageBytesSql = (pid: string) => ({
  starts: `SELECT sum(attributes_size_bytes + inputs_size_bytes) FROM calls_starts FINAL WHERE project_id = ${pid}`,
  ends: `SELECT sum(output_size_bytes + summary_size_bytes) FROM calls_ends FINAL WHERE project_id = ${pid}`,
});

/** The given calls that ended, each once: (id, started_at, summary_dump). */
export const endedCallSummariesSql = (pid: string, ids: string) =>
  `SELECT s.id AS id, s.started_at AS started_at, e.summary_dump AS summary_dump
      FROM (SELECT id, started_at FROM calls_starts WHERE project_id = ${pid} AND id IN ${ids} LIMIT 1 BY id) AS s
      INNER JOIN (SELECT id, summary_dump FROM calls_ends WHERE project_id = ${pid} AND id IN ${ids} LIMIT 1 BY id) AS e ON e.id = s.id`;

/** The ids of the project's calls whose end rows meet `endedCond` (e.g. ended since a time: the ended_at index reads only those granules). */
export const endedCallIdsSql = (pid: string, endedCond: string) => `SELECT id FROM calls_ends WHERE project_id = ${pid} AND ${endedCond}`;

/** The refs (`weave:///<project>/call/<id>`) of the calls whose start rows meet `where`: what feedback hangs on. */
export const callRefsSql = (where: string) => `SELECT concat('weave:///', project_id, '/call/', id) FROM calls_starts WHERE ${where}`;

/** The calls of a data subject (`{target:String}`, a svc_user_id), as (project_id, id) pairs. */
export const CALLS_OF_USER_SQL = 'SELECT project_id, id FROM calls_starts WHERE svc_user_id = {target:String}';

/** The condition on start rows naming a data subject's calls. */
export const CALLS_OF_USER_WHERE = 'svc_user_id = {target:String}';

/**
 * A data subject's call rows, in the order a deletion job removes them: calls_starts, which names
 * the calls, goes last, so a job cut short and run again still finds what the earlier steps were to delete.
 */
export const USER_CALL_ROWS: readonly TableRows[] = [
  { table: 'calls_ends', where: `(project_id, id) IN (${CALLS_OF_USER_SQL})` },
  { table: 'calls_renames', where: `(project_id, id) IN (${CALLS_OF_USER_SQL})` },
  { table: 'calls_deleted', where: `(project_id, id) IN (${CALLS_OF_USER_SQL})` },
  { table: 'calls_starts', where: CALLS_OF_USER_WHERE },
];

/**
 * The call tables retention removes from, in order, each judged by the time it has: a call by its
 * start, its end row by its end (a call that started before the cutoff and ended after it loses
 * its end row on a later pass: it is invisible meanwhile, reads start from calls_starts), renames
 * and deletion marks by when they were written.
 */
export const CALL_RETENTION: readonly RetentionTable[] = [
  { table: 'calls_starts', expired: (c, p) => expiredRowsSql(c, 'started_at', p) },
  { table: 'calls_ends', expired: (c, p) => expiredRowsSql(c, 'ended_at', p) },
  { table: 'calls_renames', expired: (c, p) => expiredRowsSql(c, 'renamed_at', p) },
  { table: 'calls_deleted', expired: (c, p) => expiredRowsSql(c, 'deleted_at', p) },
];

/** The refs of the calls past their project's cutoff (by start), or null when nothing can expire. */
export function expiredCallRefsSql(c: RetentionCutoffs, p: Params): string | null {
  const calls = expiredRowsSql(c, 'started_at', p);
  return calls ? callRefsSql(calls) : null;
}
