import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { ensureWeaveSdk, WEAVE_SDKS, weaveUserEnv } from './helpers/weave-sdk';
import { ensurePythonVenv } from './helpers/python-venv';
import type { Client } from './helpers/client';

/**
 * Analytics over calls: totals that count each LLM request once (the Weave SDK's rolled-up
 * summaries and OTLP spans alike), and /analytics/query's figures checked against what
 * /calls/stream_query returns for the same calls.
 */
const SDK = WEAVE_SDKS[0];
const DAY = 86_400_000;

let alice: TestKey;
let bob: TestKey;
let carol: TestKey;
const { weft, api } = useWeft({ env: { WEFT_RATE_LIMIT_MAX: '0' } }, async (admin) => {
  expect((await admin.post('/admin/entities/create', { name: 'an' })).status).toBe(200);
  alice = await createKey(admin, 'alice', ['an']);
  bob = await createKey(admin, 'bob', ['an']);
  expect((await admin.post('/admin/entities/create', { name: 'elsewhere' })).status).toBe(200);
  carol = await createKey(admin, 'carol', ['elsewhere']);
});
const as = (k: TestKey): Client => clientFor(api, k);

type Call = Record<string, any>;
const usageOf = (calls: Call[], pick: (c: Call) => boolean) => {
  const t = { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const c of calls.filter(pick))
    for (const u of Object.values((c.summary?.usage ?? {}) as Record<string, Record<string, number>>)) {
      const prompt = (u.prompt_tokens ?? 0) + (u.input_tokens ?? 0);
      const completion = (u.completion_tokens ?? 0) + (u.output_tokens ?? 0);
      t.requests += u.requests ?? 0;
      t.prompt_tokens += prompt;
      t.completion_tokens += completion;
      t.total_tokens += u.total_tokens || prompt + completion;
    }
  return t;
};
const costOf = (calls: Call[]) => {
  let cost = 0;
  for (const c of calls)
    for (const k of Object.values((c.summary?.weave?.costs ?? {}) as Record<string, Record<string, number>>))
      cost += (k.prompt_tokens_total_cost ?? 0) + (k.completion_tokens_total_cost ?? 0);
  return cost;
};

/** Runs a Python script with the pinned Weave SDK against the server, as a new user would (base URL and key only). */
async function runWeave(key: TestKey, project: string, script: string): Promise<string> {
  const python = await ensureWeaveSdk(SDK);
  const scratch = mkdtempSync(join(TEST_ROOT, 'analytics-sdk-'));
  writeFileSync(join(scratch, 'script.py'), script);
  const env = weaveUserEnv({ scratch, baseUrl: weft.url, apiKey: key.key, project });
  return new Promise((resolve, reject) => {
    const child = spawn(python, [join(scratch, 'script.py')], { cwd: scratch, env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`exit ${code}: ${output.slice(-4000)}`))));
  });
}

// Two traces: two levels (step → llm) and three (agent → step → llm, agent → llm). The SDK rolls
// each child's usage into its parent's summary: summing every call counts 600 tokens for 360.
const NESTED_SCRIPT = `
import os, weave
client = weave.init(os.environ["WEFT_PROJECT"])

@weave.op
def llm(prompt: str, model: str) -> dict:
    return {"model": model, "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}, "text": prompt.upper()}

@weave.op
def step(q: str) -> str:
    return llm(q, "gpt-4o")["text"]

@weave.op
def agent(q: str) -> str:
    step(q)
    return llm(q, "gpt-4o-mini")["text"]

step("two levels")
agent("three levels")
client.flush()
print("done")
`;

describe('totals count each LLM request once', () => {
  it('Weave SDK traces of two and three levels: /calls/aggregate and /analytics/query count the leaves, not the roll-ups', async () => {
    const P = 'an/sdk-nested';
    await runWeave(alice, P, NESTED_SCRIPT);
    const calls = await as(alice).jsonl('/calls/stream_query', { project_id: P, include_costs: true });
    expect(calls).toHaveLength(6);
    const isLlm = (c: Call) => /\/op\/llm:/.test(c.op_name);
    // The roll-up is there: the root of the three-level trace carries both requests.
    const agentRoot = calls.find((c) => /\/op\/agent:/.test(c.op_name))!;
    expect(Object.values(agentRoot.summary.usage as Record<string, { requests: number }>).reduce((s, u) => s + u.requests, 0)).toBe(2);
    expect(usageOf(calls, () => true).total_tokens).toBe(840); // what summing every call said
    const exact = usageOf(calls, isLlm);
    expect(exact).toEqual({ requests: 3, prompt_tokens: 300, completion_tokens: 60, total_tokens: 360 });

    const aggReply = await as(alice).post('/calls/aggregate', { project_id: P });
    expect(aggReply.status, aggReply.text).toBe(200);
    const agg = aggReply.body;
    expect(agg.totals).toMatchObject({ calls: 6, prompt_tokens: 300, completion_tokens: 60, total_tokens: 360 });
    expect(agg.totals.cost).toBeGreaterThan(0);
    expect(agg.totals.cost).toBeCloseTo(costOf(calls.filter(isLlm)), 12);
    const byModel = Object.fromEntries(agg.by_model.map((m: Call) => [m.model, m]));
    expect(byModel['gpt-4o']).toMatchObject({ calls: 2, requests: 2, total_tokens: 240 });
    expect(byModel['gpt-4o-mini']).toMatchObject({ calls: 1, requests: 1, total_tokens: 120 });
    // Per op: only llm used tokens of its own.
    for (const op of agg.by_op as Call[]) expect(op.total_tokens, op.op_name).toBe(/\/op\/llm:/.test(op.op_name) ? 360 : 0);

    const q = await as(alice).post('/analytics/query', {
      project_id: P,
      dimensions: ['op'],
      metrics: ['count', 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'],
      order_by: [{ field: 'op', direction: 'asc' }],
    });
    expect(q.status, q.text).toBe(200);
    expect(q.body.rows.map((r: Call) => [r.op, r.count, r.requests, r.total_tokens])).toEqual([
      ['agent', 1, 0, 0],
      ['llm', 3, 3, 360],
      ['step', 2, 0, 0],
    ]);
    const byModelQ = await as(alice).post('/analytics/query', {
      project_id: P,
      dimensions: ['model'],
      metrics: ['count', 'requests', 'total_tokens', 'cost'],
      order_by: [{ field: 'model', direction: 'asc' }],
    });
    expect(byModelQ.body.rows.map((r: Call) => [r.model, r.count, r.requests, r.total_tokens])).toEqual([
      ['gpt-4o', 2, 2, 240],
      ['gpt-4o-mini', 1, 1, 120],
      [null, 3, 0, 0],
    ]);
    const totalCost = byModelQ.body.rows.reduce((s: number, r: Call) => s + r.cost, 0);
    expect(totalCost).toBeCloseTo(agg.totals.cost, 12);
  }, 600_000);

  it("the same totals whether a call's end came with its start (one whole part) or alone, as SDKs before calls_complete send it", async () => {
    // agent → step → llm-a (gpt-4o), agent → llm-b (gpt-4o-mini); summaries rolled up as the SDK
    // does. llm-a and agent arrive whole (start and end in one batch); step and llm-b as a start
    // batch and, later, an end batch.
    const P = 'an/split-parts';
    const u = (model: string, n: number) => ({
      [model]: { requests: n, prompt_tokens: 100 * n, completion_tokens: 20 * n, total_tokens: 120 * n },
    });
    const start = (id: string, op: string, parent: string | null) => ({
      mode: 'start',
      req: {
        start: {
          project_id: P,
          id,
          trace_id: 'tr',
          parent_id: parent,
          op_name: op,
          started_at: '2026-03-01T00:00:00Z',
          inputs: {},
          attributes: {},
        },
      },
    });
    const end = (id: string, usage: Record<string, unknown>) => ({
      mode: 'end',
      req: { end: { project_id: P, id, ended_at: '2026-03-01T00:00:01Z', summary: { usage } } },
    });
    const both = { ...u('gpt-4o', 1), ...u('gpt-4o-mini', 1) };
    const post = (batch: unknown[]) => as(alice).post('/call/upsert_batch', { batch });
    expect((await post([start('step', 'step', 'agent'), start('llm-b', 'llm', 'agent')])).status).toBe(200);
    expect((await post([start('llm-a', 'llm', 'step'), end('llm-a', u('gpt-4o', 1))])).status).toBe(200);
    expect((await post([end('step', u('gpt-4o', 1)), end('llm-b', u('gpt-4o-mini', 1))])).status).toBe(200);
    expect((await post([start('agent', 'agent', null), end('agent', both)])).status).toBe(200);
    await expect.poll(async () => (await as(alice).post('/calls/query_stats', { project_id: P })).body.count).toBe(4);

    const agg = (await as(alice).post('/calls/aggregate', { project_id: P })).body;
    expect(agg.totals).toMatchObject({ calls: 4, prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 });
    const q = await as(alice).post('/analytics/query', {
      project_id: P,
      dimensions: ['op', 'model'],
      metrics: ['count', 'requests', 'total_tokens'],
      order_by: [{ field: 'op', direction: 'asc' }],
    });
    expect(q.status, q.text).toBe(200);
    expect(q.body.rows.map((r: Call) => [r.op, r.model, r.count, r.requests, r.total_tokens])).toEqual([
      ['agent', null, 1, 0, 0],
      ['llm', 'gpt-4o', 1, 1, 120],
      ['llm', 'gpt-4o-mini', 1, 1, 120],
      ['step', null, 1, 0, 0],
    ]);
  });

  it('OTLP spans: usage on the LLM spans, none on their parents, each counted once', async () => {
    const P = 'an/otlp';
    const traceId = 'a1'.repeat(16);
    const at = (ms: number) => String(BigInt(Date.UTC(2026, 0, 5, 10)) * 1_000_000n + BigInt(ms) * 1_000_000n);
    const span = (id: string, parent: string | null, name: string, ms: number, attrs: Record<string, number | string>) => ({
      traceId,
      spanId: id.repeat(8),
      ...(parent ? { parentSpanId: parent.repeat(8) } : {}),
      name,
      kind: 1,
      startTimeUnixNano: at(ms),
      endTimeUnixNano: at(ms + 100),
      attributes: Object.entries(attrs).map(([key, v]) => ({
        key,
        value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
      })),
    });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] },
          scopeSpans: [
            {
              scope: { name: 't' },
              spans: [
                span('01', null, 'invoke_agent', 0, { 'gen_ai.operation.name': 'invoke_agent' }),
                span('02', '01', 'chat gpt-4o', 10, {
                  'gen_ai.operation.name': 'chat',
                  'gen_ai.request.model': 'gpt-4o',
                  'gen_ai.usage.input_tokens': 70,
                  'gen_ai.usage.output_tokens': 7,
                }),
                span('03', '01', 'chat gpt-4o', 20, {
                  'gen_ai.operation.name': 'chat',
                  'gen_ai.request.model': 'gpt-4o',
                  'gen_ai.usage.input_tokens': 30,
                  'gen_ai.usage.output_tokens': 3,
                }),
              ],
            },
          ],
        },
      ],
    };
    const r = await as(alice).raw('/otel/v1/traces', JSON.stringify(body), { 'content-type': 'application/json', project_id: P });
    expect(r.status, r.text).toBe(200);
    const calls = await as(alice).jsonl('/calls/stream_query', { project_id: P });
    expect(calls).toHaveLength(3);
    const aggReply = await as(alice).post('/calls/aggregate', { project_id: P });
    expect(aggReply.status, aggReply.text).toBe(200);
    const agg = aggReply.body;
    expect(agg.totals).toMatchObject({ calls: 3, prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 });
    const q = await as(alice).post('/analytics/query', { project_id: P, metrics: ['count', 'requests', 'prompt_tokens', 'total_tokens'] });
    expect(q.body).toEqual({ rows: [{ count: 3, requests: 2, prompt_tokens: 100, total_tokens: 110 }], truncated: false });
  });
});

/** Exact quantile with linear interpolation between the closest ranks (numpy's default; ClickHouse's quantileExactInclusive). */
function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  return s[lo]! + (h - lo) * ((s[Math.min(lo + 1, s.length - 1)] ?? s[lo]!) - s[lo]!);
}

describe('/analytics/query', () => {
  const P = 'an/shop';
  const now = Date.now();
  const startOfDay = (ms: number) => ms - (ms % DAY);
  let seeded = false;

  /**
   * Calls over five days by two users: `retrieve` (attribute tier), `tool` (attribute
   * model_version, some failing), `llm` (usage, a model per version); each batch sent twice
   * (replays), then one call deleted and one renamed.
   */
  async function seed(): Promise<void> {
    if (seeded) return;
    seeded = true;
    for (const [who, key] of [
      [0, alice],
      [1, bob],
    ] as const) {
      const batch: unknown[] = [];
      for (let i = 0; i < 60; i++) {
        const id = `0199bbbb-000${who}-7000-8000-${String(i).padStart(12, '0')}`;
        const started = startOfDay(now) - (i % 5) * DAY + 3_600_000 + i * 60_000;
        const op = ['retrieve', 'tool', 'llm'][i % 3]!;
        const start = {
          project_id: P,
          id,
          trace_id: `t-${who}-${Math.floor(i / 3)}`,
          parent_id: op === 'retrieve' ? null : `0199bbbb-000${who}-7000-8000-${String(i - (i % 3)).padStart(12, '0')}`,
          op_name: op,
          started_at: new Date(started).toISOString(),
          attributes: op === 'retrieve' ? { tier: i % 2 ? 'pro' : 'free' } : { model_version: `v${(i % 4) + 1}` },
          inputs: { q: `question ${i}`, n: i },
        };
        const end = {
          project_id: P,
          id,
          ended_at: new Date(started + 10 + ((i * 37 + who * 11) % 500)).toISOString(),
          output: { score: (i % 10) / 10 },
          exception: op === 'tool' && i % 4 === 1 ? 'ValueError: boom' : null,
          summary:
            op === 'llm'
              ? { usage: { [i % 2 ? 'gpt-4o' : 'gpt-4o-mini']: { prompt_tokens: 100 + i, completion_tokens: 10 + who, requests: 1 } } }
              : {},
        };
        batch.push({ mode: 'start', req: { start } }, { mode: 'end', req: { end } });
      }
      for (let n = 0; n < 2; n++) expect((await as(key).post('/call/upsert_batch', { batch })).status).toBe(200);
    }
    expect((await as(alice).post('/calls/delete', { project_id: P, call_ids: ['0199bbbb-0000-7000-8000-000000000004'] })).status).toBe(200);
    expect(
      (
        await as(alice).post('/call/update', {
          project_id: P,
          call_id: '0199bbbb-0000-7000-8000-000000000007',
          display_name: 'renamed',
        })
      ).status,
    ).toBe(200);
  }

  const all = async (body: Record<string, unknown> = {}) =>
    as(alice).jsonl('/calls/stream_query', { project_id: P, include_costs: true, ...body });
  const query = async (body: Record<string, unknown>) => {
    const r = await as(alice).post('/analytics/query', { project_id: P, ...body });
    expect(r.status, r.text).toBe(200);
    return r.body as { rows: Call[]; truncated: boolean; bucket_seconds?: number; totals?: any };
  };
  const latency = (c: Call) => c.summary.weave.latency_ms as number;
  const day = (c: Call) => new Date(startOfDay(Date.parse(c.started_at))).toISOString();
  const groupBy = <K extends string>(calls: Call[], key: (c: Call) => K) => {
    const m = new Map<K, Call[]>();
    for (const c of calls) m.set(key(c), [...(m.get(key(c)) ?? []), c]);
    return m;
  };

  it('a count per op equals /calls/query_stats for the same filter, replays, deletions and renames included', async () => {
    await seed();
    const q = await query({ dimensions: ['op_name'], metrics: ['count'] });
    expect(q.rows.length).toBe(3);
    for (const r of q.rows) {
      const stats = await as(alice).post('/calls/query_stats', { project_id: P, filter: { op_names: [r.op_name] } });
      expect(r.count, r.op_name).toBe(stats.body.count);
    }
    expect(q.rows.reduce((s, r) => s + r.count, 0)).toBe(119);
    const filtered = await query({
      metrics: ['count'],
      query: { $expr: { $eq: [{ $getField: 'attributes.tier' }, { $literal: 'pro' }] } },
    });
    const stats = await as(alice).post('/calls/query_stats', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'attributes.tier' }, { $literal: 'pro' }] } },
    });
    expect(filtered.rows).toEqual([{ count: stats.body.count }]);
  });

  it('example 1: p95 latency of retrieve per customer tier per day, last 30 days', async () => {
    await seed();
    const q = await query({
      dimensions: ['time', 'attributes.tier'],
      metrics: ['latency_p95_ms', 'count'],
      filter: { op_names: ['retrieve'] },
      from: new Date(now - 30 * DAY).toISOString(),
      bucket: 'day',
    });
    const calls = (await all({ filter: { op_names: ['retrieve'] } })).filter((c) => Date.parse(c.started_at) >= now - 30 * DAY);
    const expected = [...groupBy(calls, (c) => `${day(c)}|${c.attributes.tier}`)].map(([k, cs]) => ({
      time: k.split('|')[0],
      'attributes.tier': k.split('|')[1],
      latency_p95_ms: quantile(cs.map(latency), 0.95),
      count: cs.length,
    }));
    expect(q.rows.length).toBe(expected.length);
    for (const e of expected) {
      const row = q.rows.find((r) => r.time === e.time && r['attributes.tier'] === e['attributes.tier']);
      expect(row, JSON.stringify(e)).toBeDefined();
      expect(row!.count).toBe(e.count);
      expect(row!.latency_p95_ms).toBeCloseTo(e.latency_p95_ms!, 9);
    }
    // Ordered by time by default.
    expect(q.rows.map((r) => r.time)).toEqual([...q.rows.map((r) => r.time)].sort());
  });

  it('example 2: cost and tokens by user this week', async () => {
    await seed();
    const from = new Date(startOfDay(now) - 6 * DAY).toISOString();
    const q = await query({ dimensions: ['svc_user_id'], metrics: ['cost', 'total_tokens', 'requests'], from });
    const calls = (await all()).filter((c) => c.started_at >= from);
    const users = groupBy(calls, (c) => c.svc_user_id as string);
    expect(q.rows.length).toBe(users.size);
    for (const [user, cs] of users) {
      const row = q.rows.find((r) => r.svc_user_id === user)!;
      expect(row.cost).toBeGreaterThan(0);
      expect(row.cost).toBeCloseTo(costOf(cs), 12);
      expect(row.total_tokens).toBe(usageOf(cs, () => true).total_tokens);
      expect(row.requests).toBe(usageOf(cs, () => true).requests);
    }
    expect(new Set(q.rows.map((r) => r.svc_user_id))).toEqual(new Set([alice.user_id, bob.user_id]));
  });

  it('example 3: error rate of tool calls by model version', async () => {
    await seed();
    const q = await query({
      dimensions: ['attributes.model_version'],
      metrics: ['error_rate', 'errors', 'count'],
      filter: { op_names: ['tool'] },
    });
    const calls = await all({ filter: { op_names: ['tool'] } });
    const versions = groupBy(calls, (c) => c.attributes.model_version as string);
    expect(q.rows.length).toBe(versions.size);
    for (const [v, cs] of versions) {
      const row = q.rows.find((r) => r['attributes.model_version'] === v)!;
      const errors = cs.filter((c) => c.exception !== null).length;
      expect(row).toMatchObject({ count: cs.length, errors });
      expect(row.error_rate).toBeCloseTo(errors / cs.length, 12);
    }
    expect(q.rows.some((r) => r.errors > 0)).toBe(true);
  });

  it('example 4: p50/p99 latency and cost per op and day, and numeric paths', async () => {
    await seed();
    const q = await query({
      dimensions: ['op', 'time'],
      metrics: ['latency_p50_ms', 'latency_p99_ms', 'latency_max_ms', 'cost', 'avg(output.score)', 'sum(inputs.n)'],
      order_by: [{ field: 'op', direction: 'asc' }],
    });
    const calls = await all();
    const groups = groupBy(calls, (c) => `${c.op_name}|${day(c)}`);
    expect(q.rows.length).toBe(groups.size);
    for (const [k, cs] of groups) {
      const [op, time] = k.split('|');
      const row = q.rows.find((r) => r.op === op && r.time === time)!;
      expect(row.latency_p50_ms).toBeCloseTo(quantile(cs.map(latency), 0.5)!, 9);
      expect(row.latency_p99_ms).toBeCloseTo(quantile(cs.map(latency), 0.99)!, 9);
      expect(row.latency_max_ms).toBe(Math.max(...cs.map(latency)));
      expect(row.cost).toBeCloseTo(costOf(cs), 12);
      expect(row['avg(output.score)']).toBeCloseTo(cs.reduce((s, c) => s + c.output.score, 0) / cs.length, 12);
      expect(row['sum(inputs.n)']).toBe(cs.reduce((s, c) => s + c.inputs.n, 0));
    }
    expect(q.rows.map((r) => r.op)).toEqual([...q.rows.map((r) => r.op)].sort());
  });

  it('top n folds the other values into one row; limit truncates and says so', async () => {
    await seed();
    const q = await query({
      dimensions: ['op'],
      metrics: ['count'],
      top: { dimension: 'op', n: 1 },
      order_by: [{ field: 'count', direction: 'desc' }],
    });
    const counts = [...groupBy(await all(), (c) => c.op_name as string).values()].map((cs) => cs.length).sort((a, b) => b - a);
    // The other ops together outnumber the top one: ordered by count, "other" comes first.
    expect(q.rows).toEqual([
      { op: '__other__', count: counts[1]! + counts[2]! },
      { op: expect.any(String), count: counts[0] },
    ]);
    // bucket auto: a round width for at most 120 buckets over the calls matched, said in the answer.
    const auto = await query({ dimensions: ['time'], metrics: ['count'], bucket: 'auto' });
    expect(auto.bucket_seconds).toBe(3600);
    expect(auto.rows.reduce((s, r) => s + r.count, 0)).toBe(119);
    const cut = await query({ dimensions: ['trace_id'], metrics: ['count'], limit: 5 });
    expect(cut.rows).toHaveLength(5);
    expect(cut.truncated).toBe(true);
    const whole = await query({ dimensions: ['is_root', 'parent_op'], metrics: ['count', 'distinct_traces'] });
    expect(whole.truncated).toBe(false);
    const roots = whole.rows.find((r) => r.is_root === true)!;
    expect(roots.parent_op).toBeNull();
    expect(whole.rows.filter((r) => r.is_root === false).map((r) => r.parent_op)).toEqual(['retrieve']);
  });

  it('totals: every metric over all the calls matched, whatever the groups, their top and their limit', async () => {
    await seed();
    const metrics = ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'total_tokens', 'cost', 'distinct_traces'];
    const alone = (await query({ metrics })).rows[0]!;
    expect(alone.count).toBe((await all()).length);
    const bodies: Record<string, unknown>[] = [
      // Grouped and cut: one row kept, the rest folded, and still the totals of every call.
      { dimensions: ['op', 'status'], top: { dimension: 'op', n: 1 }, limit: 1 },
      // A row per model of the usage.
      { dimensions: ['model'] },
      { dimensions: ['time'], bucket: 'auto' },
      { dimensions: ['attributes.tier'] },
      { dimensions: [] },
    ];
    for (const body of bodies) {
      const q = await query({ ...body, metrics, totals: true });
      expect(Object.keys(q.totals), JSON.stringify(body)).toEqual(metrics);
      for (const m of metrics) expect(q.totals[m], `${m} ${JSON.stringify(body)}`).toBeCloseTo(alone[m], 9);
    }
    expect((await query({ dimensions: ['op', 'status'], top: { dimension: 'op', n: 1 }, limit: 1, metrics, totals: true })).truncated).toBe(
      true,
    );
    // A filter narrows the totals as it narrows the rows.
    const tools = await query({ dimensions: ['status'], metrics: ['count'], filter: { op_names: ['tool'] }, totals: true });
    expect(tools.totals.count).toBe(tools.rows.reduce((s, r) => s + Number(r.count), 0));
    expect(tools.totals.count).toBeLessThan(alone.count);
    // Not asked for: not answered.
    expect((await query({ dimensions: ['op'], metrics: ['count'] })).totals).toBeUndefined();
  });

  it('running: the calls without an end yet, per op, as counted from the calls themselves (a metric added as one catalogue row)', async () => {
    const R = 'an/running';
    const batch: unknown[] = [];
    for (let i = 0; i < 12; i++) {
      const id = `0199cccc-0000-7000-8000-${String(i).padStart(12, '0')}`;
      const started = now - 3_600_000 + i * 1000;
      const start = {
        project_id: R,
        id,
        trace_id: `r-${i}`,
        op_name: i % 3 ? 'fetch' : 'plan',
        started_at: new Date(started).toISOString(),
      };
      batch.push({ mode: 'start', req: { start } });
      // Every fifth call, and the fetches after the eighth, have not ended.
      if (i % 5 !== 0 && !(i > 8 && i % 3))
        batch.push({ mode: 'end', req: { end: { project_id: R, id, ended_at: new Date(started + 50).toISOString() } } });
    }
    expect((await as(alice).post('/call/upsert_batch', { batch })).status).toBe(200);
    const calls = await as(alice).jsonl('/calls/stream_query', { project_id: R });
    expect(calls).toHaveLength(12);
    const raw = new Map<string, number>();
    for (const c of calls) raw.set(c.op_name, (raw.get(c.op_name) ?? 0) + (c.ended_at === null ? 1 : 0));
    const r = await as(alice).post('/analytics/query', {
      project_id: R,
      dimensions: ['op_name'],
      metrics: ['running', 'count'],
      totals: true,
    });
    expect(r.status, r.text).toBe(200);
    expect(Object.fromEntries(r.body.rows.map((x: { op_name: string; running: number }) => [x.op_name, x.running]))).toEqual(
      Object.fromEntries(raw),
    );
    expect(r.body.totals.running).toBe([...raw.values()].reduce((a, b) => a + b, 0));
    expect(r.body.totals.running).toBe(4);
  });

  it('a batch (a dashboard in one request): each query answered as it is alone, a bad one with its own error, fewer scans', async () => {
    await seed();
    const queries: Record<string, unknown>[] = [
      // Over the same calls and groups: one scan, the top folded from it.
      { dimensions: ['op'], metrics: ['cost'], top: { dimension: 'op', n: 2 }, limit: 2000 },
      { dimensions: ['op'], metrics: ['count', 'errors', 'latency_p50_ms', 'total_tokens', 'cost'], limit: 2000 },
      { dimensions: ['op', 'status'], metrics: ['count'], top: { dimension: 'op', n: 2 }, limit: 2000 },
      { dimensions: ['op', 'status'], metrics: ['errors', 'running'], limit: 2000 },
      { dimensions: ['time', 'status'], metrics: ['count', 'running'], bucket: 'auto', limit: 2000 },
      { dimensions: ['model'], metrics: ['prompt_tokens', 'completion_tokens'], limit: 2000 },
      { dimensions: ['op'], metrics: ['nope'] },
      // A quantile does not add up: its top is the engine's.
      { dimensions: ['op'], metrics: ['latency_p99_ms', 'count'], top: { dimension: 'op', n: 1 } },
      // The totals ride with the queries over the same calls.
      { dimensions: [], metrics: ['count', 'errors', 'latency_p50_ms', 'cost'], totals: true },
      { dimensions: ['op'], metrics: ['count'], filter: { op_names: ['tool'] }, limit: 2000 },
      { dimensions: ['op'], metrics: ['count'], limit: 1 },
    ];
    const scans = async () =>
      Number(
        /weft_store_statement_seconds_count\{[^}]*statement="analytics\.queryMetrics"[^}]*\} (\d+)/.exec(
          (await api.request('GET', '/metrics')).text,
        )?.[1] ?? 0,
      );
    const before = await scans();
    const batch = await as(alice).post('/analytics/batch', { project_id: P, queries });
    expect(batch.status, batch.text).toBe(200);
    const batchScans = (await scans()) - before;
    const answers = batch.body.answers as Record<string, unknown>[];
    expect(answers).toHaveLength(queries.length);
    // Figures to 12 significant digits (sums of floats in another order differ in their last bit).
    const exact = (x: unknown) => JSON.parse(JSON.stringify(x), (_k, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v));
    const aloneBefore = await scans();
    for (const [i, q] of queries.entries()) {
      const alone = await as(alice).post('/analytics/query', { project_id: P, ...q });
      if (alone.status === 200) expect(exact(answers[i]), JSON.stringify(q)).toEqual(exact(alone.body));
      else
        expect(answers[i], JSON.stringify(q)).toEqual({
          error: { status: alone.status, reason: alone.body.reason, field: alone.body.field },
        });
    }
    const aloneScans = (await scans()) - aloneBefore;
    expect(answers[6]).toMatchObject({
      error: { status: 422, field: 'metrics[0]', reason: expect.stringContaining("unknown metric 'nope'") },
    });
    expect((answers[0]!.rows as { op: string }[]).map((r) => r.op)).toContain('__other__');
    // The two by op and the totals in one scan (and the totals' own statement), the two by op and status in one.
    expect(batchScans).toBeLessThanOrEqual(aloneScans - 2);
    // Tenancy as everywhere: a query naming a project the key may not use is refused whole.
    const other = await as(alice).post('/analytics/batch', { project_id: P, queries: [{ project_id: 'elsewhere/p', metrics: ['count'] }] });
    expect(other.status).toBe(403);
    expect((await as(carol).post('/analytics/batch', { project_id: P, queries: [{ metrics: ['count'] }] })).status).toBe(403);
    expect((await as(alice).post('/analytics/batch', { project_id: P, queries: [] })).status).toBe(422);
  });

  it('refuses unknown dimensions, metrics and paths with a 422 naming them; tenancy as everywhere', async () => {
    const bad = async (body: Record<string, unknown>, field: string, words: string) => {
      const r = await as(alice).post('/analytics/query', { project_id: P, metrics: ['count'], ...body });
      expect(r.status, r.text).toBe(422);
      expect(r.body.field).toBe(field);
      expect(r.text).toContain(words);
    };
    await bad({ dimensions: ['colour'] }, 'dimensions[0]', 'colour');
    await bad({ metrics: ['count', 'p42_latency'] }, 'metrics[1]', 'p42_latency');
    await bad({ metrics: ['avg(nowhere.x)'] }, 'metrics[0]', 'nowhere.x');
    await bad({ dimensions: ['inputs.'] }, 'dimensions[0]', 'empty');
    await bad({ order_by: [{ field: 'latency_p50_ms', direction: 'asc' }] }, 'order_by[0].field', 'latency_p50_ms');
    await bad({ dimensions: ['op'], top: { dimension: 'status', n: 3 } }, 'top.dimension', 'status');
    const schema = await as(alice).post('/analytics/query', { project_id: P, metrics: [] });
    expect(schema.status).toBe(422);
    expect((await as(carol).post('/analytics/query', { project_id: P, metrics: ['count'] })).status).toBe(403);
    expect((await api.withAuth(null).post('/analytics/query', { project_id: P, metrics: ['count'] })).status).toBe(401);
  });

  it("example 5: last month's failed calls as Parquet (read back with pyarrow), CSV and JSONL, the same rows", async () => {
    await seed();
    const body = {
      project_id: P,
      query: {
        $expr: {
          $and: [
            { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'error' }] },
            { $gte: [{ $getField: 'started_at' }, { $literal: new Date(now - 31 * DAY).toISOString() }] },
          ],
        },
      },
    };
    const failed = await as(alice).jsonl('/calls/stream_query', body);
    expect(failed.length).toBeGreaterThan(3);

    const download = async (format: string, extra: Record<string, unknown> = {}) => {
      const r = await fetch(`${weft.url}/calls/export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`api:${alice.key}`).toString('base64')}` },
        body: JSON.stringify({ ...body, format, ...extra }),
      });
      expect(r.status, format).toBe(200);
      expect(r.headers.get('content-disposition')).toContain(`.${format}`);
      return Buffer.from(await r.arrayBuffer());
    };
    const dir = mkdtempSync(join(TEST_ROOT, 'analytics-export-'));
    const parquet = join(dir, 'failed.parquet');
    writeFileSync(parquet, await download('parquet'));
    const python = await ensurePythonVenv('pyarrow-21', ['pyarrow==21.0.0']);
    const read = await promisify(execFile)(python, [
      '-c',
      'import sys, json, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(json.dumps({"rows": t.num_rows, "columns": t.column_names, "ids": sorted(t.column("id").to_pylist()), "status": sorted(set(t.column("status").to_pylist())), "started": str(t.schema.field("started_at").type), "inputs": t.column("inputs").to_pylist()[0]}))',
      parquet,
    ]);
    const table = JSON.parse(read.stdout);
    expect(table.rows).toBe(failed.length);
    expect(table.ids).toEqual(failed.map((c) => c.id).sort());
    expect(table.status).toEqual(['error']);
    expect(table.columns).toContain('latency_ms');
    expect(table.started).toContain('timestamp');
    expect(JSON.parse(table.inputs)).toHaveProperty('q');
    // Every value of every row is the call's, as the stream has it.
    const rowsRead = await promisify(execFile)(python, [
      '-c',
      'import sys, json, pyarrow.parquet as pq; print(json.dumps(pq.read_table(sys.argv[1]).to_pylist(), default=lambda v: v.isoformat()))',
      parquet,
    ]);
    const byId = new Map(failed.map((c) => [c.id, c]));
    for (const row of JSON.parse(rowsRead.stdout) as Record<string, any>[]) {
      const call = byId.get(row.id)!;
      expect(row.op_name).toBe(call.op_name);
      expect(row.trace_id).toBe(call.trace_id);
      expect(row.parent_id).toBe(call.parent_id ?? null);
      expect(row.display_name).toBe(call.display_name ?? null);
      expect(row.thread_id).toBe(call.thread_id ?? null);
      expect(row.status).toBe(call.summary.weave.status);
      expect(row.latency_ms).toBe(call.summary.weave.latency_ms);
      expect(row.exception).toBe(call.exception);
      expect(JSON.parse(row.inputs)).toEqual(call.inputs);
      expect(row.output === null ? null : JSON.parse(row.output)).toEqual(call.output ?? null);
      expect(JSON.parse(row.attributes)).toEqual(call.attributes);
      expect(JSON.parse(row.summary)).toEqual(call.summary);
      expect(Date.parse(row.started_at)).toBe(Date.parse(call.started_at));
      expect(Date.parse(row.ended_at)).toBe(Date.parse(call.ended_at));
    }

    const csv = (await download('csv', { columns: ['id', 'op_name', 'exception', 'inputs'] })).toString('utf8').trim().split('\r\n');
    expect(csv[0]).toBe('id,op_name,exception,inputs');
    expect(csv).toHaveLength(failed.length + 1);
    expect(csv[1]).toMatch(/^0199bbbb-[^,]+,tool,ValueError: boom,"{""q"":""question \d+"",""n"":\d+}"$/);

    const jsonl = (await download('jsonl'))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl.map((c) => c.id)).toEqual(failed.map((c) => c.id));

    // A query the compiler refuses is a clean 400 in every format (never a response cut short).
    for (const format of ['csv', 'jsonl', 'parquet']) {
      const refused = await as(alice).post('/calls/export', { project_id: P, format, query: { $expr: {} } });
      expect(refused.status, format).toBe(400);
      expect(refused.body.field, format).toContain('$expr');
    }
    const bad = await as(alice).post('/calls/export', { ...body, format: 'xlsx' });
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('format');

    // The process's one named pipe serves export after export: after a refused one, two at once, each whole.
    const both = await Promise.all([download('parquet'), download('parquet')]);
    for (const [i, bytes] of both.entries()) {
      const file = join(dir, `again-${i}.parquet`);
      writeFileSync(file, bytes);
      const again = await promisify(execFile)(python, [
        '-c',
        'import sys, pyarrow.parquet as pq; print(pq.read_table(sys.argv[1]).num_rows)',
        file,
      ]);
      expect(Number(again.stdout)).toBe(failed.length);
    }
  });

  it("Parquet keeps an output's JSON text whatever its type, as CSV does", async () => {
    const project_id = 'an/outputs';
    const outputs = ['plain "quoted" text', 1.5, 0, [1, 'x', { y: null }], true, { nested: { a: [1, 2] } }, null, ''];
    const batch = outputs.flatMap((output, i) => {
      const id = `0199cccc-0000-7000-8000-${String(i).padStart(12, '0')}`;
      const started_at = new Date(now - DAY + i * 1000).toISOString();
      return [
        { mode: 'start', req: { start: { project_id, id, op_name: 'o', started_at, inputs: { i } } } },
        { mode: 'end', req: { end: { project_id, id, ended_at: started_at, output, summary: {} } } },
      ];
    });
    expect((await as(alice).post('/call/upsert_batch', { batch })).status).toBe(200);
    const r = await fetch(`${weft.url}/calls/export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`api:${alice.key}`).toString('base64')}` },
      body: JSON.stringify({
        project_id,
        format: 'parquet',
        columns: ['id', 'output'],
        sort_by: [{ field: 'started_at', direction: 'asc' }],
      }),
    });
    expect(r.status).toBe(200);
    const file = join(mkdtempSync(join(TEST_ROOT, 'analytics-outputs-')), 'outputs.parquet');
    writeFileSync(file, Buffer.from(await r.arrayBuffer()));
    const python = await ensurePythonVenv('pyarrow-21', ['pyarrow==21.0.0']);
    const read = await promisify(execFile)(python, [
      '-c',
      'import sys, json, pyarrow.parquet as pq; print(json.dumps(pq.read_table(sys.argv[1]).column("output").to_pylist()))',
      file,
    ]);
    const texts = JSON.parse(read.stdout) as (string | null)[];
    expect(texts.map((t) => (t === null ? null : JSON.parse(t)))).toEqual(outputs);
    expect(texts[0]).toBe(JSON.stringify(outputs[0]));
  });

  it('the CLI: weft export streams a file with its progress; weft analytics prints rows as CSV', async () => {
    await seed();
    const dir = mkdtempSync(join(TEST_ROOT, 'analytics-cli-'));
    const cli = (args: string[]) =>
      promisify(execFile)(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), ...args], {
        cwd: REPO_ROOT,
        env: { ...process.env, WEFT_URL: weft.url, WEFT_API_KEY: alice.key },
        timeout: 90_000,
      });
    const out = join(dir, 'tools.csv');
    const exported = await cli([
      'export',
      P,
      '--format',
      'csv',
      '--filter',
      '{"op_names":["tool"]}',
      '--columns',
      'id,status',
      '--out',
      out,
    ]);
    const stats = await as(alice).post('/calls/query_stats', { project_id: P, filter: { op_names: ['tool'] } });
    expect(exported.stderr).toContain(`${stats.body.count} / ${stats.body.count} calls`);
    const lines = readFileSync(out, 'utf8').trim().split('\r\n');
    expect(lines[0]).toBe('id,status');
    expect(lines).toHaveLength(stats.body.count + 1);

    const rows = await cli(['analytics', P, '--metrics', 'count,errors', '--dimensions', 'op', '--format', 'csv']);
    const q = await query({ dimensions: ['op'], metrics: ['count', 'errors'] });
    expect(rows.stdout.trim().split('\r\n')).toEqual(['op,count,errors', ...q.rows.map((r) => `${r.op},${r.count},${r.errors}`)]);
    const refused = await cli(['analytics', P, '--metrics', 'nope']).catch((e: { code: number; stderr: string }) => e);
    expect((refused as { code: number }).code).toBe(1);
    expect((refused as { stderr: string }).stderr).toContain("422: metrics[0]: unknown metric 'nope'");
  });

  it("a table's rows (a dataset) as JSONL, CSV and Parquet, columns from every row's keys", async () => {
    const rows = [
      { question: 'What is 1 + 1?', answer: '2' },
      { question: 'Say "hi", twice', answer: 'hi, hi', tags: ['greeting'] },
      { question: 'No answer', difficulty: 3 },
    ];
    const t = await as(alice).post('/table/create', { table: { project_id: P, rows } });
    expect(t.status, t.text).toBe(200);
    const download = async (format: string) => {
      const r = await fetch(`${weft.url}/table/export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`api:${alice.key}`).toString('base64')}` },
        body: JSON.stringify({ project_id: P, digest: t.body.digest, format }),
      });
      expect(r.status, format).toBe(200);
      return Buffer.from(await r.arrayBuffer());
    };
    const jsonl = (await download('jsonl'))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl).toEqual(rows);
    const csv = (await download('csv')).toString('utf8').trim().split('\r\n');
    // Keys in the order the rows are stored (each row's keys sorted, as the reference digests them).
    expect(csv).toEqual([
      'answer,question,tags,difficulty',
      '2,What is 1 + 1?,,',
      '"hi, hi","Say ""hi"", twice","[""greeting""]",',
      ',No answer,,3',
    ]);
    const file = join(mkdtempSync(join(TEST_ROOT, 'analytics-table-')), 'rows.parquet');
    writeFileSync(file, await download('parquet'));
    const python = await ensurePythonVenv('pyarrow-21', ['pyarrow==21.0.0']);
    const read = await promisify(execFile)(python, [
      '-c',
      'import sys, json, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(json.dumps(t.to_pylist()))',
      file,
    ]);
    expect(JSON.parse(read.stdout)).toEqual([
      { question: 'What is 1 + 1?', answer: '2', tags: null, difficulty: null },
      { question: 'Say "hi", twice', answer: 'hi, hi', tags: '["greeting"]', difficulty: null },
      { question: 'No answer', answer: null, tags: null, difficulty: '3' },
    ]);
    // An empty table exports empty (Parquet with one `value` column); an unknown one is a 404 naming the digest.
    const empty = await as(alice).post('/table/create', { table: { project_id: P, rows: [] } });
    const none = await fetch(`${weft.url}/table/export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`api:${alice.key}`).toString('base64')}` },
      body: JSON.stringify({ project_id: P, digest: empty.body.digest, format: 'parquet' }),
    });
    expect(none.status).toBe(200);
    expect(
      Buffer.from(await none.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('PAR1');
    const unknown = await as(alice).post('/table/export', { project_id: P, digest: 'no-such-digest', format: 'csv' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.field).toBe('digest');
    const bad = await as(alice).post('/table/export', { project_id: P, digest: t.body.digest, format: 'xml' });
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('format');
  });
});
