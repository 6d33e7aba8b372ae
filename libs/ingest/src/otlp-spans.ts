import { convertExportRequest, decodeExportTraceServiceRequest, OtlpRequestError, parseOtlpJson, type SpanRejection } from '@weft/otlp';
import { encodeCallPartRows, type EncodedCallPartRows } from './call-batch';
import { redactCallParts } from './redaction';
import { endPart, startPart, wholeCallPart, type CallPartRow, type CallPartRowBinaryEncoder } from '@weft/store';

/** An OTLP export request as it arrived: protobuf bytes, OTLP/JSON text, or already decoded (the contract's /otel/v1/trace body). */
export type OtlpPayload = { protobuf: Uint8Array } | { json: string } | { decoded: unknown };

export interface SpanPartsOptions {
  /** The project the request names (header or body field); wins over resource attributes. */
  projectId: string | null;
  runId: string | null;
  userId: string;
  /** When the request was accepted (epoch µs): every part's created_at. */
  acceptedAtMicros: number;
  /** Values over this many bytes of JSON are stored truncated (WEFT_MAX_VALUE_BYTES; 0 or absent: never). */
  maxValueBytes?: number;
  /** The projects whose values are redacted (their ingest policy). */
  redact?: string[];
}

/** A request's accepted spans as call parts (a start and an end each), ready to publish. */
export interface SpanParts {
  ok: true;
  /** Spans accepted (each is a start part and an end part). */
  accepted: number;
  /** The projects the accepted spans go to (the caller's access is checked against each). */
  projects: string[];
  rows: CallPartRow[];
  rejectedSpans: number;
  errors: string[];
  rejections: SpanRejection[];
}

/**
 * A request's accepted spans as call parts already encoded for the bus: what a conversion
 * worker hands back (bytes and plain values cross threads cheaply; objects would be cloned).
 */
export interface EncodedSpanParts extends Omit<SpanParts, 'rows'>, EncodedCallPartRows {}

/** A request refused as a whole: a 400 naming `field` (`reason` for the log and metric; null for an undecodable body). */
export interface SpansRefused {
  ok: false;
  reason: 'no_project' | 'invalid_request' | null;
  message: string;
  field?: string;
}

/**
 * Decodes an export request, converts its spans (libs/otlp) and makes their call parts: the
 * CPU-heavy half of OTLP ingestion, pure (no I/O, no caller state beyond its ids).
 */
export function spansToParts(payload: OtlpPayload, opts: SpanPartsOptions): SpanParts | SpansRefused {
  let traces: unknown;
  if ('protobuf' in payload) {
    try {
      traces = decodeExportTraceServiceRequest(payload.protobuf);
    } catch (e) {
      if (e instanceof OtlpRequestError) return { ok: false, reason: null, message: e.message, field: e.field };
      throw e;
    }
  } else if ('json' in payload) {
    try {
      traces = parseOtlpJson(payload.json);
    } catch (e) {
      return { ok: false, reason: null, message: `request body: invalid JSON (${(e as Error).message})` };
    }
  } else traces = payload.decoded;

  let conversion;
  try {
    conversion = convertExportRequest(traces, { projectId: opts.projectId, runId: opts.runId });
  } catch (e) {
    if (e instanceof OtlpRequestError)
      return { ok: false, reason: e.field === 'project_id' ? 'no_project' : 'invalid_request', message: e.message, field: e.field };
    throw e;
  }

  const rows: CallPartRow[] = [];
  const projects = new Set<string>();
  for (const c of conversion.calls) {
    projects.add(c.start.project_id);
    // A span is a finished call: one whole-call part.
    rows.push(
      wholeCallPart(
        startPart(c.start, opts.userId, opts.acceptedAtMicros, opts.maxValueBytes, c.startedAtMicros),
        endPart(c.end, opts.acceptedAtMicros, opts.maxValueBytes, c.endedAtMicros),
      ),
    );
  }
  return {
    ok: true,
    accepted: conversion.calls.length,
    projects: [...projects],
    rows,
    rejectedSpans: conversion.rejectedSpans,
    errors: conversion.errors,
    rejections: conversion.rejections,
  };
}

/** spansToParts with the parts encoded (RowBinary) and keyed for the bus: the whole of a span's CPU before its publish. */
export function encodeSpanParts(
  payload: OtlpPayload,
  opts: SpanPartsOptions,
  encoder?: CallPartRowBinaryEncoder,
): EncodedSpanParts | SpansRefused {
  const parts = spansToParts(payload, opts);
  if (!parts.ok) return parts;
  const { rows, ...rest } = parts;
  return { ...rest, ...encodeCallPartRows(redactCallParts(rows, opts.redact), undefined, encoder) };
}
