import { microsToClickHouse } from '@weft/core';
import type { CallPartRow } from '@weft/store';

/**
 * call_parts rows as ClickHouse `TabSeparated` text: what gateways put on the bus before
 * envelope version 4 (RowBinary, libs/store call-part-rowbinary.ts). The product neither writes
 * nor reads it (1.0 reads envelope version 5 only; older values are dead-lettered, libs/ingest
 * envelope.ts): it is here for the engine benchmark's comparison (bench/ingest-engine.ts) and for
 * tests that write pre-1.0 values or check the encodings. Only backslash, tab, newline and
 * carriage return are escaped. Columns in CALL_PART_COLUMNS order (libs/store call-part-row.ts).
 */

const ESCAPES = /[\\\t\n\r]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A string field of TabSeparated: backslash, tab, newline and CR escaped, nothing else. The test
 * is four native searches (3–6× faster than a character-class regex over a ~1 KB dump): JSON
 * dumps never hold a raw tab, newline or CR, and most hold no backslash.
 */
function field(s: string): string {
  const plain = s.indexOf('\\') < 0 && s.indexOf('\t') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0;
  return plain ? s : s.replace(ESCAPES, (c) => ESCAPED[c]!);
}

const nullable = (s: string | null | undefined): string => (s === null || s === undefined ? '\\N' : field(s));
const nullableTime = (micros: number | null | undefined): string =>
  micros === null || micros === undefined ? '\\N' : microsToClickHouse(micros);
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
    nullableTime(r.started_at) +
    '\t' +
    nullableTime(r.ended_at) +
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
    nullableTime(r.deleted_at) +
    '\t' +
    microsToClickHouse(r.created_at) +
    '\n'
  );
}

/** Rows as one TabSeparated payload. */
export function encodeCallPartsTsv(rows: readonly CallPartRow[]): Buffer {
  let text = '';
  for (const r of rows) text += callPartTsvLine(r);
  return Buffer.from(text, 'utf8');
}
