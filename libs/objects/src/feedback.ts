import { ApiError, badRequest, clickHouseToIso, generateId, nowMicros, microsToClickHouse } from '@weft/core';
import { RawJson, pythonJsonDumps, toJsonText } from '@weft/digest';
import {
  CALLS_OF_USER_WHERE,
  Params,
  callRefsSql,
  compileQuery,
  expiredCallRefsSql,
  expiredRowsSql,
  jsonFieldRef,
  sortTerms,
  splitFieldPath,
  type FieldRef,
  type FieldResolver,
  type RetentionTable,
  type TableRows,
} from '@weft/query';
import { deleteStatement, type Store } from '@weft/store';
import type { RequestOf } from '@weft/api';
import { isLiveQueue } from './annotation-queues';
import { checkAnnotationValue } from './annotation-spec';
import { normalizeReaction } from './reactions';
import { parseRef } from './refs';

/** The reference's CLICKHOUSE_MAX_FEEDBACK_PAYLOAD_SIZE, measured on `json.dumps(payload)`. */
export const MAX_FEEDBACK_PAYLOAD_CHARS = 1 << 20;
const NOTE_MAX_CHARS = 1024;

export interface FeedbackReplaceInput {
  project_id: string;
  svc_ref: string;
  feedback_type: string;
  payload: Record<string, unknown>;
  feedback_id: string;
  id?: string | null;
  creator?: string | null;
  annotation_ref?: string | null;
  runnable_ref?: string | null;
  call_ref?: string | null;
  trigger_ref?: string | null;
  /** The annotation queue the feedback was given in (a live queue of the project). */
  queue_id?: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A checked feedback payload as stored: a reaction's with its emoji names added (reactions.ts). */
export interface StoredPayload {
  payload: Record<string, unknown>;
  payloadJson: string;
}

/**
 * The reference's validate_feedback_create_req, for what we can check without its schemas,
 * then its payload processing: a reaction's names added, the size measured on the result.
 */
export function validateFeedback(req: FeedbackReplaceInput): StoredPayload {
  checkFeedback(req);
  const payload = req.feedback_type === 'wandb.reaction.1' ? normalizeReaction(req.payload) : req.payload;
  const payloadJson = pythonJsonDumps(payload, { sortKeys: false, nonFinite: 'storage' });
  if (payloadJson.length > MAX_FEEDBACK_PAYLOAD_CHARS) {
    throw badRequest(
      `payload: Feedback payload too large (${payloadJson.length} characters of JSON; the limit is ${MAX_FEEDBACK_PAYLOAD_CHARS})`,
      'payload',
    );
  }
  return { payload, payloadJson };
}

function checkFeedback(req: FeedbackReplaceInput): void {
  if (req.id && !UUID.test(req.id)) throw badRequest('id: must be a UUID (a time-ordered UUIDv7 is expected)', 'id');
  const ref = parseRef(req.svc_ref);
  if (!ref) throw badRequest(`svc_ref: not a valid ref: '${req.svc_ref}'`, 'svc_ref');
  if (ref.projectId !== req.project_id)
    throw badRequest(`svc_ref: ref project '${ref.projectId}' does not match project_id '${req.project_id}'`, 'svc_ref');
  for (const f of ['annotation_ref', 'runnable_ref', 'call_ref', 'trigger_ref'] as const) {
    const v = req[f];
    if (v && !parseRef(v)) throw badRequest(`${f}: not a valid ref: '${v}'`, f);
  }

  const type = req.feedback_type;
  if (type.startsWith('wandb.annotation.')) {
    refNamed(req, 'annotation_ref', type.slice('wandb.annotation.'.length), ['object']);
    if (!('value' in req.payload)) throw badRequest('payload: annotation feedback needs a `value`', 'payload.value');
    forbid(req, ['runnable_ref', 'call_ref', 'trigger_ref'], type);
  } else if (type.startsWith('wandb.runnable.')) {
    const runnable = refNamed(req, 'runnable_ref', type.slice('wandb.runnable.'.length), ['object', 'op']);
    if (runnable === 'op' && !req.call_ref) throw badRequest('call_ref: required when runnable_ref is an op ref', 'call_ref');
    if (!('output' in req.payload)) throw badRequest('payload: runnable feedback needs an `output`', 'payload.output');
    forbid(req, ['annotation_ref'], type);
  } else {
    forbid(req, ['annotation_ref', 'runnable_ref', 'call_ref', 'trigger_ref'], type);
    if (type === 'wandb.reaction.1') {
      const emoji = req.payload.emoji;
      if (
        typeof emoji !== 'string' ||
        !/^\p{Extended_Pictographic}(\p{Emoji_Modifier}|\uFE0F|\u200D\p{Extended_Pictographic})*$/u.test(emoji)
      ) {
        throw badRequest('payload.emoji: a reaction is exactly one emoji', 'payload.emoji');
      }
    } else if (type === 'wandb.note.1') {
      const note = req.payload.note;
      if (typeof note !== 'string' || note.length < 1 || note.length > NOTE_MAX_CHARS) {
        throw badRequest(`payload.note: a note is a string of 1 to ${NOTE_MAX_CHARS} characters`, 'payload.note');
      }
    }
  }
}

function forbid(req: FeedbackReplaceInput, fields: (keyof FeedbackReplaceInput)[], type: string): void {
  for (const f of fields) if (req[f]) throw badRequest(`${String(f)}: not allowed for feedback_type '${type}'`, String(f));
}

function refNamed(req: FeedbackReplaceInput, field: 'annotation_ref' | 'runnable_ref', name: string, kinds: string[]): string {
  const value = req[field];
  if (!value) throw badRequest(`${field}: required for feedback_type '${req.feedback_type}'`, field);
  const ref = parseRef(value);
  if (!ref || !kinds.includes(ref.kind) || !('name' in ref)) throw badRequest(`${field}: must be an ${kinds.join(' or ')} ref`, field);
  if (ref.name !== name) throw badRequest(`${field}: ref name '${ref.name}' must equal '${name}' from feedback_type`, field);
  return ref.kind;
}

/**
 * What the reference checks by reading the store: an annotation's value against its
 * AnnotationSpec's schema, and that a named queue is a live queue of the project.
 */
async function checkAgainstStore(store: Store, req: FeedbackCreateInput): Promise<void> {
  if (req.annotation_ref && req.feedback_type.startsWith('wandb.annotation.'))
    await checkAnnotationValue(store, req.project_id, req.annotation_ref, req.payload);
  if (req.queue_id) {
    if (!(await isLiveQueue(store, req.project_id, req.queue_id)))
      throw badRequest(`queue_id: Queue ${req.queue_id} not found or has been deleted`, 'queue_id');
  }
}

/** /feedback/create's request: /feedback/replace's without `feedback_id`. */
export type FeedbackCreateInput = Omit<FeedbackReplaceInput, 'feedback_id'>;

/** A validated feedback record, ready to insert, and the answer the reference gives for it. */
function feedbackRecord(req: FeedbackCreateInput, stored: StoredPayload, userId: string, createdMicros: number) {
  const id = req.id || generateId();
  const row = {
    project_id: req.project_id,
    svc_ref: req.svc_ref,
    svc_user_id: userId,
    id,
    feedback_type: req.feedback_type,
    payload_dump: stored.payloadJson,
    creator: req.creator ?? null,
    annotation_ref: req.annotation_ref ?? null,
    runnable_ref: req.runnable_ref ?? null,
    call_ref: req.call_ref ?? null,
    trigger_ref: req.trigger_ref ?? null,
    queue_id: req.queue_id ?? null,
    created_at: microsToClickHouse(createdMicros),
  };
  // Both spellings of the user id: the interface's and the one the reference's SDK reads.
  const answer = {
    id,
    created_at: clickHouseToIso(row.created_at),
    svc_user_id: userId,
    wb_user_id: userId,
    payload: new RawJson(toJsonText(stored.payload)),
  };
  return { row, answer };
}

const nowMillisAsMicros = () => Math.floor(nowMicros() / 1000) * 1000;

/**
 * /feedback/create and /feedback/batch/create (reference §7.1, §7.5): every record is checked
 * before any is written, then all are written in one insert (all or nothing). `id` is kept
 * when given (the SDK makes ids client-side), else a fresh UUIDv7.
 */
export async function createFeedback(store: Store, reqs: FeedbackCreateInput[], userId: string) {
  const at = nowMillisAsMicros();
  const records = reqs.map((req) => feedbackRecord(req, validateFeedback({ ...req, feedback_id: '' }), userId, at));
  for (const req of reqs) await checkAgainstStore(store, req);
  if (records.length > 0)
    await store.insertRows(
      'feedback',
      records.map((r) => r.row),
      { name: 'feedback.createFeedback' },
    );
  return records.map((r) => r.answer);
}

/**
 * /feedback/replace (reference §7.2): validate first (a rejected replacement leaves the old
 * record), delete the record whose id is `feedback_id`, then create the new one under `id` or a
 * fresh UUIDv7. `svc_user_id` is always the caller's.
 */
export async function replaceFeedback(store: Store, req: FeedbackReplaceInput, userId: string) {
  const stored = validateFeedback(req);
  await checkAgainstStore(store, req);
  const p = new Params();
  const where = `project_id = ${p.str(req.project_id)} AND id = ${p.str(req.feedback_id)}`;
  await deleteFeedbackWhere(store, where, p);
  const { row, answer } = feedbackRecord(req, stored, userId, nowMillisAsMicros());
  await store.insertRows('feedback', [row], { name: 'feedback.replaceFeedback' });
  return answer;
}

/** Deletes the feedback rows `where` selects. A DELETE is a mutation (costly): only issued when a row matches. */
async function deleteFeedbackWhere(store: Store, where: string, p: Params): Promise<void> {
  const [{ n } = { n: 0 }] = await store.rows<{ n: number }>(`SELECT count() AS n FROM feedback WHERE ${where}`, p.values, {
    name: 'feedback.deleteFeedbackWhere',
  });
  if (Number(n) > 0)
    await store.command(deleteStatement('feedback', where, store.cluster), p.values, { name: 'feedback.deleteFeedbackWhere' });
}

/**
 * /feedback/purge (reference §7.4): a hard delete, by id only: the query must be
 * `{$eq: [{$getField: "id"}, {$literal: "<id>"}]}` or an `$or` of such.
 */
export async function purgeFeedback(store: Store, projectId: string, expr: Record<string, unknown>): Promise<Record<string, never>> {
  const refuse = () => badRequest('query: Can only purge feedback by specifying one or more feedback ids', 'query');
  const idOf = (e: unknown): string => {
    const eq = (e as { $eq?: unknown } | null)?.$eq;
    if (!Array.isArray(eq) || eq.length !== 2 || Object.keys(e as object).length !== 1) throw refuse();
    const [field, literal] = eq as [{ $getField?: unknown }, { $literal?: unknown }];
    if (field?.$getField !== 'id' || typeof literal?.$literal !== 'string') throw refuse();
    return literal.$literal;
  };
  const keys = Object.keys(expr);
  if (keys.length !== 1) throw refuse();
  const ids = Array.isArray(expr.$or) ? expr.$or.map(idOf) : [idOf(expr)];
  if (ids.length === 0) return {};
  const p = new Params();
  const where = `project_id = ${p.str(projectId)} AND id IN ${p.strArray(ids)}`;
  await deleteFeedbackWhere(store, where, p);
  return {};
}

/** Feedback columns and their kinds; `payload` is the JSON root. */
const FEEDBACK_COLUMNS: Record<string, FieldRef['kind']> = {
  id: 'string',
  project_id: 'string',
  svc_ref: 'string',
  svc_user_id: 'string',
  creator: 'string',
  created_at: 'datetime',
  feedback_type: 'string',
  annotation_ref: 'string',
  runnable_ref: 'string',
  call_ref: 'string',
  trigger_ref: 'string',
  queue_id: 'string',
};
export const FEEDBACK_FIELDS = [...Object.keys(FEEDBACK_COLUMNS), 'payload'];
/** The reference's names of our svc_ columns: accepted in fields, query and sort, and sent alongside in answers. */
const REFERENCE_FEEDBACK_NAMES: Record<string, string> = { weave_ref: 'svc_ref', wb_user_id: 'svc_user_id' };

/** A feedback row with the reference's spellings added next to ours (the Weave SDK reads `weave_ref`, `wb_user_id`). */
export function withReferenceFeedbackNames(row: Record<string, unknown>): Record<string, unknown> {
  for (const [ref, ours] of Object.entries(REFERENCE_FEEDBACK_NAMES)) if (ours in row && !(ref in row)) row[ref] = row[ours];
  return row;
}

/**
 * A feedback row in the reference's spellings only: the 0.52 SDK validates rows against a
 * `Feedback` model that forbids other members, so `svc_ref` beside `weave_ref` fails it.
 */
function inReferenceFeedbackNames(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const theirs = new Map(Object.entries(REFERENCE_FEEDBACK_NAMES).map(([ref, ours]) => [ours, ref]));
  for (const [k, v] of Object.entries(row)) out[theirs.get(k) ?? k] = v;
  return out;
}

/**
 * The spelling of the rows /feedback/query answers with when the caller names no `fields`:
 * the interface's (with the reference's names alongside) or the reference's alone.
 */
export type FeedbackNames = 'interface' | 'reference';

/** Fields of feedback for the query language, `fields` and `sort_by`: columns and `payload.<path>`. */
export class FeedbackFieldResolver implements FieldResolver {
  resolve(path: string, p: Params): FieldRef {
    const column = REFERENCE_FEEDBACK_NAMES[path] ?? path;
    const kind = FEEDBACK_COLUMNS[column];
    if (kind) return { sql: column, kind };
    if (path === 'payload') return { sql: 'payload_dump', kind: 'json' };
    const [root, ...rest] = splitFieldPath(path);
    if (root === 'payload' && rest.length > 0) {
      if (rest.some((k) => k === '')) throw new ApiError(400, `Unknown field: ${path} (empty path segment)`, { field: path });
      return jsonFieldRef('payload_dump', rest, p);
    }
    throw new ApiError(400, `Unknown field: ${path}`, { field: path });
  }
}

/** The /feedback/query request, as the contract (libs/api) defines it. */
export type FeedbackQueryInput = RequestOf<'feedbackQuery'>;

/** /feedback/query: rows as objects with the requested fields (`payload` parsed, `payload.x` as text). */
export async function queryFeedback(
  store: Store,
  req: FeedbackQueryInput,
  names: FeedbackNames = 'interface',
): Promise<Record<string, unknown>[]> {
  const p = new Params();
  const resolver = new FeedbackFieldResolver();
  const conds = [`project_id = ${p.str(req.project_id)}`];
  if (req.query) conds.push(compileQuery(req.query.$expr, resolver, p));

  const fields = req.fields && req.fields.length > 0 ? req.fields : FEEDBACK_FIELDS;
  if (fields.length === 1 && fields[0] === 'count(*)') {
    const [r] = await store.rows<{ n: number }>(`SELECT count() AS n FROM feedback WHERE ${conds.join(' AND ')}`, p.values, {
      name: 'feedback.queryFeedback',
    });
    return [{ 'count(*)': Number(r?.n ?? 0) }];
  }
  const selects = fields.map((f, i) => {
    let ref: FieldRef;
    try {
      ref = resolver.resolve(f, p);
    } catch (e) {
      throw new ApiError(400, `fields[${i}]: ${(e as Error).message}`, { field: `fields[${i}]` });
    }
    return `${ref.sql} AS c${i}`;
  });
  const order: string[] = [];
  (req.sort_by ?? []).forEach((s, i) => {
    let ref: FieldRef;
    try {
      ref = resolver.resolve(s.field, p);
    } catch (e) {
      throw new ApiError(400, `sort_by[${i}].field: ${(e as Error).message}`, { field: `sort_by[${i}].field` });
    }
    order.push(...sortTerms(ref, s.direction));
  });
  if (order.length === 0) order.push('created_at ASC', 'id ASC');
  let sql = `SELECT ${selects.join(', ')} FROM feedback WHERE ${conds.join(' AND ')} ORDER BY ${order.join(', ')}`;
  if (req.limit !== undefined && req.limit > 0) sql += ` LIMIT ${p.int(req.limit)}`;
  if (req.offset !== undefined && req.offset > 0) sql += `${req.limit ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  const rows = await store.rows<Record<string, unknown>>(sql, p.values, { name: 'feedback.queryFeedback' });
  return rows.map((r) => {
    const out: Record<string, unknown> = {};
    fields.forEach((f, i) => {
      const v = r[`c${i}`] ?? null;
      if (f === 'payload') out.payload = new RawJson(typeof v === 'string' && v ? v : '{}');
      else if (f === 'created_at' && typeof v === 'string') out.created_at = clickHouseToIso(v);
      else out[f] = v;
    });
    if (req.fields && req.fields.length > 0) return out;
    return names === 'reference' ? inReferenceFeedbackNames(out) : withReferenceFeedbackNames(out);
  });
}

/** Every feedback row attached to the given refs (for `include_feedback` on calls). */
export async function feedbackForRefs(store: Store, projectId: string, refs: string[]): Promise<Map<string, Record<string, unknown>[]>> {
  const out = new Map<string, Record<string, unknown>[]>();
  if (refs.length === 0) return out;
  const p = new Params();
  const cols = [
    'id',
    'feedback_type',
    'svc_ref',
    'creator',
    'created_at',
    'svc_user_id',
    'runnable_ref',
    'call_ref',
    'trigger_ref',
    'annotation_ref',
  ];
  for (const r of await store.rows<Record<string, string | null>>(
    `SELECT ${cols.join(', ')}, payload_dump FROM feedback
      WHERE project_id = ${p.str(projectId)} AND svc_ref IN ${p.strArray(refs)} ORDER BY created_at, id`,
    p.values,
    { name: 'feedback.feedbackForRefs' },
  )) {
    const row: Record<string, unknown> = {};
    for (const c of cols) row[c] = c === 'created_at' && r[c] ? clickHouseToIso(r[c]!) : r[c];
    row.payload = JSON.parse(r.payload_dump || '{}');
    withReferenceFeedbackNames(row);
    const list = out.get(r.svc_ref!) ?? [];
    list.push(row);
    out.set(r.svc_ref!, list);
  }
  return out;
}

/** A data subject's feedback (a deletion job's step): the feedback on their calls. */
export const USER_FEEDBACK_ROWS: TableRows = { table: 'feedback', where: `svc_ref IN (${callRefsSql(CALLS_OF_USER_WHERE)})` };

/**
 * Feedback as retention removes it, before the calls (CALL_RETENTION): what hangs on an expired
 * call goes with it (found through its start row, so before those rows go), and any feedback
 * written before the cutoff.
 */
export const FEEDBACK_RETENTION: RetentionTable = {
  table: 'feedback',
  expired: (c, p) => {
    const written = expiredRowsSql(c, 'created_at', p);
    const calls = expiredCallRefsSql(c, p);
    return written && calls ? `(${written}) OR svc_ref IN (${calls})` : null;
  },
};

/** The refs that have feedback of the project (`pid`, a parameter) whose trigger ref starts with `triggerPrefix` (a parameter): a monitor's scored calls. */
export const refsWithTriggeredFeedbackSql = (pid: string, triggerPrefix: string) =>
  `SELECT svc_ref FROM feedback WHERE project_id = ${pid} AND startsWith(ifNull(trigger_ref, ''), ${triggerPrefix})`;

/**
 * A Monitor's scores as an alert's window (services/query alerts): the feedback its worker wrote
 * (trigger_ref a version of the monitor, runnable_ref a version of the scorer when one is named),
 * each with its value at `path` under the payload (`{output: …}`) as `num` (numbers, booleans as
 * 1/0) and `text`, only those that have one, newest first: the `last` of them, or those written
 * since `sinceMs`. Versions are matched by name, so an edited monitor or scorer keeps its alert.
 */
export function monitorScoresWindowSql(q: {
  project_id: string;
  /** `weave:///<project>/object/<monitor>:` — every version of the monitor. */
  monitorRefPrefix: string;
  scorerRefPrefix?: string;
  path: string[];
  sinceMs?: number;
  last?: number;
}): { sql: string; p: Params } {
  const p = new Params();
  const conds = [
    `project_id = ${p.str(q.project_id)}`,
    `startsWith(ifNull(trigger_ref, ''), ${p.str(q.monitorRefPrefix)})`,
    ...(q.scorerRefPrefix ? [`startsWith(ifNull(runnable_ref, ''), ${p.str(q.scorerRefPrefix)})`] : []),
    ...(q.sinceMs !== undefined ? [`created_at >= fromUnixTimestamp64Milli(${p.add(Math.floor(q.sinceMs), 'Int64')}, 'UTC')`] : []),
  ];
  const value = scoreValueSql(q.path, p, { num: 'num', text: 'text' });
  const rows = `SELECT id, created_at, ${value.text} AS text, ${value.num} AS num
    FROM feedback FINAL WHERE ${conds.join(' AND ')}`;
  const sql = `SELECT id, num, text FROM (${rows}) WHERE text IS NOT NULL ORDER BY created_at DESC, id DESC${
    q.last !== undefined ? ` LIMIT ${p.int(q.last)}` : ''
  }`;
  return { sql, p };
}

/**
 * Many monitors' score windows' rows in one scan (the alert worker's batched pass,
 * alert-windows.ts): the project's feedback written by any of the monitors (versions matched by
 * name), once, with `at` (written, µs), `trigger_ref`, `runnable_ref`, and the value at each of
 * `paths` as `nums[i]`/`texts[i]` (1-based; the same values as monitorScoresWindowSql's num and
 * text). `member(monitor, scorer?)` is the SQL condition on a row that one monitor (and scorer)
 * wrote it.
 */
export function monitorScoresRowsSql(q: {
  project_id: string;
  monitorRefPrefixes: string[];
  paths: string[][];
  /** Only scores written at or after this time: when every window has a duration. */
  sinceMs?: number;
}): { sql: string; p: Params; member: (monitorRefPrefix: string, scorerRefPrefix?: string) => string } {
  const p = new Params();
  const conds = [
    `project_id = ${p.str(q.project_id)}`,
    `(${q.monitorRefPrefixes.map((m) => `startsWith(ifNull(trigger_ref, ''), ${p.str(m)})`).join(' OR ')})`,
    ...(q.sinceMs !== undefined ? [`created_at >= fromUnixTimestamp64Milli(${p.add(Math.floor(q.sinceMs), 'Int64')}, 'UTC')`] : []),
  ];
  const values = q.paths.map((path, i) => scoreValueSql(path, p, { num: `num_${i}`, text: `text_${i}` }));
  const each = values.map((v, i) => `${v.text} AS text_${i}, ${v.num} AS num_${i}`).join(', ');
  const rows = `SELECT id, toUnixTimestamp64Micro(created_at) AS at, ifNull(trigger_ref, '') AS trigger_ref,
      ifNull(runnable_ref, '') AS runnable_ref, ${each}
    FROM feedback FINAL WHERE ${conds.join(' AND ')}`;
  const sql = `SELECT id, at, trigger_ref, runnable_ref, [${values.map((_, i) => `num_${i}`).join(', ')}] AS nums, [${values
    .map((_, i) => `text_${i}`)
    .join(', ')}] AS texts FROM (${rows})`;
  const member = (monitor: string, scorer?: string) =>
    `(startsWith(trigger_ref, ${p.str(monitor)})${scorer ? ` AND startsWith(runnable_ref, ${p.str(scorer)})` : ''})`;
  return { sql, p, member };
}

/** A score's value at `path` under the payload, as (num, text); each expression names the other by its alias. */
function scoreValueSql(path: string[], p: Params, names: { num: string; text: string }): { num: string; text: string } {
  const raw = `JSONExtractRaw(payload_dump, ${path.map((k) => (/^\d+$/.test(k) && k.length < 10 ? p.add(Number(k) + 1, 'Int64') : p.str(k))).join(', ')})`;
  return {
    text: `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), toNullable(JSONExtractString(${raw})), toNullable(${raw}))`,
    num: `multiIf(${raw} = 'true', toNullable(1.), ${raw} = 'false', toNullable(0.), toFloat64OrNull(${names.text}))`,
  };
}

/** At most this many feedback rows feed one /feedback/stats, /feedback/aggregate or payload-schema answer. */
export const FEEDBACK_WINDOW_ROWS = 100_000;

export interface FeedbackWindowRow {
  feedback_type: string;
  payload_dump: string;
  runnable_ref: string | null;
  trigger_ref: string | null;
  svc_ref: string;
  created_at: string;
}

/**
 * A project's feedback created in [start, end) (epoch milliseconds), newest first, optionally of
 * some types and one trigger (a monitor): what Weave 0.54's feedback analytics read.
 */
export async function feedbackInWindow(
  store: Store,
  q: { projectId: string; startMs: number; endMs: number; types?: string[]; triggerRef?: string | null; limit?: number },
  signal?: AbortSignal,
): Promise<FeedbackWindowRow[]> {
  const p = new Params();
  const conds = [
    `project_id = ${p.str(q.projectId)}`,
    `created_at >= fromUnixTimestamp64Milli(${p.add(Math.floor(q.startMs), 'Int64')})`,
    `created_at < fromUnixTimestamp64Milli(${p.add(Math.ceil(q.endMs), 'Int64')})`,
  ];
  if (q.types?.length) conds.push(`feedback_type IN ${p.strArray(q.types)}`);
  if (q.triggerRef) conds.push(`trigger_ref = ${p.str(q.triggerRef)}`);
  return store.rows<FeedbackWindowRow>(
    `SELECT feedback_type, payload_dump, runnable_ref, trigger_ref, svc_ref, created_at FROM feedback FINAL
      WHERE ${conds.join(' AND ')} ORDER BY created_at DESC LIMIT ${p.int(q.limit ?? FEEDBACK_WINDOW_ROWS)}`,
    p.values,
    { name: 'feedback.inWindow', signal },
  );
}
