import type { FastifyReply } from 'fastify';

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
  const abort = () => {
    if (!aborted) (aborted = true), onAbort?.();
  };
  res.on('close', () => {
    if (!res.writableFinished) abort();
  });
  const iterator = items[Symbol.asyncIterator]();
  // Pull the first row before committing to 200, so an early error is still a clean 4xx/5xx.
  const first = await iterator.next();
  reply.hijack();
  res.writeHead(200, { 'content-type': 'application/jsonl; charset=utf-8', 'cache-control': 'no-store' });
  try {
    for (let r = first; !r.done; r = await iterator.next()) {
      if (aborted) break;
      if (!res.write(toText(r.value))) {
        await new Promise<void>((resolve) => {
          const done = () => (res.off('drain', done), res.off('close', done), resolve());
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
  } catch (e) {
    abort();
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
