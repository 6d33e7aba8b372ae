import type { FastifyReply } from 'fastify';
import { sendStream } from '@weft/http';
import { jsonLinesToParquet, jsonlToParquet, type Store } from '@weft/store';
import type { DownloadFraming } from './download-framing';
import { sendParquet } from './parquet-pipe';

/**
 * Rows as a download, streamed: CSV written here row by row; Parquet written by the engine from
 * the rows' JSON lines as they come (parquet-pipe.ts), then sent from disk. Memory stays bounded
 * whatever the count: rows are produced and written one by one.
 */
export interface ExportColumn<R> {
  name: string;
  /** The column's Parquet (ClickHouse) type. */
  type: string;
  value: (row: R) => unknown;
}

export async function sendRows<R>(
  store: Store,
  reply: FastifyReply,
  format: 'csv' | 'parquet',
  framing: DownloadFraming,
  columns: ExportColumn<R>[],
  rows: AsyncIterable<R>,
): Promise<void> {
  if (format === 'csv') return sendStream(reply, csvLines(rows, columns), framing);
  const structure = columns.map((col) => `\`${col.name.replace(/`/g, '')}\` ${col.type}`).join(', ');
  await sendParquet(reply, framing, jsonLines(rows, columns), (input, output) => jsonlToParquet(store, input, structure, output));
}

/**
 * JSON lines (chunks not aligned to lines) as Parquet, its columns `select` (expressions over
 * each `line` and its `members`, jsonLinesToParquet).
 */
export async function sendJsonLinesAsParquet(
  store: Store,
  reply: FastifyReply,
  framing: DownloadFraming,
  chunks: AsyncIterable<Buffer>,
  members: string,
  select: string,
): Promise<void> {
  await sendParquet(reply, framing, chunks, (input, output) => jsonLinesToParquet(store, input, members, select, output));
}

/** Each row as a JSON line of its columns, in chunks of about 64 KiB. */
async function* jsonLines<R>(rows: AsyncIterable<R>, columns: ExportColumn<R>[]): AsyncGenerator<string> {
  let batch = '';
  for await (const r of rows) {
    const row: Record<string, unknown> = {};
    for (const col of columns) row[col.name] = col.value(r);
    batch += JSON.stringify(row) + '\n';
    if (batch.length > 1 << 16) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

/** RFC 4180: a header, then one line per row; a field with a comma, quote or line break is quoted. */
async function* csvLines<R>(rows: AsyncIterable<R>, columns: ExportColumn<R>[]): AsyncGenerator<string> {
  // The first row is read before the header goes out: a refused query (a bad $expr) is then still
  // a clean 4xx, not a response cut after its first line.
  const it = rows[Symbol.asyncIterator]();
  let next = await it.next();
  yield columns.map((c) => csvField(c.name)).join(',') + '\r\n';
  let batch = '';
  for (; !next.done; next = await it.next()) {
    batch += columns.map((col) => csvField(col.value(next.value as R))).join(',') + '\r\n';
    if (batch.length > 1 << 16) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
