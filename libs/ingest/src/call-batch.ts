import type { CallEndBody, CallStartBody, RequestOf, ResponseOf } from '@weft/api';
import { generateId, type Caller } from '@weft/core';
import { CallPartRowBinaryEncoder, endPart, isWholeCallPart, startPart, type CallPartRow } from '@weft/store';
import { coalesceCallParts } from './coalesce';
import { callPartKey } from './envelope';

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
