import type { ResponseOf } from '@weft/api';
import { ApiError, type Caller } from '@weft/core';
// The checks alone, not @weft/http's index: a worker thread need not load the HTTP server.
import { checkRouteJsonBody } from '@weft/http/route-body';
import type { RequestLimits } from '@weft/http';
import type { CallPartRowBinaryEncoder } from '@weft/store';
import { encodeCallPartRows, upsertBatchParts, type EncodedCallPartRows } from './call-batch';
import { redactCallParts } from './redaction';

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
