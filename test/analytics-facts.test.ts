import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * Analytics facts (libs/query call-facts.ts) change where /analytics/query reads a settled day's
 * calls, never what it answers. Two servers take the same writes: one builds facts (a pass every
 * 300 ms, days settled at once), the other never does and reads the call tables. Every query
 * answers the same on both — after the build, after a late child's usage lands under an old
 * day's parent, after a deletion and a physical delete — and the first really reads facts.
 */
const P = 'facts/p';
const DAY = 86_400_000;
const BASE = Date.UTC(2026, 5, 1);

let withFacts: RunningWeft;
let without: RunningWeft;
let a: Client;
let b: Client;
/** Per server, a key per user (u0, u1, u2): a call's svc_user_id is its writer's. */
const users: Record<string, TestKey>[] = [{}, {}];

beforeAll(async () => {
  [withFacts, without] = await Promise.all([
    startWeft({ env: { WEFT_ANALYTICS_FACTS_INTERVAL_MS: '300', WEFT_ANALYTICS_FACTS_SETTLE_MS: '0', WEFT_RATE_LIMIT_MAX: '0' } }),
    startWeft({ env: { WEFT_ANALYTICS_FACTS_INTERVAL_MS: '0', WEFT_RATE_LIMIT_MAX: '0' } }),
  ]);
  a = new Client(withFacts.url, bearerAuth('test-key'));
  b = new Client(without.url, bearerAuth('test-key'));
  for (const [i, c] of [a, b].entries()) {
    expect((await c.post('/admin/entities/create', { name: 'facts' })).status).toBe(200);
    for (const u of ['u0', 'u1', 'u2']) users[i]![u] = await createKey(c, u, ['facts']);
  }
}, 180_000);
afterAll(async () => {
  await Promise.all([withFacts?.stop(), without?.stop()]);
});

const iso = (ms: number) => new Date(ms).toISOString();
const usage = (model: string, n: number) => ({
  [model]: { requests: n, prompt_tokens: 100 * n, completion_tokens: 20 * n, total_tokens: 120 * n },
});
const sum = (...us: Record<string, any>[]) => {
  const out: Record<string, any> = {};
  for (const u of us)
    for (const [m, c] of Object.entries(u)) {
      const t = (out[m] ??= { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      for (const k of Object.keys(t)) t[k] += c[k];
    }
  return out;
};
function call(id: string, op: string, parent: string | null, trace: string, at: number, ms: number, extra: Record<string, any> = {}) {
  return [
    {
      mode: 'start',
      req: {
        start: {
          project_id: P,
          id,
          trace_id: trace,
          parent_id: parent,
          op_name: op,
          started_at: iso(at),
          inputs: {},
          attributes: {},
        },
      },
    },
    {
      mode: 'end',
      req: {
        end: {
          project_id: P,
          id,
          ended_at: iso(at + ms),
          summary: extra.usage ? { usage: extra.usage } : {},
          ...(extra.error ? { exception: extra.error } : {}),
        },
      },
    },
  ];
}

/** A child that arrives after the build, under a day-2 trace whose summary already counted it. */
const LATE_PARENT = 't2-1';
const LATE = usage('gpt-4o-mini', 7);

/** Ten days of SDK-shaped traces, each written by one of three users: agent → (llm, tool → llm), the parent's summary rolling its children's usage up. */
function traces(): Record<string, unknown[]> {
  const byUser: Record<string, unknown[]> = { u0: [], u1: [], u2: [] };
  for (let d = 0; d < 10; d++)
    for (let t = 0; t < 6; t++) {
      // One trace a day starts just before midnight: its children land on the next day.
      const at = t === 5 ? BASE + (d + 1) * DAY - 500 : BASE + d * DAY + t * 3_600_000;
      const tr = `t${d}-${t}`;
      const model = t % 2 ? 'gpt-4o' : 'gpt-4o-mini';
      const u1 = usage(model, 1);
      const u2 = usage('gpt-4o', t + 1);
      const batch = byUser[`u${t % 3}`]!;
      batch.push(...call(`${tr}-llm1`, 'weave:///facts/p/op/llm:v1', `${tr}-agent`, tr, at + 100, 300 + t * 17, { usage: u1 }));
      batch.push(...call(`${tr}-llm2`, 'weave:///facts/p/op/llm:v1', `${tr}-tool`, tr, at + 600, 200 + d * 13, { usage: u2 }));
      batch.push(...call(`${tr}-tool`, 'tool', `${tr}-agent`, tr, at + 500, 500, { usage: u2, error: t === 3 ? 'boom' : undefined }));
      // A call still running (no end yet): no latency, in every latency figure's count of ended calls.
      if (t === 0) batch.push(call(`${tr}-pending`, 'pending', null, `${tr}-p`, at + 50, 0)[0]!);
      batch.push(
        ...call(`${tr}-agent`, 'weave:///facts/p/op/agent:v2', null, tr, at, 1500 + d * 100 + t, {
          usage: tr === LATE_PARENT ? sum(u1, u2, LATE) : sum(u1, u2),
        }),
      );
    }
  return byUser;
}

const QUERIES: Record<string, unknown>[] = [
  { dimensions: ['op', 'time'], bucket: 'day', metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'cost'] },
  { dimensions: ['model'], metrics: ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'] },
  { dimensions: ['op', 'model'], metrics: ['count', 'total_tokens'] },
  { dimensions: ['time', 'status'], bucket: 'day', metrics: ['count'] },
  { dimensions: ['op', 'status'], metrics: ['count', 'latency_p50_ms'], top: { dimension: 'op', n: 2 } },
  { dimensions: ['time'], bucket: 'auto', metrics: ['count', 'latency_p90_ms', 'latency_p95_ms'], filter: { trace_roots_only: true } },
  {
    dimensions: ['op'],
    metrics: [
      'count',
      'errors',
      'error_rate',
      'latency_min_ms',
      'latency_avg_ms',
      'latency_max_ms',
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'cost',
    ],
    top: { dimension: 'op', n: 2 },
  },
  { dimensions: ['parent_op', 'is_root'], metrics: ['count', 'requests'] },
  { dimensions: ['svc_user_id'], metrics: ['count', 'distinct_traces', 'cost'] },
  { dimensions: [], metrics: ['count', 'distinct_users', 'total_tokens'], filter: { trace_roots_only: true } },
  { dimensions: ['time'], bucket: 'hour', metrics: ['count', 'total_tokens'], filter: { op_names: ['weave:///facts/p/op/llm:*'] } },
  { dimensions: ['op'], metrics: ['count', 'cost'], from: iso(BASE + 3 * DAY), to: iso(BASE + 6 * DAY) },
  // A metric added as one row of the catalogue (@weft/analytics): the calls without an end.
  { dimensions: ['op', 'time'], bucket: 'day', metrics: ['running', 'count'] },
];

/**
 * Every query's rows on one server, comparable across the two: users by name (ids are each
 * server's own), floats to 12 significant digits (a sum of costs in another order differs in
 * its last bit), rows in one order.
 */
async function answers(c: Client): Promise<unknown[]> {
  const names = new Map(Object.entries(users[c === a ? 0 : 1]!).map(([name, k]) => [k.user_id, name]));
  const out: unknown[] = [];
  for (const q of QUERIES) {
    const r = await c.post('/analytics/query', { project_id: P, limit: 1000, ...q });
    expect(r.status, r.text).toBe(200);
    const rows = (r.body.rows as Record<string, unknown>[]).map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [
          k,
          k === 'svc_user_id' && typeof v === 'string' ? names.get(v) : typeof v === 'number' ? Number(v.toPrecision(12)) : v,
        ]),
      ),
    );
    out.push(rows.map((x) => JSON.stringify(x)).sort());
  }
  return out;
}

/** The same batch to both servers, written by `user`. */
async function both(batch: unknown[], user = 'u0'): Promise<void> {
  for (const [i, c] of [a, b].entries())
    expect((await clientFor(c, users[i]![user]!).post('/call/upsert_batch', { batch })).status).toBe(200);
}

const factsReads = async () => {
  const text = (await a.request('GET', '/metrics')).text;
  return Number(/weft_analytics_queries_total\{source="facts"\} (\d+)/.exec(text)?.[1] ?? 0);
};
const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec((await a.request('GET', '/metrics')).text)?.[1] ?? 0);
const builds = () => metric('weft_analytics_facts_build_seconds_count');

/** Waits until the facts server has built every day with calls (11: the last traces cross into day 11), after a build past `after`. */
async function factsCurrent(after = 0): Promise<void> {
  await expect.poll(builds, { timeout: 30_000, interval: 200 }).toBeGreaterThan(after);
  await expect.poll(() => metric('weft_analytics_facts_days'), { timeout: 30_000, interval: 200 }).toBe(11);
}

describe('analytics facts', () => {
  it('answer exactly as the call tables do, and are read once built', async () => {
    for (const [user, batch] of Object.entries(traces())) await both(batch, user);
    await factsCurrent();
    const before = await factsReads();
    const [fa, fb] = [await answers(a), await answers(b)];
    expect(fa).toEqual(fb);
    // Every query of the list reads only fact columns: each one read facts.
    expect((await factsReads()) - before).toBe(QUERIES.length);
    // A sanity check that the list asks something: the SDK-shaped usage counted once.
    const byModel = (fb[1] as string[]).map((x) => JSON.parse(x) as { model: string; requests: number });
    expect(byModel.find((r) => r.model === 'gpt-4o')!.requests).toBe(10 * (3 + 21));
    // Nothing written since: a pass reads the engine's counters only, not the calls (the next
    // test shows a write after that is built again).
    const scans = async () =>
      Number(
        /weft_store_statement_seconds_count\{[^}]*statement="facts\.project_days"[^}]*\} (\d+)/.exec(
          (await a.request('GET', '/metrics')).text,
        )?.[1],
      );
    await new Promise((r) => setTimeout(r, 1000));
    const idle = await scans();
    expect(idle).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await scans()).toBe(idle);
  });

  it('a late child under an old day’s parent, a deletion: the same answers before and after the rebuild', async () => {
    await factsCurrent();
    const built = await builds();
    // A child with usage started four days after its parent (a long-running agent on day 2),
    // arriving now; its parent's summary already had it: day 2's own usage changes too.
    await both(
      call('late-llm', 'weave:///facts/p/op/llm:v1', `${LATE_PARENT}-agent`, LATE_PARENT, BASE + 6 * DAY + 50, 90, { usage: LATE }),
    );
    for (const c of [a, b]) expect((await c.post('/calls/delete', { project_id: P, call_ids: ['t4-0-llm2'] })).status).toBe(200);
    // At once (the touched days read from the call tables) …
    expect(await answers(a)).toEqual(await answers(b));
    // … and once those days are built again.
    await factsCurrent(built);
    expect(await answers(a)).toEqual(await answers(b));
  });

  it('a price added after the build: costs at the new price at once, and after the rebuild', async () => {
    await factsCurrent();
    const built = await builds();
    // From day 5 on, gpt-4o costs this project ten times the default.
    const costs = { 'gpt-4o': { prompt_token_cost: 0.00003, completion_token_cost: 0.0001, effective_date: iso(BASE + 5 * DAY) } };
    for (const c of [a, b]) expect((await c.post('/cost/create', { project_id: P, costs })).status).toBe(200);
    const [fa, fb] = [await answers(a), await answers(b)];
    expect(fa).toEqual(fb);
    await factsCurrent(built);
    expect(await answers(a)).toEqual(fb);
  });

  it('a physical delete (a data-subject request) leaves no fact of its calls behind', async () => {
    await factsCurrent();
    const built = await builds();
    const jobs: string[] = [];
    for (const [i, c] of [a, b].entries()) {
      const r = await c.post('/user_data/delete', { svc_user_id: users[i]!.u1!.user_id });
      expect(r.status, r.text).toBe(200);
      jobs.push(r.body.job_id);
    }
    for (const [i, c] of [a, b].entries())
      await expect
        .poll(async () => (await c.post('/deletion/status', { job_id: jobs[i] })).body.state, { timeout: 60_000, interval: 300 })
        .toBe('done');
    expect(await answers(a)).toEqual(await answers(b));
    const left = (await a.post('/analytics/query', { project_id: P, dimensions: ['svc_user_id'], metrics: ['count'] })).body.rows;
    expect(left.map((r: { svc_user_id: string }) => r.svc_user_id).sort()).toEqual([users[0]!.u0!.user_id, users[0]!.u2!.user_id].sort());
    await factsCurrent(built);
    expect(await answers(a)).toEqual(await answers(b));
  });

  it('days a few writes touched since their build: their facts less the touched calls, those from the call tables, at once', async () => {
    await factsCurrent();
    // The same store, every day built, served by a process whose next build is an hour away: the
    // writes below stay unbuilt, and the days they touch are read patched.
    await withFacts.stop();
    withFacts = await startWeft({
      dataDir: withFacts.dataDir,
      env: { WEFT_ANALYTICS_FACTS_INTERVAL_MS: '3600000', WEFT_ANALYTICS_FACTS_SETTLE_MS: '0', WEFT_RATE_LIMIT_MAX: '0' },
    });
    a = new Client(withFacts.url, bearerAuth('test-key'));
    // Its first pass (a second after the start) over, finding every day current.
    const passes = async () =>
      Number(
        /weft_store_statement_seconds_count\{[^}]*statement="facts\.project_days"[^}]*\} (\d+)/.exec(
          (await a.request('GET', '/metrics')).text,
        )?.[1] ?? 0,
      );
    await expect.poll(passes, { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);
    expect(await builds()).toBe(0);
    const patched = async () =>
      Number(/weft_analytics_queries_total\{source="patched"\} (\d+)/.exec((await a.request('GET', '/metrics')).text)?.[1] ?? 0);
    const check = async () => {
      const before = await patched();
      expect(await answers(a)).toEqual(await answers(b));
      // Every query of the list read the patched days' facts.
      expect((await patched()) - before).toBe(QUERIES.length);
    };
    // A new call on day 7; a late child with usage under a day-3 parent; the end of a call still
    // running on day 6 (with usage); a deletion on day 8; a start replayed on day 2.
    await both(
      call('new-root', 'weave:///facts/p/op/agent:v2', null, 'new-t', BASE + 7 * DAY + 7_200_000, 640, { usage: usage('gpt-4o', 2) }),
    );
    await both(
      call('late-2', 'weave:///facts/p/op/llm:v1', 't3-1-agent', 't3-1', BASE + 3 * DAY + 3_700_000, 75, { usage: usage('gpt-4o', 3) }),
      'u1',
    );
    await both([
      {
        mode: 'end',
        req: {
          end: { project_id: P, id: 't6-0-pending', ended_at: iso(BASE + 6 * DAY + 9_000), summary: { usage: usage('gpt-4o-mini', 4) } },
        },
      },
    ]);
    for (const c of [a, b]) expect((await c.post('/calls/delete', { project_id: P, call_ids: ['t8-2-tool'] })).status).toBe(200);
    await both(
      [call('t2-4-llm1', 'weave:///facts/p/op/llm:v1', 't2-4-agent', 't2-4', BASE + 2 * DAY + 4 * 3_600_000 + 100, 300 + 4 * 17)[0]!],
      'u1',
    );
    await check();
    // The answers stay right as more writes come (each one read at once).
    await both(call('new-root-2', 'tool', 'new-root', 'new-t', BASE + 7 * DAY + 7_200_100, 30, { error: 'late boom' }));
    await check();
  });

  it('today while it is written: built a segment at a time (the newest calls, never the whole day again), exact throughout', async () => {
    await withFacts.stop();
    withFacts = await startWeft({
      dataDir: withFacts.dataDir,
      env: { WEFT_ANALYTICS_FACTS_INTERVAL_MS: '300', WEFT_ANALYTICS_FACTS_SETTLE_MS: '1500', WEFT_RATE_LIMIT_MAX: '0' },
    });
    a = new Client(withFacts.url, bearerAuth('test-key'));
    const today = {
      dimensions: ['op', 'status'],
      metrics: ['count', 'latency_p50_ms', 'total_tokens', 'cost'],
      from: iso(Date.now() - DAY),
    };
    const reads = async (source: string) =>
      Number(
        new RegExp(`weft_analytics_queries_total\\{source="${source}"\\} (\\d+)`).exec((await a.request('GET', '/metrics')).text)?.[1] ?? 0,
      );
    await factsCurrent();
    const builtBefore = await metric('weft_analytics_facts_built_calls_total');
    const factReadsBefore = await reads('facts');
    // A trace every 300 ms for six seconds, each started now: the day never settles (its last
    // call always just started), yet its calls are built 1.5 s after they start, a range at a time.
    const until = Date.now() + 6000;
    let written = 0;
    for (let n = 0; Date.now() < until; n++) {
      const at = Date.now();
      await both([
        ...call(`live-${n}-agent`, 'weave:///facts/p/op/agent:v2', null, `live-${n}`, at, 40, {
          usage: sum(usage('gpt-4o', 1), usage('gpt-4o-mini', 2)),
        }),
        ...call(`live-${n}-llm`, 'weave:///facts/p/op/llm:v1', `live-${n}-agent`, `live-${n}`, at + 5, 20, {
          usage: usage('gpt-4o-mini', 2),
        }),
      ]);
      written += 2;
      const [ra, rb] = await Promise.all([a, b].map((c) => c.post('/analytics/query', { project_id: P, ...today })));
      // Floats to 12 significant digits (costs summed in another order differ in the last bit).
      const round = (rows: Record<string, unknown>[]) =>
        rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(12)) : v])));
      expect(round(ra!.body.rows)).toEqual(round(rb!.body.rows));
      await new Promise((r) => setTimeout(r, 300));
    }
    // Today's settled calls were read from facts while the newest came from the call tables.
    expect((await reads('facts')) - factReadsBefore).toBeGreaterThan(0);
    await expect
      .poll(() => metric('weft_analytics_facts_built_calls_total'), { timeout: 10_000, interval: 200 })
      .toBeGreaterThanOrEqual(builtBefore + written);
    // Each call built a few times at most (its range, then merges), not once per pass: rebuilding
    // the whole day every pass would build ~10 times the calls written here.
    expect((await metric('weft_analytics_facts_built_calls_total')) - builtBefore).toBeLessThan(4 * written);
    expect(await answers(a)).toEqual(await answers(b));
  });
});
