import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import type { Client } from './helpers/client';

/**
 * A team at once (docs/operations.md, "Lanes"): heavy requests are capped per project (429 with
 * Retry-After, another project unaffected), a request whose client goes away stops its
 * statements, and the lanes are visible on /metrics. The engine side (a small read beside two
 * long heavy statements, a killed statement leaving the engine's running list within 200 ms) is
 * libs/store/test/lanes.test.ts.
 */
let alice: TestKey;
let bob: TestKey;
const A = 'team/busy';
const B = 'team/quiet';
const CALLS = 24_000;
const { weft, api } = useWeft(
  // One heavy request per project at once, no wait for a turn: a second one at the same time is refused at once.
  { env: { WEFT_RATE_LIMIT_MAX: '0', WEFT_HEAVY_PER_PROJECT: '1', WEFT_HEAVY_PER_KEY: '8', WEFT_HEAVY_WAIT_MS: '0' } },
  async (admin) => {
    expect((await admin.post('/admin/entities/create', { name: 'team' })).status).toBe(200);
    alice = await createKey(admin, 'alice', ['team']);
    bob = await createKey(admin, 'bob', ['team']);
    const day = Date.parse('2026-11-01T00:00:00Z');
    for (let b = 0; b < CALLS / 2000; b++) {
      const batch = Array.from({ length: 2000 }, (_, i) => {
        const n = b * 2000 + i;
        const started = new Date(day + n * 60_000).toISOString();
        const ended = new Date(day + n * 60_000 + (n % 997)).toISOString();
        const start = {
          project_id: A,
          id: `c${n}`,
          trace_id: `t${n}`,
          op_name: `weave:///${A}/op/step${n % 7}:v1`,
          started_at: started,
          inputs: { text: `request ${n} about ${['billing', 'refunds', 'login', 'search'][n % 4]} ${'lorem ipsum '.repeat(20)}` },
          attributes: {},
        };
        const end = { project_id: A, id: `c${n}`, ended_at: ended, output: { ok: n % 5 !== 0 }, summary: {} };
        return [
          { mode: 'start', req: { start } },
          { mode: 'end', req: { end } },
        ];
      }).flat();
      const r = await clientFor(admin, alice).post('/call/upsert_batch', { batch });
      expect(r.status, r.text.slice(0, 300)).toBe(200);
    }
    const small = await clientFor(admin, bob).post('/call/upsert_batch', {
      batch: [
        {
          mode: 'start',
          req: {
            start: {
              project_id: B,
              id: 'q1',
              trace_id: 'q1',
              op_name: 'quiet',
              started_at: new Date(day).toISOString(),
              inputs: {},
              attributes: {},
            },
          },
        },
        { mode: 'end', req: { end: { project_id: B, id: 'q1', ended_at: new Date(day + 5).toISOString(), output: 1, summary: {} } } },
      ],
    });
    expect(small.status, small.text).toBe(200);
  },
);
const as = (k: TestKey): Client => clientFor(api, k);

const ANALYTICS = (project: string) => ({
  project_id: project,
  dimensions: ['op', 'time', 'inputs.text'],
  metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms'],
  bucket: 'day',
});

async function metric(name: string, lane: string): Promise<number> {
  const text = await (await fetch(`${weft.url}/metrics`)).text();
  const m = new RegExp(`^${name}\\{lane="${lane}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('a team at once', () => {
  it('a project past its heavy cap gets 429 with Retry-After naming the limit; another project is unaffected', async () => {
    const sent = await Promise.all([
      ...Array.from({ length: 4 }, () => as(alice).post('/analytics/query', ANALYTICS(A))),
      as(bob).post('/analytics/query', ANALYTICS(B)),
    ]);
    const busy = sent.slice(0, 4);
    const refused = busy.filter((r) => r.status === 429);
    expect(busy.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(busy.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(r.body.reason).toMatch(/project team\/busy already runs 1 \(WEFT_HEAVY_PER_PROJECT\)/);
    }
    // The other project's request ran: its own cap, its own figures.
    expect(sent[4]!.status, sent[4]!.text).toBe(200);
    expect(sent[4]!.body.rows.map((r: Record<string, unknown>) => r.count)).toEqual([1]);
    expect(busy.find((r) => r.status === 200)!.body.rows.length).toBeGreaterThan(0);
    // Every call stored and counted (the heavy lane answers the same figures).
    const perOp = await as(alice).post('/analytics/query', { project_id: A, dimensions: ['op'], metrics: ['count'] });
    expect(perOp.body.rows.reduce((n: number, r: Record<string, number>) => n + r.count!, 0)).toBe(CALLS);
    // A turn is given back when its request ends: one at a time, every request is answered.
    for (let i = 0; i < 3; i++) expect((await as(alice).post('/analytics/query', ANALYTICS(A))).status).toBe(200);
    const text = await (await fetch(`${weft.url}/metrics`)).text();
    expect(text).toMatch(/weft_lane_refused_total\{lane="heavy",reason="project_cap"\} [1-9]/);
  });

  it('an export whose client goes away stops its statements; the lane is free again at once', async () => {
    const before = await metric('weft_lane_cancelled_total', 'heavy');
    const abort = new AbortController();
    const r = await fetch(`${weft.url}/calls/export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`api:${alice.key}`).toString('base64')}` },
      body: JSON.stringify({ project_id: A, format: 'jsonl' }),
      signal: abort.signal,
    });
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    await reader.read();
    abort.abort();
    await expect.poll(() => metric('weft_lane_cancelled_total', 'heavy'), { timeout: 2000, interval: 20 }).toBeGreaterThan(before);
    await expect.poll(() => metric('weft_lane_running', 'heavy'), { timeout: 200, interval: 20 }).toBe(0);
    // Nothing left behind: the next heavy request of the project gets its turn at once.
    expect((await as(alice).post('/analytics/query', ANALYTICS(A))).status).toBe(200);
  });

  it('every route names its lane: the interactive routes answer while heavy ones run', async () => {
    const heavy = Array.from({ length: 2 }, () =>
      as(bob).post('/analytics/query', { ...ANALYTICS(A), metrics: ['count', 'latency_p99_ms'] }),
    );
    const small = await as(bob).post('/calls/query_stats', { project_id: B });
    expect(small.status, small.text).toBe(200);
    expect(small.body.count).toBe(1);
    for (const r of await Promise.all(heavy)) expect([200, 429]).toContain(r.status);
  });

  it("a search's pages and count take turns in the heavy lane; a page by keys takes none there", async () => {
    const heavyTurns = () => metric('weft_lane_wait_seconds_count', 'heavy');
    const query = {
      $expr: { $contains: { input: { $getField: 'inputs.text' }, substr: { $literal: 'REFUNDS' }, case_insensitive: true } },
    };
    const before = await heavyTurns();
    const found = await as(alice).jsonl<{ id: string }>('/calls/stream_query', {
      project_id: A,
      limit: 5,
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      query,
    });
    expect(found.map((c) => c.id)).toEqual([CALLS - 3, CALLS - 7, CALLS - 11, CALLS - 15, CALLS - 19].map((n) => `c${n}`));
    const counted = await as(alice).post('/calls/query_stats', { project_id: A, query });
    expect(counted.body.count).toBe(CALLS / 4);
    const afterSearch = await heavyTurns();
    expect(afterSearch - before).toBeGreaterThanOrEqual(2);
    const page = await as(alice).jsonl<{ id: string }>('/calls/stream_query', {
      project_id: A,
      limit: 5,
      sort_by: [{ field: 'started_at', direction: 'desc' }],
    });
    expect(page).toHaveLength(5);
    expect(await heavyTurns()).toBe(afterSearch);
  });

  it("heavy work runs at its lane's nice value while a person reads, at the process's own alone", async () => {
    const heavyYields = async () => {
      const text = await (await fetch(`${weft.url}/metrics`)).text();
      const count = (yielded: string) =>
        Number(new RegExp(`^weft_lane_yield_total\\{lane="heavy",yielded="${yielded}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return { yes: count('yes'), no: count('no') };
    };
    // Alone: no one's statement for longer than the window (the request's own key lookup asks no one to yield).
    await new Promise((r) => setTimeout(r, 1200));
    const before = await heavyYields();
    expect((await as(alice).post('/analytics/query', ANALYTICS(B))).status).toBe(200);
    const alone = await heavyYields();
    expect(alone.no).toBeGreaterThan(before.no);
    expect(alone.yes).toBe(before.yes);
    // Beside a person paging through calls: the same request yields.
    let reading = true;
    const person = (async () => {
      while (reading) await as(bob).jsonl('/calls/stream_query', { project_id: B, limit: 5 });
    })();
    await new Promise((r) => setTimeout(r, 200));
    expect((await as(alice).post('/analytics/query', ANALYTICS(B))).status).toBe(200);
    reading = false;
    await person;
    expect((await heavyYields()).yes).toBeGreaterThan(alone.yes);
  });
});
