import type { CallEndBody, CallStartBody, RequestOf, ResponseOf } from '@weft/api';
import { ApiError, generateId, type Caller } from '@weft/core';
// The checks alone, not @weft/http's index: a worker thread need not load the HTTP server.
import { checkRouteJsonBody } from '@weft/http/route-body';
import type { RequestLimits } from '@weft/http';
import {
  CallPartRowBinaryEncoder,
  endPart,
  isEndPart,
  isStartPart,
  isWholeCallPart,
  startPart,
  wholeCallPart,
  type CallPartRow,
} from '@weft/store';
import { callPartKey } from './envelope';
import { redactCallParts } from './redaction';

/**
 * A call start's part, with the ids the reference would decide: missing id and trace_id become
 * fresh UUIDv7s. Values over `maxValueBytes` (WEFT_MAX_VALUE_BYTES) are stored truncated (startPart).
 */
export function callStartPart(
  start: CallStartBody,
  caller: Caller,
  acceptedAt: number,
  maxValueBytes = 0,
): { row: CallPartRow; id: string; trace_id: string } {
  const id = start.id || generateId();
  const trace_id = start.trace_id || generateId();
  return { row: startPart({ ...start, id, trace_id }, caller.userId, acceptedAt, maxValueBytes), id, trace_id };
}

export const callEndPart = (end: CallEndBody, acceptedAt: number, maxValueBytes = 0): CallPartRow =>
  endPart(end, acceptedAt, maxValueBytes);

/** The trace ids ends named (by callPartKey): ingest sampling decides an end that came apart from its start by it. */
export type EndTraceIds = Map<string, string>;

/** An upsert batch's parts, in its order, its response (each start's ids, `{}` per end) and the trace ids its ends named. */
export function upsertBatchParts(
  batch: RequestOf<'callUpsertBatch'>['batch'],
  caller: Caller,
  acceptedAt: number,
  maxValueBytes = 0,
): { rows: CallPartRow[]; res: ResponseOf<'callUpsertBatch'>['res']; endTraceIds: EndTraceIds } {
  const rows: CallPartRow[] = [];
  const res: ResponseOf<'callUpsertBatch'>['res'] = [];
  const endTraceIds: EndTraceIds = new Map();
  for (const item of batch) {
    if (item.mode === 'start') {
      const { row, id, trace_id } = callStartPart(item.req.start, caller, acceptedAt, maxValueBytes);
      rows.push(row);
      res.push({ id, trace_id });
    } else {
      const row = callEndPart(item.req.end, acceptedAt, maxValueBytes);
      if (item.req.end.trace_id) endTraceIds.set(callPartKey(row), item.req.end.trace_id);
      rows.push(row);
      res.push({});
    }
  }
  return { rows, res, endTraceIds };
}

/**
 * One publish's parts encoded for the bus: a call's start and end folded into one part
 * (coalesceCallParts), the parts' RowBinary rows one after another in `bytes`, part i ending at
 * `ends[i]` and keyed by `keys[i]` (encodedCallPartMessages makes the messages). Bytes and plain
 * values: what a worker thread hands back cheaply.
 */
export interface EncodedCallPartRows {
  bytes: Uint8Array;
  ends: number[];
  keys: string[];
  /** Call halves acknowledged: a whole-call part counts two, whether it came as one or two. */
  acknowledged: number;
  /** Per part: the call halves it holds (start, end; a rename none), whether its call's start is one of them... */
  halves: number[];
  starts: boolean[];
  /** ...and its trace id (a start's own; an end's as the request named it, else null): what ingest sampling decides by. */
  traceIds: (string | null)[];
}

/** `encoder`: its owner's (a publisher's, a thread's conversions); absent, one for this call. */
export function encodeCallPartRows(
  rows: readonly CallPartRow[],
  endTraceIds?: EndTraceIds,
  encoder = new CallPartRowBinaryEncoder(2048),
): EncodedCallPartRows {
  const parts = coalesceCallParts(rows);
  const ends: number[] = [];
  const bytes = encoder.encode(parts, undefined, ends);
  const keys = parts.map(callPartKey);
  return {
    bytes,
    ends,
    keys,
    acknowledged: acknowledgedHalves(rows),
    halves: parts.map(partHalves),
    starts: parts.map((p) => p.started_at != null),
    traceIds: parts.map((p, i) => (p.started_at != null ? (p.trace_id ?? null) : (endTraceIds?.get(keys[i]!) ?? null))),
  };
}

/** The call halves a part holds: its start, its end (a rename or a deletion mark: none). */
export const partHalves = (r: CallPartRow): number => (r.started_at != null ? 1 : 0) + (r.ended_at != null ? 1 : 0);

/** The call halves parts acknowledge: a start and an end count as two, whether or not they travel as one part. */
export function acknowledgedHalves(rows: readonly CallPartRow[]): number {
  let halves = 0;
  for (const r of rows) halves += isWholeCallPart(r) ? 2 : 1;
  return halves;
}

/**
 * The parts of one publish with every end folded into its call's start when both are in it (the
 * reference SDK batches a quick call's start and end together): one part per finished call, half
 * the rows for the bus and the engine. Nothing visible changes: for each call, the starts keep
 * their order and so do the ends (an end joins the latest start before it, with no end of that
 * call in between), and the tables the views feed get the same rows. Renames, deletes and whole
 * calls pass through, and so does an end with no start of its call waiting (none in the batch, its
 * end already folded in, or a whole part of that call since).
 */
export function coalesceCallParts(rows: readonly CallPartRow[]): CallPartRow[] {
  const out: CallPartRow[] = [];
  // Where in `out` the latest start of each call id still waits for its end. Keyed by the id
  // alone (no key string to build per part); a fold checks the project, so the same id in two
  // projects is never folded across them (at worst a part of theirs is left unfolded).
  const waiting = new Map<string, number>();
  for (const row of rows) {
    if (isStartPart(row)) {
      waiting.set(row.id, out.length);
    } else if (isEndPart(row)) {
      const at = waiting.get(row.id);
      if (at !== undefined && out[at]!.project_id === row.project_id) {
        out[at] = wholeCallPart(out[at]!, row);
        waiting.delete(row.id);
        continue;
      }
    } else if (isWholeCallPart(row)) {
      // A later end of the same call must stay after this one's.
      waiting.delete(row.id);
    }
    out.push(row);
  }
  return out;
}

/** One /call/upsert_batch body, as an ingest worker takes it. */
export interface CallBatchTask {
  /** The body's bytes as sent; null when the request had none to parse. */
  body: Uint8Array | null;
  caller: Caller;
  /** When the request was accepted (epoch µs): every part's created_at. */
  acceptedAtMicros: number;
  limits: RequestLimits;
  /** The projects whose values are redacted (their ingest policy), as the serving thread read them. */
  redact?: string[];
}

/** The batch's parts encoded for the bus, and the route's response. */
export interface EncodedCallBatch extends EncodedCallPartRows {
  ok: true;
  res: ResponseOf<'callUpsertBatch'>['res'];
}

/** A body the edge's checks refused: the ApiError they threw, as plain values (it crosses threads). */
export interface CallBatchRefused {
  ok: false;
  status: number;
  reason: string;
  field?: string;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * What addRoute and the upsert batch's handler do on the serving thread before the publish, in
 * one pure function for an ingest worker: parse and check the body as the edge does
 * (checkRouteJsonBody), make its parts and response (upsertBatchParts), encode the parts
 * (encodeCallPartRows). The same bytes, keys and response as the serving thread's path.
 */
export function encodeCallBatch(task: CallBatchTask, encoder?: CallPartRowBinaryEncoder): EncodedCallBatch | CallBatchRefused {
  let body;
  try {
    body = checkRouteJsonBody('callUpsertBatch', task.body, task.caller, task.limits);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { ok: false, status: e.status, reason: e.reason, field: e.field, extra: e.extra, headers: e.headers };
  }
  const { rows, res, endTraceIds } = upsertBatchParts(body.batch, task.caller, task.acceptedAtMicros, task.limits.maxValueBytes);
  return { ok: true, res, ...encodeCallPartRows(redactCallParts(rows, task.redact), endTraceIds, encoder) };
}

/** The refusal as the error the serving thread's checks would have thrown. */
export function callBatchError(r: CallBatchRefused): ApiError {
  return new ApiError(r.status, r.reason, { field: r.field, extra: r.extra, headers: r.headers });
}
