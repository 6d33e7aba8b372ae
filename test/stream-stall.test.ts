import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { upsertBatch, eventually } from './helpers/pipeline';
import { useWeft } from './helpers/fixture';

/**
 * A stalled /calls/stream_query client holds neither the embedded engine nor the server's memory:
 * the stream is paged (bounded queries, one page fetched ahead), the socket's back-pressure stops
 * the producer, so writes and other reads go on while the client dawdles; then it vanishes and
 * the stream is aborted, not finished into a buffer.
 */
const { weft, api } = useWeft();
const Q = 'qa/stall';
const ROWS = 4_000;
const PAD = 'z'.repeat(3_000);

/** Opens a stream, reads its first chunk, then stops reading (the socket's buffers fill up). */
function stalledReader(body: unknown): Promise<{ req: ClientRequest; res: IncomingMessage; first: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${weft.url}/calls/stream_query`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: api.authorization! } },
      (res) => {
        res.once('data', (chunk: Buffer) => {
          res.pause();
          resolve({ req, res, first: chunk.length });
        });
      },
    );
    req.on('error', (e) => (e.message.includes('socket hang up') || e.message.includes('aborted') ? undefined : reject(e)));
    req.end(JSON.stringify(body));
  });
}

const aborts = () => weft.logs.filter((l) => (l as { msg?: string }).msg === 'stream aborted: the client went away').length;

describe('a stalled stream client', () => {
  it('does not hold the engine: inserts and reads run while it dawdles, and its vanishing aborts the stream', async () => {
    // ~12 MB of lines: far more than the socket buffers hold, so the producer must wait for the client.
    for (let b = 0; b < ROWS / 500; b++) {
      const body = upsertBatch(
        Q,
        Array.from({ length: 500 }, (_, i) => `c-${b}-${String(i).padStart(3, '0')}`),
      ) as { batch: { req: { start?: { inputs: unknown } } }[] };
      for (const item of body.batch) if (item.req.start) item.req.start.inputs = { pad: PAD };
      expect((await api.post('/call/upsert_batch', body)).status).toBe(200);
    }
    const abortsBefore = aborts();
    const stalled = await stalledReader({ project_id: Q });
    expect(stalled.first).toBeGreaterThan(0);
    // Let the server run into the full socket.
    await new Promise((r) => setTimeout(r, 1_500));

    // Meanwhile a write and reads complete (bounds generous for a shared machine; a held engine never answers).
    const t0 = performance.now();
    expect((await api.post('/call/upsert_batch', upsertBatch(Q, ['late-one']))).status).toBe(200);
    const count = await api.post('/calls/query_stats', { project_id: Q });
    expect(count.body.count).toBe(ROWS + 1);
    const one = await api.jsonl<{ id: string }>('/calls/stream_query', { project_id: Q, filter: { call_ids: ['late-one'] } });
    expect(one.map((c) => c.id)).toEqual(['late-one']);
    expect(performance.now() - t0).toBeLessThan(20_000);

    // The stalled stream was held by back-pressure, not finished into a buffer: it is still open,
    // and its client's vanishing is an abort (logged), with fewer rows sent than the project has.
    expect(stalled.res.complete).toBe(false);
    expect(aborts()).toBe(abortsBefore);
    stalled.req.destroy();
    await eventually(async () => aborts() > abortsBefore, 20_000, 'the stalled stream aborted');
    // rowsSent counts the socket writes (chunks of at most 256 KiB of lines).
    const line = weft.logs.filter((l) => (l as { msg?: string }).msg === 'stream aborted: the client went away').at(-1) as {
      rowsSent: number;
    };

    // And the next full stream is whole; the stalled one had sent a fraction of it.
    const all = await api.post('/calls/stream_query', { project_id: Q });
    expect(all.status).toBe(200);
    const lines = all.text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(ROWS + 1);
    expect(line.rowsSent * 256 * 1024).toBeLessThan(all.text.length / 2);
  }, 180_000);
});
