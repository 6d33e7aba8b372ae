import { beforeAll, describe, expect, it } from 'vitest';
import { postOversized } from './helpers/client';
import { useWeft } from './helpers/fixture';

const P = 'acme/calls';

const { weft, api } = useWeft();

const start = (over: Record<string, unknown> = {}) => ({
  start: { project_id: P, op_name: 'op', started_at: '2024-05-01T12:00:00Z', attributes: {}, inputs: {}, ...over },
});

describe('call start and end', () => {
  it('merges a started and ended call, with µs times and derived summary', async () => {
    const s = await api.post(
      '/call/start',
      start({
        op_name: 'weave:///acme/calls/op/summarise:abc123',
        started_at: '2024-05-01T12:00:00.123456Z',
        inputs: { text: 'hello', n: 3 },
        attributes: { env: 'test' },
        display_name: 'first',
      }),
    );
    expect(s.status).toBe(200);
    expect(s.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.body.trace_id).toMatch(/^[0-9a-f-]{36}$/);
    const e = await api.post('/call/end', {
      end: {
        project_id: P,
        id: s.body.id,
        ended_at: '2024-05-01T12:00:01.623456Z',
        output: { answer: 42 },
        summary: { usage: { 'gpt-4o': { prompt_tokens: 10, completion_tokens: 5 } }, status_counts: { success: 1 } },
      },
    });
    expect(e.status).toBe(200);
    expect(e.body).toEqual({});

    const rows = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [s.body.id] } });
    expect(rows).toHaveLength(1);
    const c = rows[0];
    expect(c).toMatchObject({
      id: s.body.id,
      trace_id: s.body.trace_id,
      project_id: P,
      op_name: 'weave:///acme/calls/op/summarise:abc123',
      display_name: 'first',
      started_at: '2024-05-01T12:00:00.123456Z',
      ended_at: '2024-05-01T12:00:01.623456Z',
      inputs: { text: 'hello', n: 3 },
      attributes: { env: 'test' },
      output: { answer: 42 },
      exception: null,
      parent_id: null,
    });
    expect(c.summary.usage).toEqual({ 'gpt-4o': { prompt_tokens: 10, completion_tokens: 5 } });
    expect(c.summary.weave).toMatchObject({ status: 'success', latency_ms: 1500, display_name: 'first' });
    expect(c.svc_user_id).toMatch(/^user-/);
  });

  it('keeps client ids, ignores a client svc_user_id, and merges an end that arrives first', async () => {
    const id = '0190f0f0-0000-7000-8000-000000000001';
    await api.post('/call/end', { end: { project_id: P, id, ended_at: '2024-05-02T00:00:02Z', exception: 'boom', summary: {} } });
    // Invisible until its start arrives.
    expect(await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [id] } })).toHaveLength(0);
    const s = await api.post('/call/start', start({ id, trace_id: 'trace-x', started_at: '2024-05-02T00:00:00Z', svc_user_id: 'mallory' }));
    expect(s.body).toEqual({ id, trace_id: 'trace-x' });
    const [c] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [id] } });
    expect(c.exception).toBe('boom');
    expect(c.summary.weave.status).toBe('error');
    expect(c.svc_user_id).not.toBe('mallory');
    expect(c.ended_at).toBe('2024-05-02T00:00:02Z');
  });

  it('accepts offsets and naive times as UTC', async () => {
    const s = await api.post('/call/start', start({ started_at: '2024-05-03T14:00:00+02:00', op_name: 'tz' }));
    const s2 = await api.post('/call/start', start({ started_at: '2024-05-03T12:00:00.5', op_name: 'tz' }));
    const rows = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [s.body.id, s2.body.id] } });
    expect(rows.map((r) => r.started_at)).toEqual(['2024-05-03T12:00:00Z', '2024-05-03T12:00:00.500Z']);
  });
});

describe('upsert_batch', () => {
  it('stores 1,000 calls from one batch and counts them all', async () => {
    const project = 'acme/batch';
    const batch = [];
    for (let i = 0; i < 1000; i++) {
      const id = `call-${String(i).padStart(4, '0')}`;
      batch.push({
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id,
            trace_id: `t-${i % 10}`,
            op_name: `op-${i % 3}`,
            started_at: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
            inputs: { i },
            attributes: {},
          },
        },
      });
      batch.push({
        mode: 'end',
        req: {
          end: { project_id: project, id, ended_at: new Date(Date.UTC(2024, 0, 1, 0, 0, i + 1)).toISOString(), output: i * 2, summary: {} },
        },
      });
    }
    const r = await api.post('/call/upsert_batch', { batch });
    expect(r.status).toBe(200);
    expect(r.body.res).toHaveLength(2000);
    expect(r.body.res[0]).toEqual({ id: 'call-0000', trace_id: 't-0' });
    expect(r.body.res[1]).toEqual({});
    const stats = await api.post('/calls/query_stats', { project_id: project });
    expect(stats.body).toEqual({ count: 1000 });
    const byOp = await api.post('/calls/query_stats', { project_id: project, filter: { op_names: ['op-1'] } });
    expect(byOp.body.count).toBe(333);
    const capped = await api.post('/calls/query_stats', { project_id: project, limit: 10 });
    expect(capped.body.count).toBe(10);
    const ended = await api.jsonl('/calls/stream_query', { project_id: project, filter: { call_ids: ['call-0999'] } });
    expect(ended[0].output).toBe(1998);
  });

  it('rejects an unknown mode naming the field, and writes nothing of that batch', async () => {
    const project = 'acme/badbatch';
    const r = await api.post('/call/upsert_batch', {
      batch: [
        { mode: 'start', req: start({ project_id: project }) },
        { mode: 'explode', req: {} },
      ],
    });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe('batch[1].mode');
    const stats = await api.post('/calls/query_stats', { project_id: project });
    expect(stats.body.count).toBe(0);
  });
});

describe('stream_query filters, sort and paging', () => {
  const project = 'acme/filters';
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const mk = async (name: string, over: Record<string, unknown>) => {
      const r = await api.post('/call/start', {
        start: { project_id: project, op_name: 'op', started_at: '2024-06-01T00:00:00Z', attributes: {}, inputs: {}, ...over },
      });
      ids[name] = r.body.id;
    };
    await mk('root', {
      op_name: 'weave:///acme/filters/op/agent:v1',
      trace_id: 'T1',
      started_at: '2024-06-01T00:00:01Z',
      thread_id: 'th1',
      svc_run_id: 'run1',
    });
    await mk('child1', {
      op_name: 'weave:///acme/filters/op/tool:v1',
      trace_id: 'T1',
      parent_id: ids.root,
      started_at: '2024-06-01T00:00:02Z',
      thread_id: 'th1',
      turn_id: 'turn-a',
    });
    await mk('child2', {
      op_name: 'weave:///acme/filters/op/tool:v2',
      trace_id: 'T1',
      parent_id: ids.root,
      started_at: '2024-06-01T00:00:03Z',
      inputs: { doc: 'weave:///acme/filters/object/doc:d1' },
    });
    await mk('other', { op_name: 'plain', trace_id: 'T2', started_at: '2024-06-01T00:00:00Z', display_name: 'zzz' });
    await api.post('/call/end', {
      end: {
        project_id: project,
        id: ids.child2,
        ended_at: '2024-06-01T00:00:09Z',
        output: { ref: 'weave:///acme/filters/object/out:o1' },
        summary: {},
      },
    });
  });
  const names = (rows: { id: string }[]) => rows.map((r) => Object.keys(ids).find((k) => ids[k] === r.id));
  const q = (body: Record<string, unknown>) => api.jsonl('/calls/stream_query', { project_id: project, ...body });

  it('orders by started_at by default', async () => {
    expect(names(await q({}))).toEqual(['other', 'root', 'child1', 'child2']);
  });
  it('filters by each call filter member', async () => {
    expect(names(await q({ filter: { trace_roots_only: true } }))).toEqual(['other', 'root']);
    expect(names(await q({ filter: { parent_ids: [ids.root] } }))).toEqual(['child1', 'child2']);
    expect(names(await q({ filter: { trace_ids: ['T2'] } }))).toEqual(['other']);
    expect(names(await q({ filter: { op_names: ['weave:///acme/filters/op/tool:*'] } }))).toEqual(['child1', 'child2']);
    expect(names(await q({ filter: { op_names: ['plain'] } }))).toEqual(['other']);
    expect(names(await q({ filter: { thread_ids: ['th1'] } }))).toEqual(['root', 'child1']);
    expect(names(await q({ filter: { turn_ids: ['turn-a'] } }))).toEqual(['child1']);
    expect(names(await q({ filter: { svc_run_ids: ['run1'] } }))).toEqual(['root']);
    expect(names(await q({ filter: { input_refs: ['weave:///acme/filters/object/doc:d1'] } }))).toEqual(['child2']);
    expect(names(await q({ filter: { output_refs: ['weave:///acme/filters/object/out:o1'] } }))).toEqual(['child2']);
    expect(names(await q({ filter: { call_ids: [ids.root, ids.other] } }))).toEqual(['other', 'root']);
  });
  it('sorts by fields in both directions and pages with limit/offset', async () => {
    expect(names(await q({ sort_by: [{ field: 'started_at', direction: 'desc' }] }))).toEqual(['child2', 'child1', 'root', 'other']);
    expect(names(await q({ sort_by: [{ field: 'display_name', direction: 'asc' }], filter: { trace_ids: ['T2'] } }))).toEqual(['other']);
    expect(names(await q({ sort_by: [{ field: 'op_name', direction: 'asc' }] }))).toEqual(['other', 'root', 'child1', 'child2']);
    expect(names(await q({ limit: 2 }))).toEqual(['other', 'root']);
    expect(names(await q({ limit: 2, offset: 1 }))).toEqual(['root', 'child1']);
    expect(names(await q({ offset: 3 }))).toEqual(['child2']);
  });
  it('refuses an unknown sort field, naming it', async () => {
    const r = await api.post('/calls/stream_query', { project_id: project, sort_by: [{ field: 'nope; DROP TABLE x', direction: 'asc' }] });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe('sort_by[0].field');
  });
  it('never mixes projects', async () => {
    expect(await api.jsonl('/calls/stream_query', { project_id: 'acme/empty' })).toEqual([]);
  });
});

describe('bad input and auth', () => {
  it('names the field of a malformed request', async () => {
    const r = await api.post('/call/start', start({ started_at: 'yesterday' }));
    expect(r.status).toBe(422);
    expect(r.body.field).toBe('start.started_at');
    expect(r.body.reason).toContain('start.started_at');
    const r2 = await api.post('/call/end', { end: { project_id: 'no-slash', id: 'x', ended_at: '2024-01-01T00:00:00Z' } });
    expect(r2.status).toBe(422);
    expect(r2.body.field).toBe('end.project_id');
    const r3 = await api.post('/calls/stream_query', { project_id: P, limit: 1.5 });
    expect(r3.status).toBe(422);
    expect(r3.body.field).toBe('limit');
  });
  it('answers invalid JSON and oversized bodies with 4xx, not 500', async () => {
    const r = await api.raw('/call/start', '{"start": ');
    expect(r.status).toBe(400);
    expect(r.body.reason).toMatch(/invalid JSON/);
    expect(await postOversized(weft.url, '/call/start', 33 * 1024 * 1024, api.authorization!)).toBe(413);
  });
  it('requires credentials in the scheme the endpoint takes', async () => {
    expect((await api.withAuth(null).post('/calls/query_stats', { project_id: P })).status).toBe(401);
    expect((await api.withAuth('Bearer abc').post('/calls/query_stats', { project_id: P })).status).toBe(401);
    expect((await api.withAuth('Basic !!!').post('/calls/query_stats', { project_id: P })).status).toBe(401);
    expect(
      (await api.withAuth(`Basic ${Buffer.from('api:').toString('base64')}`).post('/calls/query_stats', { project_id: P })).status,
    ).toBe(401);
    expect((await api.withAuth('Basic abc').post('/v1/preview/models', { project: 'p', name: 'n', base_model: 'b' })).status).toBe(401);
  });
});
