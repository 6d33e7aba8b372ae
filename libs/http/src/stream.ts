import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { metrics } from '@weft/core';
import { toJsonText } from '@weft/digest';

/**
 * Writes a chunk; when the socket's buffer is full, waits until it drains (or the client goes
 * away). The one back-pressure rule of every streamed response: produce no faster than the
 * client reads.
 */
export async function writeOrWait(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  if (res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Says that a stream ended before its last item: which request, how many items it got, and why. */
export function logAbortedStream(reply: FastifyReply, items: number, reason: 'client_gone' | 'error', err?: unknown): void {
  metrics.streamsAborted.inc({ reason });
  const { method, url, id } = reply.request;
  reply.log.warn(
    { method, url, reqId: id, rowsSent: items, reason, ...(err ? { err } : {}) },
    reason === 'client_gone' ? 'stream aborted: the client went away' : 'stream aborted: error while streaming',
  );
}

export interface StreamFraming<T> {
  contentType: string;
  /** One item's text, given its index (e.g. a separator before every item but the first). */
  toText: (item: T, index: number) => string | Buffer;
  /** Written before the first item, and after the last one when the stream completes. */
  open?: string;
  close?: string;
  /** Called once when the client goes away or producing fails: stop the producer's work. */
  onAbort?: () => void;
  /** More response headers (e.g. content-disposition for a download). */
  headers?: Record<string, string>;
}

/**
 * Streams an async sequence as one 200 response, honouring back-pressure. The first item is
 * pulled before the status is sent, so an early error is still a clean 4xx/5xx; after that, a
 * failure or a vanished client ends the response (logged and counted) and stops the producer.
 */
export async function sendStream<T>(reply: FastifyReply, items: AsyncIterable<T>, framing: StreamFraming<T>): Promise<void> {
  const res = reply.raw;
  let aborted = false;
  let sent = 0;
  const abort = (why: 'client_gone' | 'error', err?: unknown) => {
    if (aborted) return;
    aborted = true;
    logAbortedStream(reply, sent, why, err);
    framing.onAbort?.();
  };
  // Gone before the last item was written. (An in-process request, fastify's inject as the MCP
  // tools make, closes its response once ended, before `finish`: that is no abort.)
  res.on('close', () => {
    if (!res.writableFinished && !res.writableEnded) abort('client_gone');
  });
  const iterator = items[Symbol.asyncIterator]();
  const first = await iterator.next();
  reply.hijack();
  res.writeHead(200, { ...framing.headers, 'content-type': framing.contentType, 'cache-control': 'no-store' });
  try {
    if (framing.open) await writeOrWait(res, framing.open);
    for (let r = first; !r.done; r = await iterator.next()) {
      if (aborted) break;
      await writeOrWait(res, framing.toText(r.value, sent));
      sent++;
    }
  } catch (e) {
    abort('error', e);
    res.destroy(e as Error);
    return;
  } finally {
    if (aborted) await iterator.return?.();
  }
  // A client that went away may leave a half-open socket: ending the response would keep it
  // alive (and keep the server from closing); destroying it frees it.
  if (aborted) res.destroy();
  else res.end(framing.close);
}

// The streamed responses' formats: JSONL (objects, or text already in lines) and one JSON object holding an array.
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
