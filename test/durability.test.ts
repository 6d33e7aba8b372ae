import { describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { newDataDir, startWeft } from './helpers/server';

// Both ways the all-in-one acknowledges a call write: once in its ingest log, or once inserted.
describe.each(['log', 'insert'])('durability of the all-in-one mode (WEFT_ACK_AFTER=%s)', (ackAfter) => {
  const env = { WEFT_ACK_AFTER: ackAfter };
  it('keeps data across a graceful restart on the same data directory', async () => {
    const dataDir = newDataDir('restart');
    const first = await startWeft({ dataDir, env });
    const api = new Client(first.url);
    const s = await api.post('/call/start', {
      start: { project_id: 'acme/restart', op_name: 'persist', started_at: '2024-01-01T00:00:00Z', inputs: { a: 1 }, attributes: {} },
    });
    expect(s.status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await startWeft({ dataDir, env });
    try {
      const rows = await new Client(second.url).jsonl('/calls/stream_query', { project_id: 'acme/restart' });
      expect(rows.map((r) => r.id)).toEqual([s.body.id]);
      expect(rows[0].inputs).toEqual({ a: 1 });
    } finally {
      await second.stop();
    }
  });

  it('loses nothing acknowledged when killed with SIGKILL mid-stream', async () => {
    const dataDir = newDataDir('kill9');
    const first = await startWeft({ dataDir, env });
    const api = new Client(first.url);
    const acked = new Set<string>();
    let stop = false;
    // Four concurrent writers keep posting until the process dies under them.
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `w${w}-${i}`;
        try {
          const r = await api.post('/call/upsert_batch', {
            batch: [
              {
                mode: 'start',
                req: {
                  start: {
                    project_id: 'acme/kill',
                    id,
                    trace_id: id,
                    op_name: 'k',
                    started_at: '2024-01-01T00:00:00Z',
                    inputs: {},
                    attributes: {},
                  },
                },
              },
            ],
          });
          if (r.status === 200) acked.add(id);
        } catch {
          return; // connection refused/reset: the server is gone
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (acked.size < 200) await new Promise((r) => setTimeout(r, 10));
    await first.kill();
    stop = true;
    await Promise.all(writers);

    const second = await startWeft({ dataDir, env });
    try {
      const api2 = new Client(second.url);
      const ids = new Set((await api2.jsonl('/calls/stream_query', { project_id: 'acme/kill', columns: ['id'] })).map((r) => r.id));
      const missing = [...acked].filter((id) => !ids.has(id));
      expect(missing).toEqual([]);
      expect(acked.size).toBeGreaterThanOrEqual(200);
    } finally {
      await second.stop();
    }
  });
});
