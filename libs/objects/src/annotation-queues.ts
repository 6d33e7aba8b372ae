import { createHash } from 'node:crypto';
import { QUEUE_ITEM_SORT_FIELDS, QUEUE_SORT_FIELDS, type AnnotationQueue, type AnnotationQueueItem, type RouteRequestOf } from '@weft/api';
import { badRequest, clickHouseToIso, generateId, microsToClickHouse, notFound } from '@weft/core';
import { CALLS_OF_USER_SQL, liveCallsForQueue, Params, type TableRows } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * Annotation queues (the reference's annotation_queue_* methods) over migration 120's tables.
 * Every change inserts a row's next version (a later updated_at) and every read takes FINAL,
 * so a write is visible to the next read and no mutation is needed.
 */

type SortEntry = { field: string; direction: 'asc' | 'desc' };
type Row = Record<string, unknown>;

const QUEUE_COLUMNS = 'id, project_id, name, description, scorer_refs, created_at, created_by, updated_at, deleted_at';

const iso = (v: unknown): string => clickHouseToIso(String(v));
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
const nowClickHouse = () => microsToClickHouse(Date.now() * 1000);

function toQueue(r: Row): AnnotationQueue {
  return {
    id: String(r.id),
    project_id: String(r.project_id),
    name: String(r.name),
    description: String(r.description),
    scorer_refs: r.scorer_refs as string[],
    created_at: iso(r.created_at),
    created_by: String(r.created_by),
    updated_at: iso(r.updated_at),
    deleted_at: isoOrNull(r.deleted_at),
  };
}

/** The stored row of a queue's new version (ClickHouse's timestamp text for the DateTime64 columns). */
function queueRow(q: AnnotationQueue) {
  const ch = (s: string) => s.replace('T', ' ').replace('Z', '');
  return { ...q, created_at: ch(q.created_at), updated_at: ch(q.updated_at), deleted_at: q.deleted_at === null ? null : ch(q.deleted_at) };
}

/** ORDER BY terms from sort_by (fields checked by the request schema), then id as the tie-breaker. */
function orderBy(sortBy: readonly SortEntry[] | null | undefined, allowed: readonly string[], fallback: string): string {
  if (!sortBy?.length) return fallback;
  const terms = sortBy.map((s) => {
    if (!allowed.includes(s.field)) throw badRequest(`sort_by: cannot sort on '${s.field}'`, 'sort_by');
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  return [...terms, 'id ASC'].join(', ');
}

function limitOffset(p: Params, limit: number | null | undefined, offset: number | null | undefined): string {
  const parts: string[] = [];
  if (limit) parts.push(`LIMIT ${p.int(limit)}`);
  if (offset) parts.push(`OFFSET ${p.int(offset)}`);
  return parts.join(' ');
}

async function rows(store: Store, query: string, p: Params, signal?: AbortSignal): Promise<Row[]> {
  return store.rows<Row>(query, p.values, { name: 'annotation-queues.rows', signal });
}

/** Whether the project has the queue, live (not deleted). */
export async function isLiveQueue(store: Store, projectId: string, queueId: string): Promise<boolean> {
  const p = new Params();
  const queue = await store.row(
    `SELECT 1 FROM annotation_queues FINAL
        WHERE project_id = ${p.str(projectId)} AND id = ${p.str(queueId)} AND deleted_at IS NULL LIMIT 1`,
    p.values,
    { name: 'feedback.checkAgainstStore' },
  );
  return queue !== undefined;
}

/** A data subject's queue items (a deletion job's step): those of their calls. */
export const USER_QUEUE_ITEM_ROWS: TableRows = {
  table: 'annotation_queue_items',
  where: `(project_id, call_id) IN (${CALLS_OF_USER_SQL})`,
};

/** A live (not deleted) queue, or 404. */
async function liveQueue(
  store: Store,
  projectId: string,
  queueId: string,
  missing = `Queue ${queueId} not found`,
): Promise<AnnotationQueue> {
  const p = new Params();
  const [row] = await rows(
    store,
    `SELECT ${QUEUE_COLUMNS} FROM annotation_queues FINAL
     WHERE project_id = ${p.str(projectId)} AND id = ${p.str(queueId)} AND deleted_at IS NULL LIMIT 1`,
    p,
  );
  if (!row) throw notFound(missing);
  return toQueue(row);
}

export async function createQueue(store: Store, req: RouteRequestOf<'annotationQueueCreate'>, userId: string): Promise<{ id: string }> {
  const now = iso(nowClickHouse());
  const queue: AnnotationQueue = {
    id: generateId(),
    project_id: req.project_id,
    name: req.name,
    description: req.description,
    scorer_refs: req.scorer_refs,
    created_at: now,
    created_by: userId,
    updated_at: now,
    deleted_at: null,
  };
  await store.insertRows('annotation_queues', [queueRow(queue)], { name: 'annotation-queues.createQueue' });
  return { id: queue.id };
}

export async function readQueue(store: Store, req: RouteRequestOf<'annotationQueueRead'>): Promise<{ queue: AnnotationQueue }> {
  return { queue: await liveQueue(store, req.project_id, req.queue_id) };
}

/** Only the members given change; none given: the queue as it is (as the reference). */
export async function updateQueue(store: Store, req: RouteRequestOf<'annotationQueueUpdate'>): Promise<{ queue: AnnotationQueue }> {
  const current = await liveQueue(store, req.project_id, req.queue_id);
  if (req.name == null && req.description == null && req.scorer_refs == null) return { queue: current };
  const queue: AnnotationQueue = {
    ...current,
    name: req.name ?? current.name,
    description: req.description ?? current.description,
    scorer_refs: req.scorer_refs ?? current.scorer_refs,
    updated_at: laterThan(current.updated_at),
  };
  await store.insertRows('annotation_queues', [queueRow(queue)], { name: 'annotation-queues.updateQueue' });
  return { queue };
}

export async function deleteQueue(store: Store, req: RouteRequestOf<'annotationQueueDelete'>): Promise<{ queue: AnnotationQueue }> {
  // The reference's words for a queue that is not there to delete.
  const current = await liveQueue(store, req.project_id, req.queue_id, `Queue ${req.queue_id} not found or already deleted`);
  const at = laterThan(current.updated_at);
  const queue: AnnotationQueue = { ...current, updated_at: at, deleted_at: at };
  await store.insertRows('annotation_queues', [queueRow(queue)], { name: 'annotation-queues.deleteQueue' });
  return { queue };
}

/** Now, or a millisecond after `previous` when the clock has not moved on (the version must grow). */
function laterThan(previous: string): string {
  const prev = Date.parse(previous);
  return new Date(Math.max(Date.now(), prev + 1)).toISOString().replace(/\.000Z$/, 'Z');
}

export async function queryQueues(
  store: Store,
  req: RouteRequestOf<'annotationQueuesQuery'>,
  signal: AbortSignal,
): Promise<AnnotationQueue[]> {
  const p = new Params();
  const where = [`project_id = ${p.str(req.project_id)}`, 'deleted_at IS NULL'];
  // A literal part of the name, any case (the reference's LIKE would read % and _ as wildcards).
  if (req.name) where.push(`positionCaseInsensitiveUTF8(name, ${p.str(req.name)}) > 0`);
  const order = orderBy(req.sort_by, QUEUE_SORT_FIELDS, 'created_at DESC, id ASC');
  const found = await rows(
    store,
    `SELECT ${QUEUE_COLUMNS} FROM annotation_queues FINAL WHERE ${where.join(' AND ')}
     ORDER BY ${order} ${limitOffset(p, req.limit, req.offset)}`,
    p,
    signal,
  );
  return found.map(toQueue);
}

/** An item's id: a UUID-shaped digest of (project, queue, call), the same for every insert of that call. */
export function queueItemId(projectId: string, queueId: string, callId: string): string {
  const h = createHash('sha256').update(`${projectId}\n${queueId}\n${callId}`).digest('hex');
  // Version 8 (RFC 9562: custom), RFC variant.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Adds the calls not yet in the queue, with what the items show of them (start, end, op, trace)
 * copied as they are now. Calls that do not exist (or were deleted) are neither added nor
 * duplicates, as in the reference.
 */
export async function addCalls(
  store: Store,
  req: RouteRequestOf<'annotationQueueAddCalls'>,
  userId: string,
): Promise<{ added_count: number; duplicates: number }> {
  await liveQueue(store, req.project_id, req.queue_id);
  const callIds = [...new Set(req.call_ids)];
  const p = new Params();
  const pid = p.str(req.project_id);
  const ids = p.strArray(callIds);
  const existing = await rows(
    store,
    `SELECT call_id FROM annotation_queue_items FINAL
     WHERE project_id = ${pid} AND queue_id = ${p.str(req.queue_id)} AND call_id IN ${ids} AND deleted_at IS NULL`,
    p,
  );
  const present = new Set(existing.map((r) => String(r.call_id)));
  const fresh = callIds.filter((id) => !present.has(id));
  if (fresh.length === 0) return { added_count: 0, duplicates: present.size };

  const calls = await liveCallsForQueue(store, req.project_id, fresh);
  const byId = new Map(calls.map((c) => [String(c.id), c]));
  // Items of one request keep its order: each a microsecond after the previous (created_at sorts them).
  const start = Date.now() * 1000;
  const values = fresh
    .filter((id) => byId.has(id))
    .map((id, i) => {
      const c = byId.get(id)!;
      const at = microsToClickHouse(start + i);
      return {
        project_id: req.project_id,
        queue_id: req.queue_id,
        call_id: id,
        id: queueItemId(req.project_id, req.queue_id, id),
        call_started_at: c.started_at,
        call_ended_at: c.ended_at ?? null,
        call_op_name: c.op_name ?? '',
        call_trace_id: c.trace_id ?? '',
        display_fields: req.display_fields,
        added_by: userId,
        created_at: at,
        created_by: userId,
        updated_at: at,
        deleted_at: null,
      };
    });
  if (values.length) await store.insertRows('annotation_queue_items', values, { name: 'annotation-queues.addCalls' });
  return { added_count: values.length, duplicates: present.size };
}

/**
 * A queue's items with each one's annotation state: the most recent state any annotator set
 * (and who set it), `unstarted` when nobody did. `position_in_queue` numbers the items in the
 * requested order after the item filters and before the state filter (as the reference).
 */
export async function queryItems(
  store: Store,
  req: RouteRequestOf<'annotationQueueItemsQuery'>,
  signal?: AbortSignal,
): Promise<{ items: AnnotationQueueItem[] }> {
  const p = new Params();
  const pid = p.str(req.project_id);
  const qid = p.str(req.queue_id);
  const where = [`project_id = ${pid}`, `queue_id = ${qid}`, 'deleted_at IS NULL'];
  const f = req.filter;
  for (const key of ['id', 'call_id', 'call_op_name', 'call_trace_id', 'added_by'] as const) {
    const v = f?.[key];
    if (v != null) where.push(`${key} = ${p.str(v)}`);
  }
  const order = orderBy(req.sort_by, QUEUE_ITEM_SORT_FIELDS, 'created_at ASC, id ASC');
  const states = f?.annotation_states;
  const stateFilter = states?.length ? `WHERE annotation_state IN ${p.strArray(states)}` : '';
  const sql = `SELECT * FROM (
      SELECT qi.*,
        ifNull(pr.state, 'unstarted') AS annotation_state,
        pr.annotator AS annotator_user_id,
        ${req.include_position ? `toInt64(row_number() OVER (ORDER BY ${order}))` : "CAST(NULL, 'Nullable(Int64)')"} AS position_in_queue
      FROM (SELECT * FROM annotation_queue_items FINAL WHERE ${where.join(' AND ')}) AS qi
      LEFT JOIN (
        SELECT queue_item_id, toString(argMax(annotation_state, updated_at)) AS state, argMax(annotator_id, updated_at) AS annotator
        FROM annotator_queue_items_progress FINAL
        WHERE project_id = ${pid} AND queue_id = ${qid} AND deleted_at IS NULL
        GROUP BY queue_item_id
      ) AS pr ON pr.queue_item_id = qi.id
    ) ${stateFilter}
    ORDER BY ${order} ${limitOffset(p, req.limit, req.offset)}
    SETTINGS join_use_nulls = 1`;
  const found = await rows(store, sql, p, signal);
  return { items: found.map(toItem) };
}

function toItem(r: Row): AnnotationQueueItem {
  return {
    id: String(r.id),
    project_id: String(r.project_id),
    queue_id: String(r.queue_id),
    call_id: String(r.call_id),
    call_started_at: iso(r.call_started_at),
    call_ended_at: isoOrNull(r.call_ended_at),
    call_op_name: String(r.call_op_name),
    call_trace_id: String(r.call_trace_id),
    display_fields: r.display_fields as string[],
    added_by: (r.added_by as string | null) ?? null,
    annotation_state: r.annotation_state as AnnotationQueueItem['annotation_state'],
    annotator_user_id: (r.annotator_user_id as string | null) ?? null,
    created_at: iso(r.created_at),
    created_by: String(r.created_by),
    updated_at: iso(r.updated_at),
    deleted_at: isoOrNull(r.deleted_at),
    position_in_queue: r.position_in_queue === null || r.position_in_queue === undefined ? null : Number(r.position_in_queue),
  };
}

/** Per queue asked for, in the order asked: its items, and those completed or skipped by at least one annotator. */
export async function queuesStats(
  store: Store,
  req: RouteRequestOf<'annotationQueuesStats'>,
  signal: AbortSignal,
): Promise<{ stats: { queue_id: string; total_items: number; completed_items: number }[] }> {
  if (req.queue_ids.length === 0) return { stats: [] };
  const p = new Params();
  const pid = p.str(req.project_id);
  const qids = p.strArray(req.queue_ids);
  const [totals, completed] = await Promise.all([
    rows(
      store,
      `SELECT queue_id, count() AS n FROM annotation_queue_items FINAL
       WHERE project_id = ${pid} AND queue_id IN ${qids} AND deleted_at IS NULL GROUP BY queue_id`,
      p,
      signal,
    ),
    rows(
      store,
      `SELECT queue_id, uniqExact(queue_item_id) AS n FROM annotator_queue_items_progress FINAL
       WHERE project_id = ${pid} AND queue_id IN ${qids} AND deleted_at IS NULL AND annotation_state IN ('completed', 'skipped')
       GROUP BY queue_id`,
      p,
      signal,
    ),
  ]);
  const count = (list: Row[]) => new Map(list.map((r) => [String(r.queue_id), Number(r.n)]));
  const t = count(totals);
  const c = count(completed);
  return { stats: req.queue_ids.map((id) => ({ queue_id: id, total_items: t.get(id) ?? 0, completed_items: c.get(id) ?? 0 })) };
}

/**
 * The caller's state of one item (the reference's transitions): none → any of in_progress,
 * completed, skipped; in_progress → completed or skipped; the same state again changes nothing;
 * anything else is a 400 naming annotation_state.
 */
export async function updateProgress(
  store: Store,
  req: RouteRequestOf<'annotatorProgressUpdate'>,
  annotatorId: string,
): Promise<{ item: AnnotationQueueItem }> {
  await liveQueue(store, req.project_id, req.queue_id);
  const item = async () => {
    const [found] = (
      await queryItems(store, {
        project_id: req.project_id,
        queue_id: req.queue_id,
        filter: { id: req.item_id },
        limit: 1,
        include_position: false,
      })
    ).items;
    if (!found) throw notFound(`Queue item '${req.item_id}' not found in queue '${req.queue_id}'`);
    return found;
  };
  const current = await item();
  const p = new Params();
  const [mine] = await rows(
    store,
    `SELECT id, toString(annotation_state) AS state, created_at, updated_at FROM annotator_queue_items_progress FINAL
     WHERE project_id = ${p.str(req.project_id)} AND queue_id = ${p.str(req.queue_id)}
       AND queue_item_id = ${p.str(req.item_id)} AND annotator_id = ${p.str(annotatorId)} AND deleted_at IS NULL`,
    p,
  );
  const state = mine ? String(mine.state) : null;
  if (state === req.annotation_state) return { item: current };
  if (req.annotation_state === 'in_progress' && state !== null)
    throw badRequest(
      `annotation_state: Cannot transition to 'in_progress' when a record already exists (the item is '${state}'): 'in_progress' can only be set on items not yet started`,
      'annotation_state',
    );
  if (state !== null && state !== 'in_progress' && state !== 'unstarted')
    throw badRequest(
      `annotation_state: Invalid state transition from '${state}' to '${req.annotation_state}'. Only transitions from 'in_progress' or 'unstarted' are allowed.`,
      'annotation_state',
    );
  const updatedAt = mine ? microsToClickHouse(Date.parse(laterThan(iso(mine.updated_at))) * 1000) : nowClickHouse();
  await store.insertRows(
    'annotator_queue_items_progress',
    [
      {
        project_id: req.project_id,
        queue_id: req.queue_id,
        queue_item_id: req.item_id,
        annotator_id: annotatorId,
        id: mine ? String(mine.id) : generateId(),
        annotation_state: req.annotation_state,
        created_at: mine ? String(mine.created_at) : updatedAt,
        updated_at: updatedAt,
        deleted_at: null,
      },
    ],
    { name: 'annotation-queues.updateProgress' },
  );
  return { item: await item() };
}
