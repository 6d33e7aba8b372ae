import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { basicAuth, Client } from './helpers/client';
import { createKey } from './helpers/keys';
import { useWeft } from './helpers/fixture';

/**
 * The query service over real HTTP and the embedded ClickHouse. Pages of 3 rows force the keyset
 * paging path on every multi-row stream.
 */
let other: Client;
const P = 'qa/calls';
/** ISO time `s` seconds into 2024, in the server's form (no fraction when it is zero). */
const T = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, 0) + s * 1000).toISOString().replace('.000Z', 'Z');

interface Spec {
  id: string;
  op: string;
  start: number;
  end?: number;
  parent?: string;
  trace?: string;
  thread?: string;
  turn?: string;
  inputs?: Record<string, unknown>;
  output?: unknown;
  summary?: Record<string, unknown>;
  exception?: string;
  display?: string;
  run?: string;
  attributes?: Record<string, unknown>;
  client?: Client;
  project?: string;
}

const op = (name: string, v = 'v1') => `weave:///qa/calls/op/${name}:${v}`;
const specs: Spec[] = [
  {
    id: 'c1',
    op: op('alpha'),
    start: 1,
    end: 2.5,
    thread: 'th1',
    turn: 'c1',
    run: 'run1',
    display: 'First',
    inputs: { n: 1, s: 'Apple pie', nested: { x: [10, 20] }, 'a.b': 'dotted', flag: false },
    output: { score: 0.9 },
    attributes: { env: 'prod' },
    summary: {
      usage: {
        'gpt-4o': { prompt_tokens: 1000, completion_tokens: 500, requests: 1 },
        'my-model': { input_tokens: 100, output_tokens: 10 },
        'no-such-model': { prompt_tokens: 5 },
      },
    },
  },
  {
    id: 'c2',
    op: op('beta'),
    start: 2,
    end: 2.25,
    parent: 'c1',
    trace: 'tr-c1',
    thread: 'th1',
    turn: 'c1',
    inputs: { n: 2, s: 'banana split' },
    output: { score: 0.5 },
    exception: 'boom',
  },
  { id: 'c3', op: op('alpha', 'v2'), start: 3, thread: 'th1', turn: 'c3', inputs: { n: '10', s: 'Cherry' } },
  {
    id: 'c4',
    op: 'plain_op',
    start: 4,
    end: 7,
    thread: 'th2',
    turn: 'c4',
    run: 'run2',
    inputs: { n: 3.5, flag: true, ds: 'weave:///qa/calls/object/ds:abc' },
    output: 'text output',
    summary: {
      status_counts: { success: 1, error: 1 },
      usage: { 'my-model': { prompt_tokens: 100, completion_tokens: 10, cache_read_input_tokens: 40 } },
    },
  },
  {
    id: 'c5',
    op: 'plain_op',
    start: 5,
    end: 6,
    thread: 'th2',
    turn: 'c5',
    inputs: {},
    output: { model: 'weave:///qa/calls/object/model:def' },
    summary: { usage: { 'claude-3-haiku-20240307': { input_tokens: 2000, output_tokens: 400 } } },
  },
  { id: 'c8', op: 'turn', start: 10, end: 10.1, thread: 'th3', turn: 'c8' },
  { id: 'c9', op: 'turn', start: 11, end: 12, thread: 'th3', turn: 'c9' },
  { id: 'c10', op: 'turn', start: 12, end: 12.2, thread: 'th3', turn: 'c10' },
  { id: 'c11', op: 'nested', start: 12.05, end: 13, parent: 'c10', trace: 'tr-c10', thread: 'th3', turn: 'c10' },
  { id: 'x1', op: 'plain_op', start: 1, end: 2, project: 'qa/other', thread: 'th1', turn: 'x1', inputs: { n: 1 } },
];
const ALL_P = specs.filter((s) => !s.project).map((s) => s.id);

async function write(s: Spec): Promise<void> {
  const c = s.client ?? api;
  const project_id = s.project ?? P;
  const start = await c.post('/call/start', {
    start: {
      project_id,
      id: s.id,
      op_name: s.op,
      started_at: T(s.start),
      trace_id: s.trace ?? `tr-${s.id}`,
      parent_id: s.parent,
      thread_id: s.thread,
      turn_id: s.turn,
      inputs: s.inputs ?? {},
      attributes: s.attributes ?? {},
      display_name: s.display,
      svc_run_id: s.run,
    },
  });
  expect(start.status).toBe(200);
  if (s.end !== undefined) {
    const end = await c.post('/call/end', {
      end: { project_id, id: s.id, ended_at: T(s.end), output: s.output, summary: s.summary ?? {}, exception: s.exception },
    });
    expect(end.status).toBe(200);
  }
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
const stream = (body: Record<string, unknown>) => api.jsonl<any>('/calls/stream_query', { project_id: P, ...body });
const where = async (expr: unknown, extra: Record<string, unknown> = {}) =>
  ids(await stream({ query: { $expr: expr }, sort_by: [{ field: 'id', direction: 'asc' }], ...extra }));
const F = (f: string) => ({ $getField: f });
const L = (v: unknown) => ({ $literal: v });
const sorted = (xs: string[]) => [...xs].sort();

const { weft, api } = useWeft({ env: { WEFT_QUERY_PAGE_ROWS: '3' } }, async (api) => {
  // A second user, member of the `qa` entity: its calls carry another svc_user_id.
  other = new Client(weft.url, basicAuth((await createKey(api, 'second-user', ['qa'])).key));
  specs.find((s) => s.id === 'c5')!.client = other;
  // Project-level prices: one in force since 2023, one from the 4th second of 2024 (after c1 started).
  const created = await api.post('/cost/create', {
    project_id: P,
    costs: {
      'gpt-4o': {
        prompt_token_cost: 0.000001,
        completion_token_cost: 0.000002,
        effective_date: '2023-01-01T00:00:00Z',
        provider_id: 'openai',
      },
    },
  });
  expect(created.status).toBe(200);
  for (const [date, cost] of [
    ['2023-01-01T00:00:00Z', 0.01],
    [T(3.5), 0.02],
  ] as const) {
    const r = await api.post('/cost/create', {
      project_id: P,
      costs: { 'my-model': { prompt_token_cost: cost, completion_token_cost: cost * 10, effective_date: date } },
    });
    expect(r.status).toBe(200);
  }
  await api.post('/cost/create', { project_id: 'qa/other', costs: { 'gpt-4o': { prompt_token_cost: 5, completion_token_cost: 5 } } });
  for (const s of specs) await write(s);
});

describe('query language ($expr)', () => {
  it('$eq on columns, dotted JSON paths, escaped dots and array indexes', async () => {
    expect(await where({ $eq: [F('op_name'), L('plain_op')] })).toEqual(['c4', 'c5']);
    expect(await where({ $eq: [F('inputs.s'), L('Cherry')] })).toEqual(['c3']);
    expect(await where({ $eq: [F('inputs.a\\.b'), L('dotted')] })).toEqual(['c1']);
    expect(await where({ $eq: [F('inputs.nested.x.1'), L(20)] })).toEqual(['c1']);
    expect(await where({ $eq: [F('attributes.env'), L('prod')] })).toEqual(['c1']);
    expect(await where({ $eq: [F('output.score'), L(0.5)] })).toEqual(['c2']);
    expect(await where({ $eq: [F('output'), L('text output')] })).toEqual(['c4']);
  });

  it('ordering comparisons cast JSON by the literal; text that is not a number never matches', async () => {
    expect(await where({ $gt: [F('inputs.n'), L(2)] })).toEqual(['c3', 'c4']); // '10' reads as 10
    expect(await where({ $gte: [F('inputs.n'), L(2)] })).toEqual(['c2', 'c3', 'c4']);
    expect(await where({ $lt: [F('inputs.n'), L(2)] })).toEqual(['c1']);
    expect(await where({ $lte: [F('inputs.n'), L(3.5)] })).toEqual(['c1', 'c2', 'c4']);
    expect(await where({ $gt: [F('inputs.s'), L(0)] })).toEqual([]);
    expect(await where({ $eq: [F('inputs.flag'), L(true)] })).toEqual(['c4']);
    expect(await where({ $eq: [F('inputs.flag'), L(false)] })).toEqual(['c1']);
  });

  it('$and, $or, $not, with NULL (missing) never matching, even negated', async () => {
    expect(await where({ $and: [{ $eq: [F('op_name'), L('plain_op')] }, { $gt: [F('inputs.n'), L(1)] }] })).toEqual(['c4']);
    expect(await where({ $or: [{ $eq: [F('inputs.s'), L('Cherry')] }, { $eq: [F('output.score'), L(0.9)] }] })).toEqual(['c1', 'c3']);
    // c5 and the turns have no inputs.n: NULL, so neither the test nor its negation matches them.
    expect(await where({ $not: [{ $gt: [F('inputs.n'), L(2)] }] })).toEqual(['c1', 'c2']);
    expect(await where({ $eq: [F('inputs.n'), L(null)] })).toEqual(sorted(['c5', 'c8', 'c9', 'c10', 'c11']));
    expect(await where({ $not: [{ $eq: [F('exception'), L(null)] }] })).toEqual(['c2']);
  });

  it('$in over literals of one kind and of mixed kinds', async () => {
    expect(await where({ $in: [F('op_name'), [L('turn'), L('nested')]] })).toEqual(sorted(['c8', 'c9', 'c10', 'c11']));
    expect(await where({ $in: [F('inputs.n'), [L(1), L(3.5)]] })).toEqual(['c1', 'c4']);
    expect(await where({ $in: [F('inputs.n'), [L(2), L('Cherry'), L('10')]] })).toEqual(['c2', 'c3']);
    expect(await where({ $not: [{ $in: [F('inputs.n'), [L(1)]] }] })).toEqual(['c2', 'c3', 'c4']);
    expect(await where({ $in: [F('op_name'), []] })).toEqual([]);
  });

  it('$contains (case sensitive or not) and $containsToken', async () => {
    expect(await where({ $contains: { input: F('inputs.s'), substr: L('an') } })).toEqual(['c2']);
    expect(await where({ $contains: { input: F('inputs.s'), substr: L('apple') } })).toEqual([]);
    expect(await where({ $contains: { input: F('inputs.s'), substr: L('apple'), case_insensitive: true } })).toEqual(['c1']);
    expect(await where({ $containsToken: { input: F('inputs.s'), substr: L('split') } })).toEqual(['c2']);
    expect(await where({ $containsToken: { input: F('inputs.s'), substr: L('spl') } })).toEqual([]);
    expect(await where({ $containsToken: { input: F('inputs.s'), substr: L('PIE'), case_insensitive: true } })).toEqual(['c1']);
  });

  it('$convert to double, int, string, bool and exists', async () => {
    expect(await where({ $gt: [{ $convert: { input: F('inputs.n'), to: 'double' } }, L(3.4)] })).toEqual(['c3', 'c4']);
    expect(await where({ $eq: [{ $convert: { input: F('inputs.n'), to: 'int' } }, L(10)] })).toEqual(['c3']);
    expect(await where({ $eq: [{ $convert: { input: F('inputs.n'), to: 'string' } }, L('3.5')] })).toEqual(['c4']);
    expect(await where({ $convert: { input: F('inputs.flag'), to: 'bool' } })).toEqual(['c4']);
    expect(await where({ $convert: { input: F('inputs.flag'), to: 'exists' } })).toEqual(['c1', 'c4']);
    expect(await where({ $convert: { input: F('ended_at'), to: 'exists' } })).not.toContain('c3');
  });

  it('datetimes against unix seconds and ISO strings', async () => {
    const t4 = Date.UTC(2024, 0, 1, 0, 0, 4) / 1000;
    expect(await where({ $and: [{ $gte: [F('started_at'), L(t4)] }, { $lt: [F('started_at'), L(t4 + 2)] }] })).toEqual(['c4', 'c5']);
    expect(await where({ $lt: [F('started_at'), L('2024-01-01T00:00:02Z')] })).toEqual(['c1']);
    expect(await where({ $gt: [F('ended_at'), L(T(12.1))] })).toEqual(['c10', 'c11']);
  });

  it('derived summary.weave fields: status, latency_ms, trace_name', async () => {
    expect(await where({ $eq: [F('summary.weave.status'), L('error')] })).toEqual(['c2']);
    expect(await where({ $eq: [F('summary.weave.status'), L('running')] })).toEqual(['c3']);
    expect(await where({ $eq: [F('summary.weave.status'), L('descendant_error')] })).toEqual(['c4']);
    expect(await where({ $gte: [F('summary.weave.latency_ms'), L(1500)] })).toEqual(['c1', 'c4']);
    expect(await where({ $eq: [F('summary.weave.trace_name'), L('beta')] })).toEqual(['c2']);
    expect(await where({ $eq: [F('summary.weave.trace_name'), L('First')] })).toEqual(['c1']);
    expect(await where({ $eq: [F('summary.usage.gpt-4o.prompt_tokens'), L(1000)] })).toEqual(['c1']);
  });

  it('unknown operators are 400s, unknown fields 422s (the reference InvalidFieldError), naming them', async () => {
    const bad = await api.post('/calls/stream_query', { project_id: P, query: { $expr: { $or: [{ $regex: [F('id'), L('x')] }] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('query.$expr.$or[0].$regex');
    expect(bad.body.reason).toContain("'$regex'");
    const field = await api.post('/calls/query_stats', { project_id: P, query: { $expr: { $eq: [F('secret_col'), L(1)] } } });
    expect(field.status).toBe(422);
    expect(field.body.reason).toContain("unknown field 'secret_col'");
    const sort = await api.post('/calls/stream_query', { project_id: P, sort_by: [{ field: 'bogus', direction: 'asc' }] });
    expect(sort.status).toBe(422);
    expect(sort.body.field).toBe('sort_by[0].field');
  });
});

describe('calls filter', () => {
  const filtered = async (filter: Record<string, unknown>) => sorted(ids(await stream({ filter })));
  it('each member narrows as the reference', async () => {
    const userOf = async (id: string) => (await stream({ filter: { call_ids: [id] } }))[0].svc_user_id as string;
    expect(await filtered({ call_ids: ['c1', 'c4', 'x1'] })).toEqual(['c1', 'c4']);
    expect(await filtered({ op_names: ['plain_op'] })).toEqual(['c4', 'c5']);
    expect(await filtered({ op_names: ['weave:///qa/calls/op/alpha:*'] })).toEqual(['c1', 'c3']);
    expect(await filtered({ trace_ids: ['tr-c1'] })).toEqual(['c1', 'c2']);
    expect(await filtered({ parent_ids: ['c10'] })).toEqual(['c11']);
    expect(await filtered({ thread_ids: ['th2'] })).toEqual(['c4', 'c5']);
    expect(await filtered({ thread_ids: [] })).toEqual([]);
    expect(await filtered({ turn_ids: ['c1'] })).toEqual(['c1', 'c2']);
    expect(await filtered({ svc_run_ids: ['run2'] })).toEqual(['c4']);
    expect(await filtered({ svc_user_ids: [await userOf('c5')] })).toEqual(['c5']);
    expect(await filtered({ input_refs: ['weave:///qa/calls/object/ds:abc'] })).toEqual(['c4']);
    expect(await filtered({ input_refs: ['weave:///qa/calls/object/ds:*'] })).toEqual(['c4']);
    expect(await filtered({ output_refs: ['weave:///qa/calls/object/model:def'] })).toEqual(['c5']);
    expect(await filtered({ trace_roots_only: true })).toEqual(sorted(ALL_P.filter((i) => i !== 'c2' && i !== 'c11')));
    expect(await filtered({ trace_roots_only: true, thread_ids: ['th1', 'th3'], op_names: ['turn'] })).toEqual(['c10', 'c8', 'c9']);
  });

  it('query_stats counts under the same filter and query; limit caps the count', async () => {
    expect((await api.post('/calls/query_stats', { project_id: P })).body).toEqual({ count: ALL_P.length });
    expect(
      (
        await api.post('/calls/query_stats', {
          project_id: P,
          filter: { thread_ids: ['th3'] },
          query: { $expr: { $eq: [F('op_name'), L('turn')] } },
        })
      ).body.count,
    ).toBe(3);
    expect((await api.post('/calls/query_stats', { project_id: P, limit: 4 })).body.count).toBe(4);
    const big = await api.post('/calls/query_stats', {
      project_id: P,
      filter: { call_ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) },
    });
    expect(big.status).toBe(400);
    expect(big.body.field).toBe('filter.call_ids');
  });
});

describe('sorting, paging, projection', () => {
  it('sorts on a dotted field with three terms: present first, numbers numerically, then the rest', async () => {
    const asc = ids(await stream({ sort_by: [{ field: 'inputs.n', direction: 'asc' }] }));
    expect(asc.slice(0, 4)).toEqual(['c1', 'c2', 'c4', 'c3']); // 1, 2, 3.5, '10'
    expect(sorted(asc.slice(4))).toEqual(sorted(['c5', 'c8', 'c9', 'c10', 'c11']));
    const desc = ids(await stream({ sort_by: [{ field: 'inputs.n', direction: 'desc' }] }));
    expect(desc.slice(0, 4)).toEqual(['c3', 'c4', 'c2', 'c1']);
    const bySummary = ids(await stream({ sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }], limit: 3 }));
    expect(bySummary).toEqual(['c4', 'c1', 'c5']); // c5 and c9 tie at 1000 ms: id breaks the tie
  });

  it('default order is started_at then id; limit/offset page through the keyset pages', async () => {
    const all = ids(await stream({}));
    expect(all).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c8', 'c9', 'c10', 'c11']);
    expect(ids(await stream({ offset: 2, limit: 5 }))).toEqual(all.slice(2, 7));
    expect(ids(await stream({ offset: 7 }))).toEqual(all.slice(7));
    expect(
      ids(
        await stream({
          sort_by: [
            { field: 'op_name', direction: 'desc' },
            { field: 'started_at', direction: 'desc' },
          ],
          limit: 4,
        }),
      ),
    ).toEqual(['c2', 'c3', 'c1', 'c10']); // 'weave:///…' sorts after 'turn'
  });

  it('columns: only the asked fields (plus required ones) come back', async () => {
    const [c] = await stream({ filter: { call_ids: ['c1'] }, columns: ['inputs.s', 'thread_id'] });
    expect(c.inputs.s).toBe('Apple pie');
    expect(c.thread_id).toBe('th1');
    expect(c).toMatchObject({ id: 'c1', project_id: P, trace_id: 'tr-c1', op_name: op('alpha'), started_at: T(1) });
    expect(c.output).toBeNull();
    expect(c.attributes).toEqual({});
    expect(c.summary).toBeNull();
    expect(c.ended_at).toBeNull();
    const [s] = await stream({ filter: { call_ids: ['c2'] }, columns: ['summary'] });
    expect(s.summary.weave.status).toBe('error');
    expect(s.exception).toBe('boom');
  });
});

describe('costs', () => {
  it('include_costs prices summary.usage with the price in force at the call start', async () => {
    const rows = await stream({ filter: { call_ids: ['c1', 'c4', 'c5', 'c3'] }, include_costs: true });
    const byId = Object.fromEntries(rows.map((r: any) => [r.id, r]));
    const c1 = byId.c1.summary.weave.costs;
    // gpt-4o: the project price (in force since 2023) beats the default (effective 2025-08-01).
    expect(c1['gpt-4o']).toMatchObject({
      prompt_tokens: 1000,
      completion_tokens: 500,
      requests: 1,
      pricing_level: 'project',
      pricing_level_id: P,
      provider_id: 'openai',
    });
    expect(c1['gpt-4o'].prompt_tokens_total_cost).toBeCloseTo(1000 * 0.000001, 12);
    expect(c1['gpt-4o'].completion_tokens_total_cost).toBeCloseTo(500 * 0.000002, 12);
    // my-model: c1 started before the 0.02 price took effect; input/output_tokens count as prompt/completion.
    expect(c1['my-model']).toMatchObject({ prompt_tokens: 100, completion_tokens: 10, prompt_token_cost: 0.01 });
    expect(c1['no-such-model']).toBeUndefined();
    // c4 started after the second price; cached tokens are priced apart (at 0 here).
    const c4 = byId.c4.summary.weave.costs['my-model'];
    expect(c4.prompt_token_cost).toBe(0.02);
    expect(c4.prompt_tokens_total_cost).toBeCloseTo((100 - 40) * 0.02, 12);
    expect(c4.cache_read_input_tokens).toBe(40);
    // c5 has no project price: the seeded default, even though it took effect after the call.
    const c5 = byId.c5.summary.weave.costs['claude-3-haiku-20240307'];
    expect(c5).toMatchObject({ pricing_level: 'default', prompt_tokens: 2000, completion_tokens: 400, provider_id: 'anthropic' });
    expect(c5.prompt_tokens_total_cost).toBeCloseTo(2000 * c5.prompt_token_cost, 12);
    expect(c5.effective_date).toBe('2025-08-01 00:00:00.000');
    expect(byId.c3.summary.weave.costs).toBeUndefined();
  });

  it('sorts and filters on summary.weave.total_tokens and total_cost, the sums include_costs shows', async () => {
    const all = await stream({ include_costs: true });
    const num = (v: unknown) => (typeof v === 'number' ? v : 0);
    const tokens = (c: any): number | null => {
      const usage = Object.values(c.summary?.usage ?? {}) as any[];
      if (usage.length === 0) return null;
      return usage.reduce((s, u) => {
        const pc = num(u.prompt_tokens) + num(u.input_tokens) + num(u.completion_tokens) + num(u.output_tokens);
        return s + (num(u.total_tokens) || pc);
      }, 0);
    };
    const cost = (c: any): number | null => {
      const costs = Object.values(c.summary?.weave?.costs ?? {}) as any[];
      if (costs.length === 0) return null;
      return costs.reduce(
        (s, k) =>
          s +
          k.prompt_tokens_total_cost +
          k.completion_tokens_total_cost +
          (k.cache_read_input_tokens_total_cost ?? 0) +
          (k.cache_creation_input_tokens_total_cost ?? 0),
        0,
      );
    };
    // Expected: non-NULL first, by value in the asked direction, ties by id (ascending, as the other sorts); NULLs last.
    const expected = (f: (c: any) => number | null, dir: 'asc' | 'desc') =>
      [...all]
        .sort((a, b) => {
          const x = f(a);
          const y = f(b);
          if (x === null || y === null) return x === y ? (a.id < b.id ? -1 : 1) : x === null ? 1 : -1;
          if (Math.abs(x - y) > 1e-12) return dir === 'asc' ? x - y : y - x;
          return a.id < b.id ? -1 : 1;
        })
        .map((c) => c.id);
    const priced = all.filter((c: any) => cost(c) !== null);
    expect(priced.length).toBeGreaterThanOrEqual(3); // the seed prices c1, c4, c5 at least
    expect(new Set(priced.map(cost)).size).toBeGreaterThanOrEqual(3); // distinct totals: the order means something
    for (const dir of ['asc', 'desc'] as const) {
      const byCost = ids(await stream({ sort_by: [{ field: 'summary.weave.total_cost', direction: dir }] }));
      expect(byCost).toEqual(expected(cost, dir));
      const byTokens = ids(await stream({ sort_by: [{ field: 'summary.weave.total_tokens', direction: dir }] }));
      expect(byTokens).toEqual(expected(tokens, dir));
    }
    const threshold = Math.min(...priced.map((c: any) => cost(c)!)) + 1e-9;
    const dear = ids(await stream({ query: { $expr: { $gt: [F('summary.weave.total_cost'), L(threshold)] } } }));
    expect(sorted(dear)).toEqual(sorted(priced.filter((c: any) => cost(c)! > threshold).map((c: any) => c.id)));
  });

  it('/cost/query: project prices only by default, defaults through pricing_level, fields, sort, paging', async () => {
    const mine = await api.post('/cost/query', { project_id: P });
    expect(mine.status).toBe(200);
    expect(mine.body.results.map((r: any) => r.llm_id).sort()).toEqual(['gpt-4o', 'my-model', 'my-model']);
    expect(Object.keys(mine.body.results[0]).sort()).toEqual(
      [
        'completion_token_cost',
        'completion_token_cost_unit',
        'effective_date',
        'id',
        'llm_id',
        'prompt_token_cost',
        'prompt_token_cost_unit',
        'provider_id',
      ].sort(),
    );
    const sortedQ = await api.post('/cost/query', {
      project_id: P,
      fields: ['llm_id', 'prompt_token_cost', 'effective_date'],
      query: { $expr: { $eq: [F('llm_id'), L('my-model')] } },
      sort_by: [{ field: 'effective_date', direction: 'desc' }],
    });
    expect(sortedQ.body.results).toEqual([
      { llm_id: 'my-model', prompt_token_cost: 0.02, effective_date: T(3.5) },
      { llm_id: 'my-model', prompt_token_cost: 0.01, effective_date: '2023-01-01T00:00:00Z' },
    ]);
    const defaults = await api.post('/cost/query', {
      project_id: P,
      fields: ['llm_id', 'provider_id'],
      query: { $expr: { $and: [{ $eq: [F('pricing_level'), L('default')] }, { $eq: [F('provider_id'), L('anthropic')] }] } },
      sort_by: [{ field: 'llm_id', direction: 'asc' }],
      limit: 2,
      offset: 1,
    });
    expect(defaults.body.results).toHaveLength(2);
    expect(defaults.body.results.every((r: any) => r.provider_id === 'anthropic')).toBe(true);
    const allDefaults = await api.post('/cost/query', {
      project_id: P,
      fields: ['llm_id'],
      query: { $expr: { $eq: [F('pricing_level'), L('default')] } },
    });
    expect(allDefaults.body.results.length).toBeGreaterThanOrEqual(30);
    // Another project's prices never show, whatever the query says.
    const leak = await api.post('/cost/query', {
      project_id: P,
      fields: ['pricing_level_id'],
      query: { $expr: { $eq: [F('pricing_level_id'), L('qa/other')] } },
    });
    expect(leak.body.results).toEqual([]);
    const badField = await api.post('/cost/query', { project_id: P, fields: ['llm_id', 'password'] });
    expect(badField.status).toBe(400);
    expect(badField.body.field).toBe('fields[1]');
  });
});

describe('storage sizes', () => {
  it('per call (JSON bytes of attributes, inputs, output, summary) and per trace on roots only', async () => {
    const rows = await stream({ filter: { trace_ids: ['tr-c10'] }, include_storage_size: true, include_total_storage_size: true });
    const len = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
    const expected = (s: Spec) => len(s.attributes ?? {}) + len(s.inputs ?? {}) + len(s.output ?? null) + len(s.summary ?? {});
    const [c10, c11] = [specs.find((s) => s.id === 'c10')!, specs.find((s) => s.id === 'c11')!];
    const byId = Object.fromEntries(rows.map((r: any) => [r.id, r]));
    expect(byId.c10.storage_size_bytes).toBe(expected(c10));
    expect(byId.c11.storage_size_bytes).toBe(expected(c11));
    expect(byId.c10.total_storage_size_bytes).toBe(expected(c10) + expected(c11));
    expect(byId.c11.total_storage_size_bytes).toBeNull();
    const stats = await api.post('/calls/query_stats', {
      project_id: P,
      filter: { trace_ids: ['tr-c10'] },
      include_total_storage_size: true,
    });
    expect(stats.body).toEqual({ count: 2, total_storage_size_bytes: expected(c10) + expected(c11) });
  });
});

describe('threads', () => {
  it('aggregates turn calls only, against hand-computed values', async () => {
    const rows = await api.jsonl<any>('/threads/stream_query', { project_id: P });
    expect(rows.map((r) => r.thread_id)).toEqual(['th3', 'th2', 'th1']); // last_updated desc
    const by = Object.fromEntries(rows.map((r) => [r.thread_id, r]));
    // th1: turns c1 (1500 ms) and c3 (running); c2 is nested, not a turn.
    expect(by.th1).toEqual({
      thread_id: 'th1',
      turn_count: 2,
      start_time: T(1),
      last_updated: T(2.5),
      first_turn_id: 'c1',
      last_turn_id: 'c1',
      p50_turn_duration_ms: 1500,
      p99_turn_duration_ms: 1500,
    });
    // th2: 3000 and 1000 ms → p50 2000, p99 1000 + 0.99·2000.
    expect(by.th2).toMatchObject({
      turn_count: 2,
      start_time: T(4),
      last_updated: T(7),
      first_turn_id: 'c4',
      last_turn_id: 'c4',
      p50_turn_duration_ms: 2000,
    });
    expect(by.th2.p99_turn_duration_ms).toBeCloseTo(2980, 6);
    // th3: 100, 1000, 200 ms (c11 is nested) → p50 200, p99 at k=1.98: 200 + 0.98·800.
    expect(by.th3).toMatchObject({
      turn_count: 3,
      start_time: T(10),
      last_updated: T(12.2),
      first_turn_id: 'c8',
      last_turn_id: 'c10',
      p50_turn_duration_ms: 200,
    });
    expect(by.th3.p99_turn_duration_ms).toBeCloseTo(984, 6);
  });

  it('filters (after, before, thread_ids), sorts on every field, pages', async () => {
    const q = async (body: Record<string, unknown>) =>
      (await api.jsonl<any>('/threads/stream_query', { project_id: P, ...body })).map((r) => r.thread_id);
    expect(await q({ filter: { thread_ids: ['th1', 'th3'] } })).toEqual(['th3', 'th1']);
    expect(await q({ filter: { after_datetime: T(3.5) } })).toEqual(['th3', 'th2']);
    expect(await q({ filter: { before_datetime: T(3.5) } })).toEqual(['th1']);
    const th1Late = await api.jsonl<any>('/threads/stream_query', { project_id: P, filter: { after_datetime: T(2), thread_ids: ['th1'] } });
    expect(th1Late).toEqual([]); // only c3 (running) remains: no last_updated, skipped
    expect(
      await q({
        sort_by: [
          { field: 'turn_count', direction: 'desc' },
          { field: 'thread_id', direction: 'desc' },
        ],
      }),
    ).toEqual(['th3', 'th2', 'th1']);
    expect(await q({ sort_by: [{ field: 'start_time', direction: 'asc' }] })).toEqual(['th1', 'th2', 'th3']);
    expect(await q({ sort_by: [{ field: 'p50_turn_duration_ms', direction: 'asc' }] })).toEqual(['th3', 'th1', 'th2']);
    expect(await q({ sort_by: [{ field: 'p99_turn_duration_ms', direction: 'desc' }] })).toEqual(['th2', 'th1', 'th3']);
    expect(await q({ sort_by: [{ field: 'last_updated', direction: 'asc' }] })).toEqual(['th1', 'th2', 'th3']);
    expect(await q({ sort_by: [{ field: 'thread_id', direction: 'asc' }], limit: 1, offset: 1 })).toEqual(['th2']);
    const bad = await api.post('/threads/stream_query', {
      project_id: P,
      sort_by: [{ field: 'turn_count; DROP TABLE calls_merged', direction: 'asc' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toContain('turn_count; DROP TABLE calls_merged');
  });
});

describe('threads: a page computed for its candidate threads only', () => {
  it('equals the same rows of the whole list (replays, a deleted turn, threads with no ended turn)', async () => {
    const Q = 'qa/thread-pages';
    const start = (id: string, thread: string, at: number) => ({
      mode: 'start',
      req: {
        start: { project_id: Q, id, op_name: 'turn', started_at: T(at), trace_id: `tr-${id}`, thread_id: thread, turn_id: id, inputs: {} },
      },
    });
    const end = (id: string, at: number) => ({ mode: 'end', req: { end: { project_id: Q, id, ended_at: T(at), summary: {} } } });
    // 105 threads of 3 running turns each: they lead a turn_count order but have no row (no ended
    // turn), so a page by turn_count cannot be served by the first 2·(limit + offset) + 100 threads.
    const running = Array.from({ length: 105 }, (_, i) =>
      [0, 1, 2].map((k) => start(`r${i}-${k}`, `r${String(i).padStart(3, '0')}`, 100 + i + k / 10)),
    ).flat();
    const ended = [
      start('e1-0', 'e1', 1),
      end('e1-0', 1.5),
      start('e2-0', 'e2', 2),
      end('e2-0', 4),
      start('e2-1', 'e2', 3), // running
      start('e3-0', 'e3', 5),
      end('e3-0', 5.2),
      start('e3-1', 'e3', 6),
      end('e3-1', 9),
      start('e4-0', 'e4', 7),
      end('e4-0', 7.7),
      start('e4-1', 'e4', 8),
      end('e4-1', 8.1),
    ];
    for (const batch of [running, ended, [start('e3-1', 'e3', 6), end('e3-1', 9)]]) {
      // The last batch replays e3-1's parts (at-least-once delivery): still one turn.
      expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
    }
    expect((await api.post('/calls/delete', { project_id: Q, call_ids: ['e4-1'] })).status).toBe(200);
    const threads = (body: Record<string, unknown>) => api.jsonl<any>('/threads/stream_query', { project_id: Q, ...body });

    const whole = await threads({ sort_by: [{ field: 'turn_count', direction: 'desc' }] });
    expect(whole.map((t) => [t.thread_id, t.turn_count])).toEqual([
      ['e2', 2],
      ['e3', 2],
      ['e1', 1],
      ['e4', 1],
    ]);
    // turn_count desc, limit 1: every candidate is a running thread, so the whole query answers.
    expect(await threads({ sort_by: [{ field: 'turn_count', direction: 'desc' }], limit: 1 })).toEqual(whole.slice(0, 1));
    const sorts = [
      [{ field: 'turn_count', direction: 'desc' }],
      [{ field: 'turn_count', direction: 'asc' }],
      [{ field: 'start_time', direction: 'asc' }],
      [{ field: 'start_time', direction: 'desc' }],
      [{ field: 'thread_id', direction: 'desc' }],
      [
        { field: 'turn_count', direction: 'asc' },
        { field: 'start_time', direction: 'desc' },
      ],
    ];
    for (const sort_by of sorts) {
      const all = await threads({ sort_by });
      expect(all).toHaveLength(4);
      for (const [limit, offset] of [
        [1, 0],
        [2, 1],
        [3, 3],
      ] as const) {
        expect(await threads({ sort_by, limit, offset }), JSON.stringify({ sort_by, limit, offset })).toEqual(
          all.slice(offset, offset + limit),
        );
      }
    }
  });
});

describe('injection through every user string', () => {
  const evil = ["x' OR '1'='1", "'); DROP TABLE calls_merged; --", '`id`', 'a\\', '{p0:String}', "\\'", 'inputs.n) OR (1=1'];
  it('values, JSON paths, field names, sort fields, columns, filters are bound or refused', async () => {
    const before = (await api.post('/calls/query_stats', { project_id: P })).body.count;
    for (const s of evil) {
      expect(await where({ $eq: [F('op_name'), L(s)] })).toEqual([]);
      expect(await where({ $eq: [F(`inputs.${s}`), L(1)] })).toEqual([]);
      expect(await where({ $contains: { input: F('inputs.s'), substr: L(s) } })).toEqual([]);
      const field = await api.post('/calls/stream_query', { project_id: P, query: { $expr: { $eq: [F(s), L(1)] } } });
      // Refused, unless it is a legitimate (harmless) path under a JSON root.
      if (s.startsWith('inputs.')) expect(field.text.trim()).toBe('');
      else expect(field.status).toBe(422);
      const sortJson = await stream({ sort_by: [{ field: `output.${s}`, direction: 'asc' }] });
      expect(sortJson).toHaveLength(ALL_P.length);
      const sortCol = await api.post('/calls/stream_query', { project_id: P, sort_by: [{ field: s, direction: 'asc' }] });
      expect(sortCol.status).toBe(s.startsWith('inputs.') ? 200 : 422);
      expect(await stream({ filter: { op_names: [s, `${s}:*`], trace_ids: [s], input_refs: [s] } })).toEqual([]);
      const cols = await stream({ columns: [s], filter: { call_ids: ['c1'] } });
      expect(cols.map((c: any) => c.id)).toEqual(['c1']);
      const cost = await api.post('/cost/query', { project_id: P, query: { $expr: { $eq: [F('llm_id'), L(s)] } } });
      expect(cost.body.results).toEqual([]);
      expect((await api.post('/cost/query', { project_id: P, sort_by: [{ field: s, direction: 'asc' }] })).status).toBe(400);
      expect(await api.jsonl('/threads/stream_query', { project_id: P, filter: { thread_ids: [s] } })).toEqual([]);
      const project = await api.post('/calls/stream_query', { project_id: `${s}/p` });
      if (project.status === 200) expect(project.text.trim()).toBe('');
      else expect(project.status).toBe(422);
    }
    expect((await api.post('/calls/query_stats', { project_id: P })).body.count).toBe(before);
  });
});

describe('streaming', () => {
  it('pages a larger result in order and survives a client that disconnects mid-stream', async () => {
    const Q = 'qa/stream';
    const batch = Array.from({ length: 60 }, (_, i) => ({
      mode: 'start',
      req: {
        start: {
          project_id: Q,
          id: `s${String(i).padStart(3, '0')}`,
          op_name: 'bulk',
          started_at: T(i % 7),
          inputs: { k: (i * 37) % 101, pad: 'x'.repeat(2000) },
        },
      },
    }));
    expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
    const rows = await api.jsonl<any>('/calls/stream_query', { project_id: Q, sort_by: [{ field: 'inputs.k', direction: 'desc' }] });
    expect(rows).toHaveLength(60);
    expect(new Set(ids(rows)).size).toBe(60);
    const ks = rows.map((r) => r.inputs.k as number);
    expect(ks).toEqual([...ks].sort((a, b) => b - a));

    // A client that reads the first bytes and hangs up (node:http, so no pooled socket lingers).
    const firstBytes = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${weft.url}/calls/stream_query`,
        { method: 'POST', headers: { 'content-type': 'application/json', authorization: api.authorization! } },
        (res) => {
          res.once('data', (chunk: Buffer) => {
            req.destroy();
            resolve(chunk.length);
          });
        },
      );
      req.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
      req.end(JSON.stringify({ project_id: Q }));
    });
    expect(firstBytes).toBeGreaterThan(0);
    // The server stays healthy and answers the next query.
    const count = await api.post('/calls/query_stats', { project_id: Q });
    expect(count.body.count).toBe(60);
    // …and shuts down promptly: nothing of the aborted stream keeps it busy.
    const t0 = Date.now();
    expect(await weft.stop()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
