import type { FastifyReply } from 'fastify';
import type { Call, CallsStreamQueryReq, EvaluationsExportReq } from '@weft/api';
import { ApiError, type Caller } from '@weft/core';
import { sendStream } from '@weft/http';
import { resolveRefs } from '@weft/objects';
import type { Store } from '@weft/store';
import {
  exampleKeys,
  exportedComparison,
  exportedRows,
  loadComparison,
  parseRef,
  predictAndScoreOp,
  scorePaths,
  type ComparisonSource,
  type ExportedRow,
} from '@weft/svc-ui';
import { streamCalls, type StreamOptions } from './calls';
import { downloadFraming } from './download-framing';
import { sendRows, type ExportColumn } from './row-export';

/**
 * /evaluations/export: 1–4 evaluation runs compared, as a download. The comparison is the compare
 * view's own (services/ui app/eval-compare.ts: the same functions), read here from the store: the
 * runs' roots, their predict_and_score children (10,000 at most, as the view reads), and every
 * ref in the examples and outputs read as /refs/read_batch reads it — so an output stored as a
 * ref (`…/object/lookup:…/attr/table/key/France`) is exported as its value (`Paris`), the stored
 * ref beside it. JSON is the whole comparison in one document; CSV, JSONL and Parquet a row per
 * example and run (the baseline's first).
 */
export async function exportEvaluations(
  store: Store,
  req: EvaluationsExportReq,
  caller: Caller,
  reply: FastifyReply,
  opts: StreamOptions,
): Promise<void> {
  const abort = new AbortController();
  const comparison = await loadComparison(req.call_ids, storeSource(store, req.project_id, caller, abort.signal, opts));
  const found = new Set(comparison.runs.map((r) => r.call.id));
  const missing = req.call_ids.findIndex((id) => !found.has(id));
  if (missing >= 0) {
    const field = `call_ids[${missing}]`;
    throw new ApiError(404, `${field}: no call ${req.call_ids[missing]} in project ${req.project_id}`, { field });
  }
  const doc = exportedComparison(comparison, req.regressions_only);
  const framing = downloadFraming(req.format, `${req.project_id}-evaluations`, () => abort.abort());
  if (req.format === 'json') return sendStream(reply, jsonDocument(doc), framing);
  const rows = exportedRows(doc);
  if (req.format === 'jsonl') return sendStream(reply, jsonLines(rows), framing);
  await sendRows(store, reply, req.format, framing, rowColumns(rows, req.format), toAsync(rows));
}

/** The comparison's reads, from the store, as the caller may read: refs into other entities stay refs. */
function storeSource(store: Store, projectId: string, caller: Caller, signal: AbortSignal, opts: StreamOptions): ComparisonSource {
  const calls = async (req: Partial<CallsStreamQueryReq>): Promise<Call[]> => {
    const out: Call[] = [];
    const query: CallsStreamQueryReq = {
      project_id: projectId,
      include_costs: false,
      include_feedback: false,
      include_storage_size: false,
      include_total_storage_size: false,
      return_expanded_column_values: true,
      ...req,
    };
    for await (const c of streamCalls(store, query, signal, opts)) out.push(c);
    return out;
  };
  const readable = (ref: string) => {
    const entity = parseRef(ref)?.projectId.split('/')[0];
    return entity !== undefined && (caller.isAdmin || caller.entities.includes(entity));
  };
  return {
    roots: (ids) => calls({ filter: { call_ids: ids }, include_costs: true, limit: ids.length }),
    children: (rootIds, limit) =>
      calls({
        filter: { parent_ids: rootIds, op_names: [predictAndScoreOp(projectId)] },
        sort_by: [{ field: 'started_at', direction: 'asc' }],
        limit,
      }),
    readRefs: async (refs) => {
      const wanted = [...new Set(refs)].filter(readable);
      const resolved = wanted.length ? await resolveRefs(store, wanted, JSON.parse) : [];
      const out = new Map<string, unknown>();
      // As /refs/read_batch answers: a deleted object reads as null; a missing or unreadable ref stays a ref.
      resolved.forEach((r, i) => {
        if (r.status === 'ok') out.set(wanted[i]!, r.value);
        else if (r.status === 'deleted') out.set(wanted[i]!, null);
      });
      return out;
    },
  };
}

/** The JSON document, written a part at a time: the runs, then the examples one by one. */
async function* jsonDocument(doc: ReturnType<typeof exportedComparison>): AsyncGenerator<string> {
  const { examples, ...head } = doc;
  yield `${JSON.stringify(head).slice(0, -1)},"examples":[`;
  for (let i = 0; i < examples.length; i++) yield (i ? ',' : '') + JSON.stringify(examples[i]);
  yield ']}\n';
}

async function* jsonLines(rows: ExportedRow[]): AsyncGenerator<string> {
  let batch = '';
  for (const r of rows) {
    batch += JSON.stringify(r) + '\n';
    if (batch.length > 1 << 16) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

async function* toAsync<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** A value in a text column: strings as they are, anything else as JSON text, nothing as null. */
const text = (v: unknown): string | null => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The flat columns of CSV and Parquet: the example's keys one column each (`example.<key>`;
 * `example` for an example that is no object), the run, the output and the output as stored,
 * a column per score (`scores.<path>`: CSV writes booleans as true/false, Parquet as 1/0).
 */
function rowColumns(rows: ExportedRow[], format: 'csv' | 'parquet'): ExportColumn<ExportedRow>[] {
  const { keys, others } = exampleKeys(rows);
  const str = (name: string, value: (r: ExportedRow) => unknown): ExportColumn<ExportedRow> => ({
    name,
    type: 'Nullable(String)',
    value: (r) => text(value(r)),
  });
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  return [
    str('example_key', (r) => r.example_key),
    ...keys.map((k) => str(`example.${k}`, (r) => (isObject(r.example) ? r.example[k] : null))),
    ...(others ? [str('example', (r) => (isObject(r.example) ? null : r.example))] : []),
    str('example_ref', (r) => r.example_ref),
    { name: 'run', type: 'UInt8', value: (r) => r.run },
    { name: 'baseline', type: 'Bool', value: (r) => r.baseline },
    str('model', (r) => r.model),
    str('evaluation_call_id', (r) => r.evaluation_call_id),
    str('call_id', (r) => r.call_id),
    str('trace_id', (r) => r.trace_id),
    str('output', (r) => r.output),
    str('output_stored', (r) => r.output_stored),
    ...scorePaths(rows).map((p): ExportColumn<ExportedRow> => ({
      name: `scores.${p}`,
      type: 'Nullable(Float64)',
      value: (r) => {
        const v = r.scores[p];
        if (v === undefined) return null;
        return format === 'parquet' && typeof v === 'boolean' ? Number(v) : v;
      },
    })),
    { name: 'trials', type: 'UInt32', value: (r) => r.trials },
    { name: 'regressed', type: 'Bool', value: (r) => r.regressed },
    str('exception', (r) => r.exception),
  ];
}
