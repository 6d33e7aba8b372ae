import { describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { clientFor, createKey } from './helpers/keys';
import { newDataDir, startWeft } from './helpers/server';

/**
 * SIGKILL in the middle of a stream of acknowledged writes, restart on the same data
 * directory, and find every acknowledged write. Each kind of write is one entry of
 * WRITE_KINDS: a writer that returns what it got acknowledged, and a check of what the
 * restarted server holds: calls (through the bus), objects, table rows and feedback
 * (synchronous writes).
 */
interface WriteKind {
  name: string;
  /** One write; the id acknowledged (HTTP 200), or null when refused. Throws once the server is gone. */
  write(api: Client, n: number): Promise<string | null>;
  /** Of `acked`, those not found (or not complete) after the restart. */
  missing(api: Client, acked: string[]): Promise<string[]>;
}

const P = 'crash/p';
const TS = '2024-07-01T00:00:00Z';
/** sha256 of nothing: the digest of the empty table, a valid base for appends. */
const EMPTY_TABLE = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

async function callsById(api: Client, ids: string[]): Promise<Map<string, { ended_at: string | null; output: unknown }>> {
  const found = new Map<string, { ended_at: string | null; output: unknown }>();
  // call_ids takes at most 1,000 ids per request.
  for (let at = 0; at < ids.length; at += 1000) {
    const call_ids = ids.slice(at, at + 1000);
    const rows = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids }, columns: ['id', 'ended_at', 'output'] });
    for (const r of rows) found.set(r.id, r);
  }
  return found;
}

const WRITE_KINDS: WriteKind[] = [
  {
    name: 'call start',
    async write(api, n) {
      const id = `start-${n}`;
      const r = await api.post('/call/start', {
        start: { project_id: P, id, trace_id: id, op_name: 'crash', started_at: TS, inputs: { n } },
      });
      return r.status === 200 ? id : null;
    },
    async missing(api, acked) {
      const found = await callsById(api, acked);
      return acked.filter((id) => !found.has(id));
    },
  },
  {
    name: 'call start + end',
    async write(api, n) {
      const id = `ended-${n}`;
      const s = await api.post('/call/start', { start: { project_id: P, id, trace_id: id, op_name: 'crash', started_at: TS } });
      if (s.status !== 200) return null;
      const e = await api.post('/call/end', { end: { project_id: P, id, ended_at: TS, output: { n } } });
      return e.status === 200 ? id : null;
    },
    async missing(api, acked) {
      const found = await callsById(api, acked);
      return acked.filter((id) => found.get(id)?.ended_at == null);
    },
  },
  {
    name: 'upsert batch (start and end)',
    async write(api, n) {
      const ids = [0, 1, 2].map((k) => `batch-${n}-${k}`);
      const batch = ids.flatMap((id) => [
        { mode: 'start', req: { start: { project_id: P, id, trace_id: id, op_name: 'crash', started_at: TS } } },
        { mode: 'end', req: { end: { project_id: P, id, ended_at: TS, output: 'done' } } },
      ]);
      const r = await api.post('/call/upsert_batch', { batch });
      return r.status === 200 ? ids.join(',') : null;
    },
    async missing(api, acked) {
      const ids = acked.flatMap((a) => a.split(','));
      const found = await callsById(api, ids);
      return ids.filter((id) => found.get(id)?.output !== 'done');
    },
  },
  {
    name: 'object version',
    async write(api, n) {
      const r = await api.post('/obj/create', { obj: { project_id: P, object_id: `obj-${n}`, val: { n, text: 'crash' } } });
      return r.status === 200 ? `obj-${n}:${r.body.digest}` : null;
    },
    async missing(api, acked) {
      const missing: string[] = [];
      for (const a of acked) {
        const [object_id, digest] = a.split(':');
        const r = await api.post('/obj/read', { project_id: P, object_id, digest });
        if (r.status !== 200 || r.body.obj?.val?.text !== 'crash') missing.push(a);
      }
      return missing;
    },
  },
  {
    name: 'table row',
    async write(api, n) {
      const r = await api.post('/table/update', { project_id: P, base_digest: EMPTY_TABLE, updates: [{ append: { row: { n } } }] });
      return r.status === 200 ? `${r.body.digest}:${r.body.updated_row_digests[0]}` : null;
    },
    async missing(api, acked) {
      const missing: string[] = [];
      for (const a of acked) {
        const [digest, rowDigest] = a.split(':');
        const r = await api.post('/table/query', { project_id: P, digest });
        if (r.status !== 200 || r.body.rows?.[0]?.digest !== rowDigest) missing.push(a);
      }
      return missing;
    },
  },
  {
    name: 'feedback',
    async write(api, n) {
      const r = await api.post('/feedback/replace', {
        project_id: P,
        svc_ref: `weave:///${P}/call/fb-${n}`,
        feedback_type: 'custom',
        payload: { n },
        feedback_id: `none-${n}`,
      });
      return r.status === 200 ? r.body.id : null;
    },
    async missing(api, acked) {
      const r = await api.post('/feedback/query', { project_id: P, fields: ['id'] });
      const found = new Set((r.body.result ?? []).map((f: { id: string }) => f.id));
      return acked.filter((id) => !found.has(id));
    },
  },
];

describe('crash safety', () => {
  it('finds every acknowledged write after a SIGKILL mid-stream', async () => {
    const dataDir = newDataDir('crash');
    const first = await startWeft({ dataDir });
    // A member key, itself written before the crash: it must survive too.
    const key = await createKey(new Client(first.url), 'writer', ['crash']);
    const api = clientFor(new Client(first.url), key);

    const acked = new Map<string, string[]>(WRITE_KINDS.map((k) => [k.name, []]));
    let stop = false;
    let n = 0;
    const writer = async (kind: WriteKind) => {
      while (!stop) {
        try {
          const id = await kind.write(api, n++);
          if (id) acked.get(kind.name)!.push(id);
        } catch {
          return; // connection refused or reset: the server is gone
        }
      }
    };
    // Two concurrent writers per kind, killed once each kind has a fair number acknowledged.
    const writers = WRITE_KINDS.flatMap((k) => [writer(k), writer(k)]);
    const enough = () => [...acked.values()].every((ids) => ids.length >= 25);
    const deadline = Date.now() + 60_000;
    while (!enough() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await first.kill();
    stop = true;
    await Promise.all(writers);
    expect(enough()).toBe(true);

    const second = await startWeft({ dataDir });
    try {
      const api2 = clientFor(new Client(second.url), key);
      for (const kind of WRITE_KINDS) {
        expect(await kind.missing(api2, acked.get(kind.name)!), kind.name).toEqual([]);
      }
    } finally {
      await second.stop();
    }
  }, 180_000);
});

describe('crash safety of the all-in-one ingest log (WEFT_ACK_AFTER=log)', () => {
  it('stores after a SIGKILL and a restart the calls it had acknowledged from its log and not yet inserted, each once', async () => {
    const dataDir = newDataDir('crash-log');
    // A window far longer than the test: nothing acknowledged is inserted before the kill.
    const first = await startWeft({ dataDir, env: { WEFT_LOG_FLUSH_MS: '600000', WEFT_LOG_BATCH_ROWS: '1000000' } });
    const api = new Client(first.url);
    const ids: string[] = [];
    for (let r = 0; r < 20; r++) {
      const batch = Array.from({ length: 10 }, (_, i) => `logged-${r}-${i}`);
      const res = await api.post('/call/upsert_batch', {
        batch: batch.flatMap((id) => [
          { mode: 'start', req: { start: { project_id: P, id, trace_id: id, op_name: 'logged', started_at: TS } } },
          { mode: 'end', req: { end: { project_id: P, id, ended_at: TS, output: 'done' } } },
        ]),
      });
      expect(res.status).toBe(200);
      ids.push(...batch);
    }
    await first.kill();

    const second = await startWeft({ dataDir });
    try {
      const api2 = new Client(second.url);
      const found = await callsById(api2, ids);
      expect(ids.filter((id) => found.get(id)?.output !== 'done')).toEqual([]);
      const stats = await api2.post('/calls/query_stats', { project_id: P, filter: { op_names: ['logged'] } });
      expect(stats.body.count).toBe(ids.length);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
