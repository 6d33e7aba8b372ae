import { microsToClickHouse } from '@weft/core';
import { CALL_PART_COLUMNS, type CallPartRow } from './call-part-row';

/**
 * call_parts rows as ClickHouse `TabSeparated` text: what gateways put on the bus before
 * envelope version 4 (RowBinary, call-part-rowbinary.ts); no longer read from the bus (1.0 reads
 * version 5), kept for the engine benchmark's comparison and for tests that write pre-1.0 values. Only backslash, tab, newline and carriage
 * return are escaped. Columns in CALL_PART_COLUMNS order (the row schema's, call-part-row.ts).
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

const TAB = 9;
const NEWLINE = 10;

/**
 * Why `bytes` cannot be one call_parts line of TabSeparated (as callPartTsvLine writes it), or
 * null: exactly one line (its only newline the last byte, so it cannot smuggle in a second row),
 * one field per column, a project and an id. What the fields hold is the engine's to check on
 * insert (a rejected row is isolated and dead-lettered by the consumer).
 */
export function callPartTsvLineProblem(bytes: Uint8Array): string | null {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== NEWLINE) return 'not a line (no final newline)';
  if (bytes.indexOf(NEWLINE) !== bytes.length - 1) return 'more than one line';
  let tabs = 0;
  let first = -1;
  let second = -1;
  for (let at = bytes.indexOf(TAB); at >= 0; at = bytes.indexOf(TAB, at + 1)) {
    if (tabs === 0) first = at;
    else if (tabs === 1) second = at;
    tabs++;
  }
  if (tabs !== CALL_PART_COLUMNS.length - 1) return `${tabs + 1} fields, not ${CALL_PART_COLUMNS.length}`;
  if (first === 0) return 'empty project_id';
  if (second === first + 1) return 'empty id';
  return null;
}

/** A TabSeparated field back to its text (the reverse of the escaping above). */
export function unescapeTsvField(field: string): string | null {
  if (field === '\\N') return null;
  return field.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c);
}
