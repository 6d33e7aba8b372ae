import { describe, expect, it } from 'vitest';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, type Reply } from './helpers/client';
import { newDataDir, startWeft } from './helpers/server';

const P = 'disk/p';
const TS = '2024-07-01T00:00:00Z';
/** The largest file the server may write (KiB): its ingest log's segment fills long before 64 MiB. */
const LIMIT_KIB = 2048;

/** A batch of `n` finished calls of ~1 KB, ids `<prefix>-<i>`. */
function batch(prefix: string, n: number) {
  const items = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${i}`;
    items.push(
      {
        mode: 'start',
        req: { start: { project_id: P, id, trace_id: id, op_name: 'disk', started_at: TS, inputs: { pad: 'x'.repeat(900) } } },
      },
      { mode: 'end', req: { end: { project_id: P, id, ended_at: TS, output: { i }, summary: {} } } },
    );
  }
  return { batch: items };
}

async function storedIds(api: Client, prefix: string): Promise<string[]> {
  const rows = await api.jsonl('/calls/stream_query', { project_id: P, columns: ['id'] });
  return rows.map((r: { id: string }) => r.id).filter((id: string) => id.startsWith(prefix));
}

/**
 * The all-in-one's ingest log on a disk that fills up: the kernel refuses the log's write
 * (EFBIG under `ulimit -f`, as ENOSPC on a full disk), and the write is refused with 503
 * "not stored" while everything acknowledged before it is stored, the server keeps serving
 * reads, and the log holds no torn frame: a smaller write that still fits is logged after the
 * last whole frame, and a restart on the same data directory opens the log, stores nothing
 * refused and nothing twice, and takes writes again.
 */
describe('the ingest log when the disk is full', () => {
  it('refuses the write it cannot log (503, not stored), keeps everything acknowledged, and restarts cleanly', async () => {
    const dataDir = newDataDir('disk-full');
    const limited = await startWeft({ dataDir, fileSizeLimitKiB: LIMIT_KIB });
    const acked: string[] = [];
    const refused: string[] = [];
    let refusal: Reply<{ reason: string }> | null = null;
    try {
      const api = new Client(limited.url);
      // ~250 KB of log per request: the 2 MiB segment fills within ~10 requests.
      for (let r = 0; r < 40 && !refusal; r++) {
        const res = await api.post('/call/upsert_batch', batch(`r${r}`, 100));
        const ids = Array.from({ length: 100 }, (_, i) => `r${r}-${i}`);
        if (res.status === 200) acked.push(...ids);
        else {
          refusal = res;
          refused.push(...ids);
        }
      }
      expect(refusal, 'a write past the file limit must be refused').not.toBeNull();
      expect(refusal!.status).toBe(503);
      expect(refusal!.body.reason).toMatch(/write failed.*not stored/);
      expect(refusal!.headers.get('retry-after')).not.toBeNull();
      expect(acked.length).toBeGreaterThan(0);
      // The refused write was cut back off the segment, so a small one still fits and is logged
      // right after the last whole frame (a torn frame left before it would lose it on restart).
      const small = await api.post('/call/upsert_batch', batch('small', 1));
      expect(small.status).toBe(200);
      acked.push('small-0');
      // Still serving: reads answer, and show exactly what was acknowledged.
      expect([...(await storedIds(api, 'r')), ...(await storedIds(api, 'small'))].sort()).toEqual([...acked].sort());
      // The segment was cut back to its last whole frame (no partial write left behind).
      const logDir = join(dataDir, 'ingest-log', 'weft.call-parts');
      const segments = readdirSync(logDir).filter((f) => f.endsWith('.log'));
      for (const f of segments) expect(statSync(join(logDir, f)).size).toBeLessThanOrEqual(LIMIT_KIB * 1024);
      // The refusal is logged and counted.
      expect(limited.logs.some((l) => (l as { msg?: string }).msg === 'local log: append failed')).toBe(true);
      const metrics = await (await fetch(`${limited.url}/metrics`)).text();
      expect(metrics).toMatch(/weft_bus_rejected_total\{reason="error"\} [1-9]/);
    } finally {
      await limited.stop();
    }

    // Restart without the limit: the log opens (no torn frame), nothing refused or doubled.
    const again = await startWeft({ dataDir });
    try {
      const api = new Client(again.url);
      const stored = [...(await storedIds(api, 'r')), ...(await storedIds(api, 'small'))];
      expect(stored.length).toBe(acked.length);
      expect(new Set(stored)).toEqual(new Set(acked));
      for (const id of refused) expect(stored).not.toContain(id);
      const res = await api.post('/call/upsert_batch', batch('after', 10));
      expect(res.status).toBe(200);
      expect((await storedIds(api, 'after')).length).toBe(10);
    } finally {
      await again.stop();
    }
  });
});
