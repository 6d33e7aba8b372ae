import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * The Call lines ClickHouse builds for /calls/stream_query (libs/query call-json.ts): the stored
 * dumps spliced in, times and derived summary fields as the interface writes them, projections,
 * pages of 2 rows; latency/status over filters (calls_starts ⋈ calls_ends) and under replays.
 */
let weft: RunningWeft;
let api: Client;
const P = 'qa/lines';

const start = (id: string, startedAt: string, extra: Record<string, unknown> = {}) => ({
  mode: 'start',
  req: {
    start: {
      project_id: P,
      id,
      trace_id: `tr-${id}`,
      op_name: 'weave:///qa/lines/op/answer:v1',
      started_at: startedAt,
      inputs: {},
      attributes: {},
      ...extra,
    },
  },
});
const end = (id: string, endedAt: string, extra: Record<string, unknown> = {}) => ({
  mode: 'end',
  req: { end: { project_id: P, id, ended_at: endedAt, summary: {}, ...extra } },
});

const tricky = 'slash / quote " backslash \\ newline \n tab \t unicode é 😀 </script>';
const batch = [
  start('a', '2024-01-01T00:00:01Z', {
    inputs: { s: tricky, n: 1.5, deep: { list: [1, null, true] } },
    attributes: { env: 'prod' },
    display_name: 'Named',
  }),
  end('a', '2024-01-01T00:00:02.5Z', { output: { text: tricky }, summary: { usage: { m: { requests: 1 } } } }),
  start('b', '2024-01-01T00:00:02.1Z', {
    parent_id: 'a',
    trace_id: 'tr-a',
    thread_id: 'th',
    turn_id: 'a',
    svc_run_id: 'run',
    svc_run_step: 3,
  }),
  // A stored summary.weave: its own keys stay, the derived ones are replaced.
  end('b', '2024-01-01T00:00:02.123456Z', {
    output: 'plain text',
    exception: 'boom: /x',
    summary: { weave: { status: 'bogus', latency_ms: -1, custom: { k: 'v' } }, status_counts: { error: 2 } },
    svc_run_step_end: 4,
  }),
  start('c', '2024-01-01T00:00:03.000100Z', { op_name: 'plain', otel_dump: { span: { name: 's' } }, attributes: { a: 1 } }),
  end('c', '2024-01-01T00:00:04Z', { output: [1, 2], summary: { status_counts: { error: 1 } } }),
  start('d', '2024-01-01T00:00:04Z', { op_name: 'plain' }),
  ...['e', 'f', 'g'].map((id, i) => start(id, `2024-01-01T00:00:0${5 + i}Z`, { op_name: 'bulk', inputs: { i } })),
];

const sorted = (a: string[]) => [...a].sort();
const stream = async (body: Record<string, unknown> = {}) => api.jsonl<any>('/calls/stream_query', { project_id: P, ...body });

beforeAll(async () => {
  weft = await startWeft({ env: { WEFT_QUERY_PAGE_ROWS: '2' } });
  api = new Client(weft.url);
  expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
}, 180_000);
afterAll(async () => {
  await weft?.stop();
});

describe('call lines', () => {
  it('splice the stored JSON, write times and derived summary fields as the interface does', async () => {
    const rows = await stream();
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const [a, b, c, d] = rows;
    expect(a).toEqual({
      id: 'a',
      project_id: P,
      op_name: 'weave:///qa/lines/op/answer:v1',
      trace_id: 'tr-a',
      parent_id: null,
      thread_id: null,
      turn_id: null,
      display_name: 'Named',
      started_at: '2024-01-01T00:00:01Z',
      ended_at: '2024-01-01T00:00:02.500Z',
      attributes: { env: 'prod' },
      inputs: { s: tricky, n: 1.5, deep: { list: [1, null, true] } },
      output: { text: tricky },
      exception: null,
      summary: { usage: { m: { requests: 1 } }, weave: { status: 'success', latency_ms: 1500, display_name: 'Named' } },
      svc_user_id: expect.any(String),
      svc_run_id: null,
      svc_run_step: null,
      svc_run_step_end: null,
      deleted_at: null,
      wb_user_id: a.svc_user_id,
      wb_run_id: null,
      wb_run_step: null,
      wb_run_step_end: null,
    });
    expect(b).toMatchObject({
      parent_id: 'a',
      trace_id: 'tr-a',
      thread_id: 'th',
      turn_id: 'a',
      started_at: '2024-01-01T00:00:02.100Z',
      ended_at: '2024-01-01T00:00:02.123456Z',
      output: 'plain text',
      exception: 'boom: /x',
      svc_run_id: 'run',
      svc_run_step: 3,
      svc_run_step_end: 4,
      wb_run_id: 'run',
      wb_run_step: 3,
      wb_run_step_end: 4,
      summary: { status_counts: { error: 2 }, weave: { custom: { k: 'v' }, status: 'error', latency_ms: 23, trace_name: 'answer' } },
    });
    expect(b.summary.weave).toEqual({ custom: { k: 'v' }, status: 'error', latency_ms: 23, trace_name: 'answer' });
    // OTel spans come back under attributes.otel_span; a child error makes a descendant_error.
    expect(c).toMatchObject({
      started_at: '2024-01-01T00:00:03.000100Z',
      attributes: { a: 1, otel_span: { span: { name: 's' } } },
      output: [1, 2],
    });
    expect(c.summary.weave).toEqual({ status: 'descendant_error', latency_ms: 999, trace_name: 'plain' });
    expect(d).toMatchObject({ ended_at: null, output: null, summary: { weave: { status: 'running', trace_name: 'plain' } } });
    // Full lines are spliced from the fragments stored with each half (migration 091); a
    // projection naming every field builds them field by field: the same calls.
    expect(await stream({ columns: Object.keys(a) })).toEqual(rows);
    // One line per call, whatever the strings hold.
    const r = await api.post('/calls/stream_query', { project_id: P, filter: { call_ids: ['a'] } });
    expect(r.text.split('\n')).toHaveLength(2);
    expect(r.text).toContain('slash / quote');
  });

  it('the enriched path (objects in Node) returns the same calls', async () => {
    const plain = await stream();
    const enriched = await stream({ include_feedback: true });
    for (const row of enriched) delete row.summary.weave.feedback;
    expect(enriched).toEqual(plain);
  });

  it('projections leave out what was not asked, and pages keep order, limit and offset', async () => {
    const [a] = await stream({ columns: ['inputs'], limit: 1 });
    expect(a).toMatchObject({
      id: 'a',
      trace_id: 'tr-a',
      op_name: expect.any(String),
      started_at: '2024-01-01T00:00:01Z',
      inputs: { n: 1.5 },
    });
    expect([a.attributes, a.output, a.summary, a.ended_at, a.display_name, a.exception]).toEqual([{}, null, null, null, null, null]);
    const desc = await stream({ sort_by: [{ field: 'started_at', direction: 'desc' }], offset: 1, limit: 4 });
    expect(desc.map((r) => r.id)).toEqual(['f', 'e', 'd', 'c']);
    const byInput = await stream({ filter: { op_names: ['bulk'] }, sort_by: [{ field: 'inputs.i', direction: 'desc' }] });
    expect(byInput.map((r) => r.id)).toEqual(['g', 'f', 'e']);
    const byLatency = await stream({ sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }], limit: 3 });
    expect(byLatency.map((r) => r.id)).toEqual(['a', 'c', 'b']);
    expect((await api.post('/calls/query_stats', { project_id: P })).body.count).toBe(7);
  });

  it('latency and status over a filter join calls_starts with calls_ends: same answers as merging, replays counted once', async () => {
    const plain = { filter: { op_names: ['plain'] } };
    const byLatency = { ...plain, sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }] };
    const status = (s: string) => ({ query: { $expr: { $eq: [{ $getField: 'summary.weave.status' }, { $literal: s }] } } });
    const count = async (body: Record<string, unknown>) => (await api.post('/calls/query_stats', { project_id: P, ...body })).body.count;
    // c ended (999 ms), d runs: NULL latency last.
    expect((await stream(byLatency)).map((r) => r.id)).toEqual(['c', 'd']);
    expect(await count(status('error'))).toBe(1);
    expect(await count(status('running'))).toBe(4);
    expect(await count({ ...plain, ...status('descendant_error') })).toBe(1);
    // The same matches under a sort on the display name (calls_renames joined).
    const merged = await stream({ ...status('running'), sort_by: [{ field: 'display_name', direction: 'asc' }] });
    expect(sorted(merged.map((r) => r.id))).toEqual(['d', 'e', 'f', 'g']);
    expect(
      (await stream({ ...status('running'), sort_by: [{ field: 'summary.weave.latency_ms', direction: 'asc' }] })).map((r) => r.id),
    ).toEqual(['d', 'e', 'f', 'g']);
    // A replayed start and end (at-least-once delivery) before any merge: still one call each.
    expect((await api.post('/call/upsert_batch', { batch: [batch[4], batch[5], batch[0], batch[1]] })).status).toBe(200);
    expect((await stream(byLatency)).map((r) => r.id)).toEqual(['c', 'd']);
    expect(await count({ ...plain, ...status('descendant_error') })).toBe(1);
    expect(await count(status('success'))).toBe(1);
    expect((await stream({ sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }] })).map((r) => r.id)).toEqual([
      'a',
      'c',
      'b',
      'd',
      'e',
      'f',
      'g',
    ]);
    // A sort on deleted_at: NULL on every call a read returns (deleted calls are left out).
    expect(
      (
        await stream({
          sort_by: [
            { field: 'deleted_at', direction: 'asc' },
            { field: 'summary.weave.latency_ms', direction: 'desc' },
          ],
        })
      ).map((r) => r.id),
    ).toEqual(['a', 'c', 'b', 'd', 'e', 'f', 'g']);
    const agg = (await api.post('/calls/aggregate', { project_id: P })).body;
    expect(agg.totals).toMatchObject({ calls: 7, errors: 1 });
  });
});
