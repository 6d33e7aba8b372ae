import { errorsSql } from './end-columns';

/**
 * The Call of the interface as one line of JSON text, built by ClickHouse from a merged call row
 * (the column names of MERGED_CALL_COLUMNS). This is the one definition of a Call's wire shape
 * on the read side: the stored JSON dumps are spliced in as they are (never parsed and
 * re-encoded in Node), and the derived `summary.weave` fields (status, latency, trace name) are
 * added here, as the reference does on every read.
 */

/** Fields a projection (`columns`) may leave out, and what they become then (reference §3.5). */
const EMPTY_WHEN_UNSELECTED: Record<string, string> = { attributes: "'{}'", inputs: "'{}'" };

const REFERENCE_CALL_NAMES = [
  ['svc_user_id', 'wb_user_id'],
  ['svc_run_id', 'wb_run_id'],
  ['svc_run_step', 'wb_run_step'],
  ['svc_run_step_end', 'wb_run_step_end'],
] as const;

/** A JSON string or null. */
const str = (x: string) => `ifNull(toJSONString(${x}), 'null')`;
/** A JSON number or null. */
const num = (x: string) => `ifNull(toString(${x}), 'null')`;
/**
 * ISO-8601 as the API writes times (core's clickHouseToIso): no fraction when it is zero,
 * milliseconds when the microseconds are, else microseconds.
 */
export const isoSql = (x: string) => `concat(replaceRegexpOne(formatDateTime(${x}, '%Y-%m-%dT%H:%i:%S.%f'), '([.]000)?000$', ''), 'Z')`;
const time = (x: string) => `if(${x} IS NULL, 'null', concat('"', ${isoSql(`assumeNotNull(${x})`)}, '"'))`;
/** A stored object dump, `{}` when absent (or not an object). */
const object = (x: string) => `if(startsWith(ifNull(${x}, ''), '{'), assumeNotNull(${x}), '{}')`;
/** A stored value dump, `null` when absent. */
const value = (x: string) => `if(ifNull(${x}, '') = '', 'null', assumeNotNull(${x}))`;
/** `{...obj, key: v}` on JSON text: the key is appended (a later duplicate key wins when parsed). */
const withKey = (obj: string, key: string, v: string) =>
  `concat(substring(${obj}, 1, length(${obj}) - 1), if(${obj} = '{}', '', ','), '${JSON.stringify(key)}:', ${v}, '}')`;

/** A call's attributes as the interface returns them: the stored attributes, an OTel span's dump under `otel_span`. */
const attributesSql = (a: string) => `if(otel_dump IS NULL, ${a}, ${withKey(a, 'otel_span', 'assumeNotNull(otel_dump)')})`;

/** The object name of an op ref (`weave:///e/p/op/<name>:<digest>`), else the op name itself. */
export const traceNameSql = (op: string) =>
  `multiIf(startsWith(${op}, 'weave:///') AND match(${op}, '/[^/:]*:'), regexpExtract(${op}, '/([^/:]*):', 1), ${op})`;

/** The derived status (reference make_derived_summary_fields); the filter on summary.weave.status reads the same. */
export const statusSql = (errorsSql: string) =>
  `multiIf(ifNull(exception, '') != '', 'error', ended_at IS NULL, 'running', ifNull(toFloat64OrNull(${errorsSql}), 0) > 0, 'descendant_error', 'success')`;

/** Whole milliseconds from start to end (floor, as the reference), NULL while running. */
/** A versioned op ref's name (`weave:///e/p/op/<name>:<digest>`), or the op name itself (OTLP spans, plain names). */
export const opBaseNameSql = (col: string) =>
  `if(startsWith(${col}, 'weave:///'), replaceRegexpOne(${col}, '^weave:///[^/]+/[^/]+/op/([^:]*)(:.*)?$', '\\\\1'), ${col})`;

export const latencySql = `toInt64(floor((toUnixTimestamp64Micro(ended_at) - toUnixTimestamp64Micro(started_at)) / 1000))`;

/** `summary.status_counts.error` of the stored summary, as text (a JSON string unquoted, as the filters read it). */
const ERRORS = errorsSql('summary_dump');

/** The call's ids and op, first in every line (the full line and the start fragment alike). */
const CALL_KEY_FIELDS: [string, string][] = [
  ['id', str('id')],
  ['project_id', str('project_id')],
  ['op_name', str(`ifNull(op_name, '')`)],
  ['trace_id', str(`ifNull(trace_id, '')`)],
  ['parent_id', str(`nullIf(parent_id, '')`)],
  ['thread_id', str('thread_id')],
  ['turn_id', str('turn_id')],
];

/**
 * The Call JSON line over a merged row, as successive SELECT lists, each reading the columns the
 * one before added (so every sub-expression is written, parsed and planned once): wrap the row
 * as `SELECT *, <list> FROM (...)` for each list in turn; the last one defines `line`.
 * `selected`: the fields a projection keeps (undefined: all); a left-out field is not read at all.
 *
 * summary: `weave` gets status, latency_ms, and display_name or trace_name appended to the
 * stored text. Where the stored summary already holds a `weave` object (rare: the SDK does not
 * send one), its keys come first and the derived ones after them, and the new `weave` follows
 * the stored one: a JSON reader keeps the last of a repeated key, so the derived values win as
 * in the reference, without parsing every summary (lambdas over parsed keys cost more to plan
 * than the rest of the line on every page).
 */
export function callLineSelects(selected?: Set<string>): string[] {
  const want = (f: string) => !selected || selected.has(f);
  const derived = `arrayConcat(
      [concat('"status":', toJSONString(${statusSql(ERRORS)}))],
      if(ended_at IS NULL, [], [concat('"latency_ms":', toString(${latencySql}))]),
      multiIf(ifNull(display_name, '') != '', [concat('"display_name":', toJSONString(assumeNotNull(display_name)))],
              ifNull(op_name, '') != '', [concat('"trace_name":', toJSONString(${traceNameSql('assumeNotNull(op_name)')}))], []))`;
  const fields: [string, string][] = [
    ...CALL_KEY_FIELDS,
    ['display_name', str(`nullIf(display_name, '')`)],
    ['started_at', time('started_at')],
    ['ended_at', time('ended_at')],
    ['attributes', attributesSql('_a')],
    ['inputs', object('inputs_dump')],
    ['output', value('output_dump')],
    ['exception', str('exception')],
    ['summary', withKey('_s', 'weave', '_weave')],
    ['svc_user_id', str('svc_user_id')],
    ['svc_run_id', str('svc_run_id')],
    ['svc_run_step', num('svc_run_step')],
    ['svc_run_step_end', num('svc_run_step_end')],
    ['deleted_at', time('deleted_at')],
  ];
  const parts = fields.map(
    ([name, sql], i) => `'${i ? ',' : '{'}${JSON.stringify(name)}:', ${want(name) ? sql : (EMPTY_WHEN_UNSELECTED[name] ?? "'null'")}`,
  );
  // The reference's names of the svc_ members, sent alongside (the Weave SDK reads `wb_user_id`, `wb_run_id`…).
  for (const [ours, theirs] of REFERENCE_CALL_NAMES)
    parts.push(`',${JSON.stringify(theirs)}:', ${want(ours) ? fields.find(([n]) => n === ours)![1] : "'null'"}`);
  const first = [`${want('attributes') ? object('attributes_dump') : "''"} AS _a`];
  const second: string[] = [];
  const third: string[] = [];
  const fourth: string[] = [];
  if (want('summary')) {
    first.push(`${object('summary_dump')} AS _s`, `${derived} AS _derived`);
    // Only a summary holding "weave" somewhere is parsed (for the stored weave object's text).
    second.push(`if(position(_s, '"weave"') = 0, '', JSONExtractRaw(_s, 'weave')) AS _w`);
    third.push(`if(startsWith(_w, '{') AND _w != '{}', substring(_w, 2, length(_w) - 2), '') AS _kept`);
    fourth.push(`concat('{', _kept, if(_kept = '', '', ','), arrayStringConcat(_derived, ','), '}') AS _weave`);
  }
  // Raw line breaks can only be JSON whitespace (inside strings they are escaped): a line stays one line.
  const line = `replaceAll(concat(${parts.join(', ')}, '}'), '\\n', ' ') AS line`;
  return [first, second, third, fourth]
    .filter((l) => l.length)
    .map((l) => l.join(', '))
    .concat(line);
}

/**
 * A full Call line from fragments stored with each half (SQL in SCHEMA.md "call line
 * fragments"): calls_starts' `line_start` (the ids, op and start time), `line_svc` (the run
 * fields) and `line_trace_name`, calls_ends' `line_tail` (every field an end part writes, and the
 * summary up to its derived status). A read splices them around the start's stored dumps
 * (attributes, inputs) and adds what needs both halves or a rename: latency, the display name. The
 * same text as callLineSelects builds (keys in another order), a test compares the two.
 *
 * The start's dumps are not copied into a fragment:
 * a second copy of the largest columns doubled what every insert compressed and every merge
 * rewrote, for a read that reads the same bytes either way.
 */
export const LINE_FRAGMENTS = {
  /** `{"id":…,…,"started_at":…` (no raw line break: toJSONString and times never write one). */
  start: () => {
    const fields: [string, string][] = [...CALL_KEY_FIELDS, ['started_at', time('started_at')]];
    return `concat(${fields.map(([k, v], i) => `'${i ? ',' : '{'}${JSON.stringify(k)}:', ${v}`).join(', ')})`;
  },
  /** `,"svc_user_id":…,…,"wb_run_step":…` */
  svc: () => {
    const fields: [string, string][] = [
      ['svc_user_id', str('svc_user_id')],
      ['svc_run_id', str('svc_run_id')],
      ['svc_run_step', num('svc_run_step')],
      ['wb_user_id', str('svc_user_id')],
      ['wb_run_id', str('svc_run_id')],
      ['wb_run_step', num('svc_run_step')],
    ];
    return `concat(${fields.map(([k, v]) => `',${JSON.stringify(k)}:', ${v}`).join(', ')})`;
  },
  /** `,"trace_name":…` (the summary's name when the call has no display name), or empty. */
  traceName: () => `if(ifNull(op_name, '') = '', '', concat(',"trace_name":', toJSONString(${traceNameSql('assumeNotNull(op_name)')})))`,
  /** `,"ended_at":…,"summary":{…,"weave":{…,"status":…` (summary and weave left open). */
  tail: () => {
    const s = object('summary_dump');
    const w = `if(position(${s}, '"weave"') = 0, '', JSONExtractRaw(${s}, 'weave'))`;
    const kept = `if(startsWith(${w}, '{') AND ${w} != '{}', substring(${w}, 2, length(${w}) - 2), '')`;
    const fields: [string, string][] = [
      ['ended_at', time('ended_at')],
      ['output', value('output_dump')],
      ['exception', str('exception')],
      ['svc_run_step_end', num('svc_run_step_end')],
      ['wb_run_step_end', num('svc_run_step_end')],
    ];
    return `replaceAll(concat(${fields.map(([k, v]) => `',${JSON.stringify(k)}:', ${v}`).join(', ')}, ',"summary":', substring(${s}, 1, length(${s}) - 1), if(${s} = '{}', '', ','), '"weave":{', ${kept}, if(${kept} = '', '', ','), '"status":', toJSONString(${statusSql(ERRORS)})), '\\n', ' ')`;
  },
};

/** What a call without an end row (still running) has in place of `line_tail`. */
const RUNNING_TAIL = `,"ended_at":null,"output":null,"exception":null,"svc_run_step_end":null,"wb_run_step_end":null,"summary":{"weave":{"status":"running"`;

/**
 * The line of a full Call over a joined row holding `line_start`, `attributes_dump`, `otel_dump`,
 * `inputs_dump`, `line_svc`, `line_trace_name`, `line_tail` ('' while running), `started_at`,
 * `ended_at` and `display_name`. The start's dumps go in as stored: JSON.stringify wrote them, so
 * they hold no raw line break (one inside a string is escaped) and a line stays one line.
 */
export const fragmentLineSql = `assumeNotNull(concat(line_start,
    ',"attributes":', ${attributesSql(object('attributes_dump'))}, ',"inputs":', ${object('inputs_dump')},
    line_svc, if(line_tail = '', '${RUNNING_TAIL}', line_tail),
    if(ended_at IS NULL, '', concat(',"latency_ms":', toString(${latencySql}))),
    if(ifNull(display_name, '') = '', line_trace_name, concat(',"display_name":', toJSONString(assumeNotNull(display_name)))),
    '}},"display_name":', if(ifNull(display_name, '') = '', 'null', toJSONString(assumeNotNull(display_name))), ',"deleted_at":null}'))`;
