import type { FastifyReply } from 'fastify';
import { CALL_EXPORT_COLUMNS, type CallExportColumn, type CallsExportReq, type CallsStreamQueryReq } from '@weft/api';
import { sendStream } from '@weft/http';
import type { Store } from '@weft/store';
import { streamCallLines, type StreamOptions } from './calls';
import { downloadFraming } from './download-framing';
import { sendJsonLinesAsParquet, sendRows } from './row-export';

/**
 * /calls/export: the calls a query matches as a file, streamed. The calls are read page by page
 * as /calls/stream_query reads them (bounded memory whatever the count): JSONL is those lines;
 * CSV and Parquet are their flat rows (row-export.ts).
 */

type Call = Record<string, unknown> & { summary?: { weave?: { status?: string; latency_ms?: number } } | null };

/**
 * The members of a call's JSON line the Parquet columns read, extracted in one parse of the line
 * (`m`, a named Tuple): a String member holding an object is that object's JSON text.
 */
const MEMBERS = `Tuple(${[
  'id String',
  'project_id String',
  'op_name String',
  'display_name Nullable(String)',
  'trace_id String',
  'parent_id Nullable(String)',
  'thread_id Nullable(String)',
  'turn_id Nullable(String)',
  'started_at String',
  'ended_at Nullable(String)',
  'exception Nullable(String)',
  'svc_user_id Nullable(String)',
  'svc_run_id Nullable(String)',
  'inputs Nullable(String)',
  'attributes Nullable(String)',
  'summary Nullable(String)',
].join(', ')})`;
/** A member of the summary's `weave` object. */
const weave = (k: string, type: string) => `JSONExtract(ifNull(m.summary, '{}'), 'weave', '${k}', '${type}')`;
/**
 * Each export column as SQL over the call's JSON line (`line`) and its members (`m`): Parquet,
 * converted by the engine (jsonLinesToParquet). The same values as COLUMNS gives a parsed call.
 */
const COLUMN_SQL: Record<CallExportColumn, string> = {
  id: 'm.id',
  project_id: 'm.project_id',
  op_name: 'm.op_name',
  display_name: 'm.display_name',
  trace_id: 'm.trace_id',
  parent_id: 'm.parent_id',
  thread_id: 'm.thread_id',
  turn_id: 'm.turn_id',
  started_at: `parseDateTime64BestEffort(m.started_at, 6, 'UTC')`,
  ended_at: `parseDateTime64BestEffortOrNull(m.ended_at, 6, 'UTC')`,
  status: `ifNull(nullIf(${weave('status', 'String')}, ''), if(m.ended_at IS NULL, 'running', 'success'))`,
  latency_ms: weave('latency_ms', 'Nullable(Int64)'),
  exception: 'm.exception',
  svc_user_id: 'm.svc_user_id',
  svc_run_id: 'm.svc_run_id',
  inputs: `ifNull(m.inputs, '{}')`,
  // Any JSON value: its text, which a String member does not keep for a JSON string (read apart).
  output: `nullIf(nullIf(JSONExtractRaw(line, 'output'), ''), 'null')`,
  attributes: `ifNull(m.attributes, '{}')`,
  summary: 'm.summary',
};

const COLUMNS: Record<CallExportColumn, { type: string; value: (c: Call) => unknown }> = {
  id: { type: 'String', value: (c) => c.id },
  project_id: { type: 'String', value: (c) => c.project_id },
  op_name: { type: 'String', value: (c) => c.op_name },
  display_name: { type: 'Nullable(String)', value: (c) => c.display_name ?? null },
  trace_id: { type: 'String', value: (c) => c.trace_id },
  parent_id: { type: 'Nullable(String)', value: (c) => c.parent_id ?? null },
  thread_id: { type: 'Nullable(String)', value: (c) => c.thread_id ?? null },
  turn_id: { type: 'Nullable(String)', value: (c) => c.turn_id ?? null },
  started_at: { type: "DateTime64(6, 'UTC')", value: (c) => c.started_at },
  ended_at: { type: "Nullable(DateTime64(6, 'UTC'))", value: (c) => c.ended_at ?? null },
  status: { type: 'String', value: (c) => c.summary?.weave?.status ?? (c.ended_at ? 'success' : 'running') },
  latency_ms: { type: 'Nullable(Int64)', value: (c) => c.summary?.weave?.latency_ms ?? null },
  exception: { type: 'Nullable(String)', value: (c) => c.exception ?? null },
  svc_user_id: { type: 'Nullable(String)', value: (c) => c.svc_user_id ?? null },
  svc_run_id: { type: 'Nullable(String)', value: (c) => c.svc_run_id ?? null },
  inputs: { type: 'String', value: (c) => JSON.stringify(c.inputs ?? {}) },
  output: { type: 'Nullable(String)', value: (c) => (c.output === undefined || c.output === null ? null : JSON.stringify(c.output)) },
  attributes: { type: 'String', value: (c) => JSON.stringify(c.attributes ?? {}) },
  summary: { type: 'Nullable(String)', value: (c) => (c.summary ? JSON.stringify(c.summary) : null) },
};

export async function exportCalls(store: Store, req: CallsExportReq, reply: FastifyReply, opts: StreamOptions): Promise<void> {
  const abort = new AbortController();
  const framing = downloadFraming(req.format, `${req.project_id}-calls`, () => abort.abort());
  if (req.format === 'jsonl') {
    // status and latency_ms are read from the summary (summary.weave).
    const columns = req.columns?.map((c) => (c === 'status' || c === 'latency_ms' ? 'summary' : c));
    const lines = streamCallLines(store, { ...streamReq(req), columns }, abort.signal, opts);
    return sendStream(reply, lines, framing);
  }
  const names = req.columns ?? [...CALL_EXPORT_COLUMNS];
  const lines = streamCallLines(store, streamReq(req), abort.signal, opts);
  if (req.format === 'parquet') {
    const select = names.map((name) => `CAST(${COLUMN_SQL[name]} AS ${COLUMNS[name].type}) AS \`${name}\``).join(', ');
    return sendJsonLinesAsParquet(store, reply, framing, lines, MEMBERS, select);
  }
  const columns = names.map((name) => ({ name, ...COLUMNS[name] }));
  await sendRows(store, reply, req.format, framing, columns, callsOf(lines));
}

/** The stream query of an export: every call the filter matches, in its order, with the whole Call (columns are the export's). */
function streamReq(req: CallsExportReq): CallsStreamQueryReq {
  return {
    project_id: req.project_id,
    filter: req.filter,
    query: req.query,
    sort_by: req.sort_by,
    limit: req.limit,
    offset: req.offset,
    include_costs: req.include_costs,
    include_feedback: false,
    include_storage_size: false,
    include_total_storage_size: false,
    return_expanded_column_values: true,
  };
}

/** JSONL chunks (not aligned to lines) → one parsed Call per line. */
async function* callsOf(chunks: AsyncIterable<Buffer>): AsyncGenerator<Call> {
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest + chunk.toString('utf8');
    const lines = text.split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line) yield JSON.parse(line) as Call;
  }
  if (rest) yield JSON.parse(rest) as Call;
}
