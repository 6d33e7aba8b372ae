import type { FastifyReply } from 'fastify';
import { toJsonText } from '@weft/digest';
import { logAbortedStream } from '@weft/http';

/**
 * Writes `{"<key>": [ ...items ]}` as the items arrive, with back-pressure, so a response of a
 * million table rows never exists whole in memory. The first item is pulled before the status
 * is sent, so an early error is still a clean error response.
 */
export async function sendJsonArrayObject(
  reply: FastifyReply,
  key: string,
  items: AsyncIterable<unknown>,
  onAbort: () => void,
): Promise<void> {
  const res = reply.raw;
  let closed = false;
  let n = 0;
  res.on('close', () => {
    if (!res.writableFinished && !closed) {
      closed = true;
      logAbortedStream(reply, n, 'client_gone');
      onAbort();
    }
  });
  const it = items[Symbol.asyncIterator]();
  const first = await it.next();
  reply.hijack();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  const write = async (chunk: string) => {
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => (res.off('drain', done), res.off('close', done), resolve());
        res.on('drain', done);
        res.on('close', done);
      });
    }
  };
  try {
    await write(`{${JSON.stringify(key)}:[`);
    for (let r = first; !r.done && !closed; r = await it.next()) await write((n++ ? ',' : '') + toJsonText(r.value));
    if (closed) await it.return?.();
    else res.end(']}');
  } catch (e) {
    if (!closed) {
      closed = true;
      logAbortedStream(reply, n, 'error', e);
    }
    res.destroy(e as Error);
  }
}
