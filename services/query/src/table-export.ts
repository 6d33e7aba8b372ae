import type { FastifyReply } from 'fastify';
import type { TableExportReq } from '@weft/api';
import { sendStream } from '@weft/http';
import { queryTableRows, tableRowCount } from '@weft/objects';
import { ApiError } from '@weft/core';
import type { Store } from '@weft/store';
import { downloadFraming } from './download-framing';
import { sendRows } from './row-export';

/**
 * /table/export: a table's rows (a dataset's) as a download, in table order. JSONL is each row
 * as stored; CSV and Parquet have a column per key — the ones asked for, else every key of any
 * row in first-seen order (a first pass reads the keys only) — strings as they are, other values
 * as JSON text, a missing key empty.
 */
export async function exportTable(store: Store, req: TableExportReq, reply: FastifyReply): Promise<void> {
  // An unknown table is a 404 (an empty one exports empty).
  if ((await tableRowCount(store, req.project_id, req.digest)) === null)
    throw new ApiError(404, `digest: table ${req.digest} not found`, { field: 'digest' });
  const abort = new AbortController();
  const framing = downloadFraming(req.format, `${req.project_id}-table-${req.digest.slice(0, 12)}`, () => abort.abort());
  const rows = () => queryTableRows(store, { project_id: req.project_id, digest: req.digest }, abort.signal);
  if (req.format === 'jsonl') {
    return sendStream(
      reply,
      mapRows(rows(), (r) => `${r.val.text}\n`),
      framing,
    );
  }
  let keys = req.columns;
  if (!keys) {
    const seen = new Set<string>();
    for await (const r of rows()) for (const k of Object.keys(parse(r.val.text))) seen.add(k);
    keys = [...seen];
  }
  // A Parquet file has at least one column: an empty table's is `value`.
  if (keys.length === 0) keys = ['value'];
  const columns = keys.map((name) => ({
    name,
    type: 'Nullable(String)',
    value: (row: Record<string, unknown>) => {
      const v = row[name];
      return v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
    },
  }));
  await sendRows(
    store,
    reply,
    req.format,
    framing,
    columns,
    mapRows(rows(), (r) => parse(r.val.text)),
  );
}

async function* mapRows<T, U>(rows: AsyncIterable<T>, f: (r: T) => U): AsyncGenerator<U> {
  for await (const r of rows) yield f(r);
}

/** A row is a dict in a dataset; anything else is exported under `value`. */
function parse(text: string): Record<string, unknown> {
  const v = JSON.parse(text) as unknown;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}
