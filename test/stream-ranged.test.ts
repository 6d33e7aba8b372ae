import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * A long stream in start-time order goes on after its first page by ranged pages (services/query
 * calls.ts: a cuts statement names where the next pages end, two are read side by side). Whatever
 * the cuts, the stream holds exactly the calls a full read finds, once each, in order: many calls
 * share a start time (so a cut falls inside a tie), a start sent twice is one call, deleted calls
 * are left out, both directions, after an offset, up to a limit, filtered on a start column,
 * projected.
 */
const P = 'stream/ranged';
const CALLS = 400;
const PAGE_ROWS = 7;

let weft: RunningWeft;
let api: Client;
interface Seeded {
  id: string;
  at: number;
  op: string;
}
const calls: Seeded[] = [];
const deleted = new Set<string>();

beforeAll(async () => {
  weft = await startWeft({ env: { WEFT_QUERY_PAGE_ROWS: String(PAGE_ROWS), WEFT_RATE_LIMIT_MAX: '0' } });
  api = new Client(weft.url, bearerAuth('test-key'));
  const t0 = Date.UTC(2026, 5, 1);
  for (let i = 0; i < CALLS; i++) {
    // 40 start times, ten calls each: every page boundary cuts through a tie of start times.
    calls.push({ id: `r-${String((i * 7919) % CALLS).padStart(4, '0')}`, at: t0 + Math.floor(i / 10) * 1000, op: i % 3 === 0 ? 'a' : 'b' });
  }
  const start = (c: Seeded) => ({
    mode: 'start',
    req: {
      start: { project_id: P, id: c.id, trace_id: c.id, op_name: c.op, started_at: new Date(c.at).toISOString(), inputs: { i: c.id } },
    },
  });
  const end = (c: Seeded) => ({
    mode: 'end',
    req: { end: { project_id: P, id: c.id, ended_at: new Date(c.at + 5).toISOString(), output: 'ok', summary: {} } },
  });
  for (let b = 0; b < CALLS; b += 100) {
    const batch = calls.slice(b, b + 100).flatMap((c) => [start(c), end(c)]);
    expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
  }
  // Every 13th start sent again (a replay: one call, two start rows until the engine folds them).
  const replayed = calls.filter((_, i) => i % 13 === 0).map(start);
  expect((await api.post('/call/upsert_batch', { batch: replayed })).status).toBe(200);
  for (const c of calls.filter((_, i) => i % 29 === 5)) deleted.add(c.id);
  expect((await api.post('/calls/delete', { project_id: P, call_ids: [...deleted] })).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await weft?.stop();
});

const expected = (direction: 'asc' | 'desc', op?: string) =>
  calls
    .filter((c) => !deleted.has(c.id) && (!op || c.op === op))
    .sort((x, y) => (direction === 'asc' ? x.at - y.at || (x.id < y.id ? -1 : 1) : y.at - x.at || (x.id < y.id ? 1 : -1)))
    .map((c) => c.id);

/** How many cuts statements the server has run (weft_store_statement_seconds). */
async function cutsRun(): Promise<number> {
  const text = await (await fetch(`${weft.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('weft_store_statement_seconds_count{') && l.includes('statement="calls.rangeCuts"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('a long stream read by ranged pages', () => {
  for (const direction of ['asc', 'desc'] as const) {
    it(`holds every call once, in order (${direction}), whole, after an offset, up to a limit, filtered and projected`, async () => {
      const before = await cutsRun();
      const whole = await api.jsonl<{ id: string; output: unknown; ended_at: string | null }>('/calls/stream_query', {
        project_id: P,
        sort_by: [{ field: 'started_at', direction }],
      });
      expect(whole.map((r) => r.id)).toEqual(expected(direction));
      // Each line whole: the end half joined in every page.
      expect(whole.every((r) => r.output === 'ok' && r.ended_at !== null)).toBe(true);
      // The ranged path ran (the first page is a keyset page; the rest need cuts).
      expect(await cutsRun()).toBeGreaterThan(before);

      const offset = await api.jsonl<{ id: string }>('/calls/stream_query', {
        project_id: P,
        sort_by: [{ field: 'started_at', direction }],
        offset: 45,
        columns: ['id'],
      });
      expect(offset.map((r) => r.id)).toEqual(expected(direction).slice(45));

      // A limit reads keyset pages (after an offset too).
      for (const [limit, from] of [
        [250, 0],
        [100, 45],
        [20, 0],
      ] as const) {
        const before = await cutsRun();
        const limited = await api.jsonl<{ id: string }>('/calls/stream_query', {
          project_id: P,
          sort_by: [{ field: 'started_at', direction }],
          limit,
          offset: from,
          columns: ['id'],
        });
        expect(limited.map((r) => r.id)).toEqual(expected(direction).slice(from, from + limit));
        expect(await cutsRun()).toBe(before);
      }

      const filtered = await api.jsonl<{ id: string; op_name: string }>('/calls/stream_query', {
        project_id: P,
        filter: { op_names: ['a'] },
        sort_by: [{ field: 'started_at', direction }],
        columns: ['id', 'op_name'],
      });
      expect(filtered.map((r) => r.id)).toEqual(expected(direction, 'a'));
      expect(Object.keys(filtered[0]!).sort()).toEqual(expect.arrayContaining(['id', 'op_name']));
    }, 60_000);
  }

  it('the default order is the ascending one', async () => {
    const rows = await api.jsonl<{ id: string }>('/calls/stream_query', { project_id: P, columns: ['id'] });
    expect(rows.map((r) => r.id)).toEqual(expected('asc'));
  });
});
