import type { CallEndBody, CallStartBody } from '@weft/api';
import { extractRefs, parseTimestampMicros, REF_PREFIX } from '@weft/core';
import { CALL_PART_COLUMNS, type CallPartRow } from './call-part-row';
import { encodeCallPartsRowBinary } from './call-part-rowbinary';
import type { Store } from './connection';
import { truncateOversized } from './truncated-value';

const orNull = <T>(v: T | null | undefined): T | null => (v === undefined ? null : v);
/** A request's time (ISO 8601, checked at the edge) as the row holds it: µs since the epoch. */
const micros = (iso: string) => parseTimestampMicros(iso)!;

/**
 * The refs inside a value, given its JSON text: JSON.stringify never escapes the characters of
 * a ref's prefix, so a dump without it holds no ref and the value need not be walked.
 */
const refsOf = (value: unknown, dump: string): string[] => (dump.includes(REF_PREFIX) ? extractRefs(value) : []);

/**
 * The start part of a call. `id` and `trace_id` are already decided; the user id comes from the
 * caller. Inputs, attributes and the OTel dump members over `maxValueBytes` (as JSON; 0: no
 * limit) are stored as truncation markers (truncated-value.ts): every entrance makes its parts
 * here, so all agree.
 */
export function startPart(
  s: CallStartBody & { id: string; trace_id: string },
  userId: string,
  acceptedAtMicros: number,
  maxValueBytes = 0,
  startedAtMicros = micros(s.started_at),
): CallPartRow {
  const inputs = truncateOversized(s.inputs ?? {}, JSON.stringify(s.inputs ?? {}), maxValueBytes);
  const attributes = JSON.stringify(s.attributes ?? {});
  return {
    project_id: s.project_id,
    id: s.id,
    trace_id: s.trace_id,
    parent_id: s.parent_id || null,
    thread_id: orNull(s.thread_id),
    turn_id: orNull(s.turn_id),
    op_name: s.op_name,
    display_name: s.display_name || null,
    started_at: startedAtMicros,
    attributes_dump: truncateOversized(s.attributes ?? {}, attributes, maxValueBytes).json,
    inputs_dump: inputs.json,
    input_refs: refsOf(inputs.value, inputs.json),
    output_refs: [],
    otel_dump: s.otel_dump ? truncateOversized(s.otel_dump, JSON.stringify(s.otel_dump), maxValueBytes).json : null,
    svc_user_id: userId,
    svc_run_id: orNull(s.svc_run_id),
    svc_run_step: orNull(s.svc_run_step),
    created_at: acceptedAtMicros,
  };
}

/**
 * The end part of a call; an output (or its members) over `maxValueBytes` is stored truncated, as
 * in startPart. A caller that has the time as µs already (an OTLP span) passes it, as to startPart.
 */
export function endPart(e: CallEndBody, acceptedAtMicros: number, maxValueBytes = 0, endedAtMicros = micros(e.ended_at)): CallPartRow {
  const sent = e.output === undefined ? null : e.output;
  const output = truncateOversized(sent, JSON.stringify(sent), maxValueBytes);
  return {
    project_id: e.project_id,
    id: e.id,
    ended_at: endedAtMicros,
    output_dump: output.json,
    output_refs: refsOf(output.value, output.json),
    summary_dump: JSON.stringify(e.summary ?? {}),
    exception: orNull(e.exception),
    input_refs: [],
    svc_run_step_end: orNull(e.svc_run_step_end),
    created_at: acceptedAtMicros,
  };
}

/**
 * A finished call as one part: the start's columns with the end's (endPart's own columns). The
 * tables the views feed get exactly the rows the two parts would have given (the starts view takes
 * every part with a start, the ends view every part with an end), but the bus carries, and the
 * engine parses, one row instead of two (docs/performance.md, "One part per finished call").
 */
export function wholeCallPart(start: CallPartRow, end: CallPartRow): CallPartRow {
  // Every column spelled out: a spread of the start plus the end's columns made V8 build a new
  // hidden class per row (~15 µs per call, more than the rows it saves).
  return {
    project_id: start.project_id,
    id: start.id,
    trace_id: start.trace_id,
    parent_id: start.parent_id,
    thread_id: start.thread_id,
    turn_id: start.turn_id,
    op_name: start.op_name,
    display_name: start.display_name,
    started_at: start.started_at,
    ended_at: end.ended_at,
    attributes_dump: start.attributes_dump,
    inputs_dump: start.inputs_dump,
    input_refs: start.input_refs,
    output_dump: end.output_dump,
    output_refs: end.output_refs,
    summary_dump: end.summary_dump,
    exception: end.exception,
    otel_dump: start.otel_dump,
    svc_user_id: start.svc_user_id,
    svc_run_id: start.svc_run_id,
    svc_run_step: start.svc_run_step,
    svc_run_step_end: end.svc_run_step_end,
    deleted_at: start.deleted_at,
    created_at: start.created_at,
  };
}

/** A start part alone (no end in it); `isEndPart` likewise. Renames, deletes and whole calls are neither. */
export const isStartPart = (r: CallPartRow): boolean => r.started_at != null && r.ended_at == null;
export const isEndPart = (r: CallPartRow): boolean => r.ended_at != null && r.started_at == null;
/** A whole-call part: a start and an end in one row. */
export const isWholeCallPart = (r: CallPartRow): boolean => r.started_at != null && r.ended_at != null;

/**
 * Call parts already encoded, as they come off the bus: RowBinary rows (call-part-rowbinary.ts),
 * the insert's bytes as they are. (The TabSeparated lines of versions before envelope 4 are not
 * read from the bus since 1.0: they are dead-lettered, libs/ingest envelope.ts.)
 */
export interface EncodedCallParts {
  format: 'RowBinary';
  bytes: Uint8Array;
}

/**
 * Inserts call parts as RowBinary: rows are encoded, parts already encoded go in as they are, in
 * one INSERT. A replay of the same parts leaves no visible duplicate.
 */
export async function insertCallParts(store: Pick<Store, 'insertRaw'>, parts: readonly (CallPartRow | EncodedCallParts)[]): Promise<void> {
  const rows: CallPartRow[] = [];
  const binary: Uint8Array[] = [];
  for (const p of parts) {
    if (!('format' in p)) rows.push(p);
    else binary.push(p.bytes);
  }
  if (rows.length > 0) binary.push(encodeCallPartsRowBinary(rows));
  if (binary.length > 0) await store.insertRaw('call_parts', CALL_PART_COLUMNS, 'RowBinary', Buffer.concat(binary));
}
