import type { ClickHouseClient } from '@clickhouse/client';
import type { CallEndBody, CallStartBody } from '@weft/api';
import { extractRefs, microsToClickHouse, parseTimestampMicros } from '@weft/core';

/**
 * One row of `call_parts`, as it travels on the bus and is inserted: the JSON values are
 * already serialised (`*_dump`), times are ClickHouse text. A start part and an end part of
 * the same call are merged by calls_merged.
 */
export interface CallPartRow {
  project_id: string;
  id: string;
  trace_id?: string | null;
  parent_id?: string | null;
  thread_id?: string | null;
  turn_id?: string | null;
  op_name?: string | null;
  display_name?: string | null;
  started_at?: string | null;
  ended_at?: string | null;
  attributes_dump?: string | null;
  inputs_dump?: string | null;
  input_refs: string[];
  output_dump?: string | null;
  output_refs: string[];
  summary_dump?: string | null;
  exception?: string | null;
  otel_dump?: string | null;
  svc_user_id?: string | null;
  svc_run_id?: string | null;
  svc_run_step?: number | null;
  svc_run_step_end?: number | null;
  deleted_at?: string | null;
  /** When the part was accepted; orders display_name updates. */
  created_at: string;
}

const orNull = <T>(v: T | null | undefined): T | null => (v === undefined ? null : v);
const chTime = (iso: string) => microsToClickHouse(parseTimestampMicros(iso)!);

/** The start part of a call. `id` and `trace_id` are already decided; the user id comes from the caller. */
export function startPart(
  s: CallStartBody & { id: string; trace_id: string },
  userId: string,
  acceptedAtMicros: number,
): CallPartRow {
  return {
    project_id: s.project_id,
    id: s.id,
    trace_id: s.trace_id,
    parent_id: s.parent_id || null,
    thread_id: orNull(s.thread_id),
    turn_id: orNull(s.turn_id),
    op_name: s.op_name,
    display_name: s.display_name || null,
    started_at: chTime(s.started_at),
    attributes_dump: JSON.stringify(s.attributes ?? {}),
    inputs_dump: JSON.stringify(s.inputs ?? {}),
    input_refs: extractRefs(s.inputs),
    output_refs: [],
    otel_dump: s.otel_dump ? JSON.stringify(s.otel_dump) : null,
    svc_user_id: userId,
    svc_run_id: orNull(s.svc_run_id),
    svc_run_step: orNull(s.svc_run_step),
    created_at: microsToClickHouse(acceptedAtMicros),
  };
}

/** The end part of a call. */
export function endPart(e: CallEndBody, acceptedAtMicros: number): CallPartRow {
  const output = e.output === undefined ? null : e.output;
  return {
    project_id: e.project_id,
    id: e.id,
    ended_at: chTime(e.ended_at),
    output_dump: JSON.stringify(output),
    output_refs: extractRefs(output),
    summary_dump: JSON.stringify(e.summary ?? {}),
    exception: orNull(e.exception),
    input_refs: [],
    svc_run_step_end: orNull(e.svc_run_step_end),
    created_at: microsToClickHouse(acceptedAtMicros),
  };
}

/** Inserts call parts in one INSERT. A replay of the same parts leaves no visible duplicate. */
export async function insertCallParts(client: ClickHouseClient, rows: CallPartRow[]): Promise<void> {
  if (rows.length === 0) return;
  await client.insert({ table: 'call_parts', values: rows, format: 'JSONEachRow' });
}
