import type { FastifyReply } from 'fastify';
import { metrics } from '@weft/core';

/** Says that a stream ended before its last row: which request, how many rows it got, and why. */
export function logAbortedStream(reply: FastifyReply, rows: number, reason: 'client_gone' | 'error', err?: unknown): void {
  metrics.streamsAborted.inc({ reason });
  const { method, url, id } = reply.request;
  reply.log.warn(
    { method, url, reqId: id, rowsSent: rows, reason, ...(err ? { err } : {}) },
    reason === 'client_gone' ? 'stream aborted: the client went away' : 'stream aborted: error while streaming',
  );
}

/**
 * Writes an async sequence of objects as JSONL, honouring back-pressure: it waits for the
 * socket to drain before producing more, and stops (calling `onAbort`) when the client goes away.
 */
export async function sendJsonl(
  reply: FastifyReply,
  rows: AsyncIterable<unknown>,
  onAbort?: () => void,
  serialize: (value: unknown) => string = JSON.stringify,
): Promise<void> {
  return sendJsonlText(reply, rows, onAbort, (v) => serialize(v) + '\n');
}

/**
 * As sendJsonl, for items that are already JSONL text (whole lines, e.g. a page of lines built
 * by ClickHouse): written as they are.
 */
export async function sendJsonlText<T>(
  reply: FastifyReply,
  items: AsyncIterable<T>,
  onAbort?: () => void,
  toText: (item: T) => string | Buffer = (item) => item as unknown as Buffer,
): Promise<void> {
  const res = reply.raw;
  let aborted = false;
  let sent = 0;
  const abort = (why: 'client_gone' | 'error', err?: unknown) => {
    if (aborted) return;
    aborted = true;
    logAbortedStream(reply, sent, why, err);
    onAbort?.();
  };
  res.on('close', () => {
    if (!res.writableFinished) abort('client_gone');
  });
  const iterator = items[Symbol.asyncIterator]();
  // Pull the first row before committing to 200, so an early error is still a clean 4xx/5xx.
  const first = await iterator.next();
  reply.hijack();
  res.writeHead(200, { 'content-type': 'application/jsonl; charset=utf-8', 'cache-control': 'no-store' });
  try {
    for (let r = first; !r.done; r = await iterator.next()) {
      if (aborted) break;
      // Items: rows for sendJsonl, chunks of lines for sendJsonlText.
      sent++;
      if (!res.write(toText(r.value))) {
        await new Promise<void>((resolve) => {
          const done = () => (res.off('drain', done), res.off('close', done), resolve());
          res.on('drain', done);
          res.on('close', done);
        });
      }
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
  else res.end();
}
