import { describe, expect, it } from 'vitest';
import { endpoints, extraEndpoints, parseBody } from '../src';

const start = { project_id: 'acme/p', op_name: 'op', started_at: '2024-01-01T00:00:00Z' };

describe('the reference SDK spellings of a request', () => {
  it('drops null for optional members the schema does not allow null for', () => {
    const q = parseBody(endpoints.callsStreamQuery.request, {
      project_id: 'acme/p',
      filter: { op_names: null, trace_roots_only: null, call_ids: ['a'] },
      limit: null,
      offset: null,
      sort_by: null,
      query: null,
      columns: null,
      expand_columns: null,
      include_costs: null,
    });
    expect(q).toMatchObject({ project_id: 'acme/p', filter: { call_ids: ['a'] }, include_costs: false });
    expect(q.limit).toBeUndefined();
    expect(q.filter).not.toHaveProperty('op_names');
    const t = parseBody(endpoints.tableQuery.request, {
      project_id: 'acme/p',
      digest: 'd',
      filter: { row_digests: null },
      limit: null,
      sort_by: null,
    });
    expect(t).toEqual({ project_id: 'acme/p', digest: 'd', filter: {} });
  });

  it('never touches user data: null and wb_ keys inside inputs, output, payload and rows stay', () => {
    const s = parseBody(endpoints.callStart.request, {
      start: { ...start, inputs: { a: null, wb_user_id: 'x', n: { b: null } }, attributes: { wb_run_id: null } },
    });
    expect(s.start.inputs).toEqual({ a: null, wb_user_id: 'x', n: { b: null } });
    expect(s.start.attributes).toEqual({ wb_run_id: null });
    const e = parseBody(endpoints.callEnd.request, {
      end: { project_id: 'acme/p', id: 'c', ended_at: '2024-01-01T00:00:01Z', output: null, exception: null, summary: { usage: {} } },
    });
    expect(e.end).toHaveProperty('output', null);
    const f = parseBody(extraEndpoints.feedbackCreate.request, {
      project_id: 'acme/p',
      weave_ref: 'weave:///acme/p/call/c',
      feedback_type: 'x',
      payload: { note: null, wb_user_id: 'u' },
    });
    expect(f.payload).toEqual({ note: null, wb_user_id: 'u' });
    const tc = parseBody(extraEndpoints.tableCreate.request, {
      table: { project_id: 'acme/p', rows: [{ a: null }], expected_digest: null },
    });
    expect(tc.table.rows).toEqual([{ a: null }]);
  });

  it('reads wb_* and weave_ref as the svc_ members, in bodies, batches and filters', () => {
    const s = parseBody(endpoints.callStart.request, { start: { ...start, wb_run_id: 'run', wb_run_step: 3, wb_user_id: 'ignored' } });
    expect(s.start).toMatchObject({ svc_run_id: 'run', svc_run_step: 3 });
    const b = parseBody(endpoints.callUpsertBatch.request, {
      batch: [
        { mode: 'end', req: { end: { project_id: 'acme/p', id: 'c', ended_at: '2024-01-01T00:00:01Z', summary: {}, wb_run_step_end: 9 } } },
      ],
    });
    expect(b.batch[0]).toMatchObject({ mode: 'end', req: { end: { svc_run_step_end: 9 } } });
    const q = parseBody(endpoints.callsQueryStats.request, { project_id: 'acme/p', filter: { wb_user_ids: ['u'], wb_run_ids: ['r'] } });
    expect(q.filter).toEqual({ svc_user_ids: ['u'], svc_run_ids: ['r'] });
    const f = parseBody(endpoints.feedbackReplace.request, {
      project_id: 'acme/p',
      weave_ref: 'weave:///acme/p/call/c',
      feedback_type: 'x',
      payload: {},
      feedback_id: 'f',
    });
    expect(f.svc_ref).toBe('weave:///acme/p/call/c');
    // The interface's own name wins when both are sent.
    const both = parseBody(endpoints.callStart.request, { start: { ...start, svc_run_id: 'ours', wb_run_id: 'theirs' } });
    expect(both.start.svc_run_id).toBe('ours');
  });

  it('answers a body that does not fit with 422 naming the field', () => {
    expect(() => parseBody(endpoints.callsStreamQuery.request, { project_id: 'acme/p', limit: 1.5 })).toThrow(
      expect.objectContaining({ status: 422, field: 'limit' }),
    );
    expect(() => parseBody(endpoints.callStart.request, { start: { ...start, op_name: null } })).toThrow(
      expect.objectContaining({ status: 422, field: 'start.op_name' }),
    );
  });
});
