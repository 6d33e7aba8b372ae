import type { CallPartRow } from './call-part-row';

/**
 * call_parts rows as ClickHouse `TabSeparated` text, the format the engine's native parser
 * reads fastest of the text formats it takes as raw bytes. Unlike JSONEachRow, a JSON dump
 * inside a row is not escaped a second time: only backslash, tab, newline and carriage return
 * are, and the common dump has no tab or newline and only a few backslashes. Columns in
 * CALL_PART_COLUMNS order (the row schema's, call-part-row.ts).
 */

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPES = /[\\\t\n\r]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A string field of TabSeparated: backslash, tab, newline and CR escaped, nothing else. */
function field(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPES, (c) => ESCAPED[c]!) : s;
}

const nullable = (s: string | null | undefined): string => (s === null || s === undefined ? '\\N' : field(s));
const nullableNumber = (n: number | null | undefined): string => (n === null || n === undefined ? '\\N' : String(n));

const QUOTED_ESCAPES = /[\\'\t\n\r]/g;
const QUOTED: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** An Array(String) field: `['a','b']`, each element a quoted literal (no tab or newline left raw). */
function stringArray(xs: readonly string[]): string {
  if (xs.length === 0) return '[]';
  let out = '[';
  for (let i = 0; i < xs.length; i++) {
    if (i > 0) out += ',';
    // The engine reads an array field of TabSeparated as literal syntax, not escaped once more.
    out += "'" + xs[i]!.replace(QUOTED_ESCAPES, (c) => QUOTED[c]!) + "'";
  }
  return out + ']';
}

/** One row as a TabSeparated line (with its newline), columns in CALL_PART_COLUMNS order. */
export function callPartTsvLine(r: CallPartRow): string {
  return (
    field(r.project_id) +
    '\t' +
    field(r.id) +
    '\t' +
    nullable(r.trace_id) +
    '\t' +
    nullable(r.parent_id) +
    '\t' +
    nullable(r.thread_id) +
    '\t' +
    nullable(r.turn_id) +
    '\t' +
    nullable(r.op_name) +
    '\t' +
    nullable(r.display_name) +
    '\t' +
    nullable(r.started_at) +
    '\t' +
    nullable(r.ended_at) +
    '\t' +
    nullable(r.attributes_dump) +
    '\t' +
    nullable(r.inputs_dump) +
    '\t' +
    stringArray(r.input_refs) +
    '\t' +
    nullable(r.output_dump) +
    '\t' +
    stringArray(r.output_refs) +
    '\t' +
    nullable(r.summary_dump) +
    '\t' +
    nullable(r.exception) +
    '\t' +
    nullable(r.otel_dump) +
    '\t' +
    nullable(r.svc_user_id) +
    '\t' +
    nullable(r.svc_run_id) +
    '\t' +
    nullableNumber(r.svc_run_step) +
    '\t' +
    nullableNumber(r.svc_run_step_end) +
    '\t' +
    nullable(r.deleted_at) +
    '\t' +
    field(r.created_at) +
    '\n'
  );
}

/** Rows as one TabSeparated payload. */
export function encodeCallPartsTsv(rows: readonly CallPartRow[]): Buffer {
  let text = '';
  for (const r of rows) text += callPartTsvLine(r);
  return Buffer.from(text, 'utf8');
}
