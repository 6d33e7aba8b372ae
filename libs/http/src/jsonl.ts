import type { FastifyReply } from 'fastify';
import { toJsonText } from '@weft/digest';
import { sendStream } from './stream';

const JSONL = 'application/jsonl; charset=utf-8';

/** Streams objects as JSONL, one per line (see sendStream for back-pressure and aborts). */
export async function sendJsonl(
  reply: FastifyReply,
  rows: AsyncIterable<unknown>,
  onAbort?: () => void,
  serialize: (value: unknown) => string = JSON.stringify,
): Promise<void> {
  return sendStream(reply, rows, { contentType: JSONL, toText: (v) => serialize(v) + '\n', onAbort });
}

/** As sendJsonl, for chunks that are already JSONL text (whole lines, e.g. a page built by ClickHouse): written as they are. */
export async function sendJsonlText(reply: FastifyReply, chunks: AsyncIterable<string | Buffer>, onAbort?: () => void): Promise<void> {
  return sendStream(reply, chunks, { contentType: JSONL, toText: (chunk) => chunk, onAbort });
}

/**
 * Streams `{"<key>": [ ...items ]}` as the items arrive, so a response of a million table rows
 * never exists whole in memory. Items may hold stored JSON text (RawJson), sent verbatim.
 */
export async function sendJsonArrayObject(
  reply: FastifyReply,
  key: string,
  items: AsyncIterable<unknown>,
  onAbort?: () => void,
): Promise<void> {
  return sendStream(reply, items, {
    contentType: 'application/json; charset=utf-8',
    open: `{${JSON.stringify(key)}:[`,
    toText: (item, i) => (i ? ',' : '') + toJsonText(item),
    close: ']}',
    onAbort,
  });
}
