import { describe, expect, it } from 'vitest';
import { basicAuth } from './helpers/client';
import { createKey } from './helpers/keys';
import { useWeft } from './helpers/fixture';

const P = 'acme/feedback';
const callRef = (id: string) => `weave:///${P}/call/${id}`;

const { api } = useWeft();

const replace = (over: Record<string, unknown>) =>
  api.post('/feedback/replace', {
    project_id: P,
    svc_ref: callRef('c1'),
    feedback_type: 'custom',
    payload: {},
    feedback_id: '00000000-0000-7000-8000-000000000000',
    ...over,
  });
const feedbackQuery = async (body: Record<string, unknown>) => {
  const r = await api.post('/feedback/query', { project_id: P, ...body });
  expect(r.status, r.text).toBe(200);
  return r.body.result as Record<string, any>[];
};

describe('/feedback/replace', () => {
  it('creates when feedback_id matches nothing, with a generated UUIDv7 and the caller as svc_user_id', async () => {
    const r = await replace({ payload: { score: 3, note: 'ok' }, svc_user_id: 'spoofed' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.body.svc_user_id).toMatch(/^user-/);
    expect(r.body.svc_user_id).not.toBe('spoofed');
    expect(r.body.payload).toEqual({ score: 3, note: 'ok' });
    expect(r.body.created_at).toMatch(/Z$/);
  });

  it('replaces the record named by feedback_id; the new record takes the client id when given', async () => {
    const first = await replace({ svc_ref: callRef('c2'), payload: { score: 1 } });
    const clientId = '0190f0e0-0000-7000-8000-0000000000aa';
    const second = await replace({ svc_ref: callRef('c2'), payload: { score: 9 }, feedback_id: first.body.id, id: clientId });
    expect(second.status, second.text).toBe(200);
    expect(second.body.id).toBe(clientId);
    const rows = await feedbackQuery({ query: { $expr: { $eq: [{ $getField: 'svc_ref' }, { $literal: callRef('c2') }] } } });
    expect(rows.map((r) => [r.id, r.payload.score])).toEqual([[clientId, 9]]);
    // A replacement that fails validation leaves the old record in place.
    const bad = await replace({ svc_ref: callRef('c2'), feedback_id: clientId, feedback_type: 'wandb.note.1', payload: { note: '' } });
    expect(bad.status).toBe(400);
    expect(await feedbackQuery({ fields: ['id'], query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: clientId }] } } })).toHaveLength(
      1,
    );
  });

  it('validates ids, refs, reserved types and the payload size', async () => {
    expect((await replace({ id: 'not-a-uuid' })).body.field).toBe('id');
    expect((await replace({ svc_ref: 'nope' })).body.field).toBe('svc_ref');
    expect((await replace({ svc_ref: 'weave:///other/proj/call/x' })).status).toBe(400);
    expect((await replace({ feedback_type: 'wandb.reaction.1', payload: { emoji: 'not emoji' } })).status).toBe(400);
    expect((await replace({ feedback_type: 'wandb.reaction.1', payload: { emoji: '👍' } })).status).toBe(200);
    expect((await replace({ runnable_ref: `weave:///${P}/op/x:abc` })).body.field).toBe('runnable_ref');
    const ann = await replace({
      feedback_type: 'wandb.annotation.quality',
      annotation_ref: `weave:///${P}/object/other:abc`,
      payload: { value: 1 },
    });
    expect(ann.status).toBe(400);
    // A spec that does not exist.
    const missing = await replace({
      feedback_type: 'wandb.annotation.quality',
      annotation_ref: `weave:///${P}/object/quality:abc`,
      payload: { value: 1 },
    });
    expect([missing.status, missing.body.field]).toEqual([400, 'annotation_ref']);
    const annotation = async (spec: string, schema: unknown, value: unknown) => {
      const obj = await api.post('/obj/create', {
        obj: { project_id: P, object_id: spec, val: { name: spec, field_schema: schema }, builtin_object_class: 'AnnotationSpec' },
      });
      expect(obj.status, obj.text).toBe(200);
      return replace({
        feedback_type: `wandb.annotation.${spec}`,
        annotation_ref: `weave:///${P}/object/${spec}:${obj.body.digest}`,
        payload: { value },
      });
    };
    // The value is checked against the spec's field_schema, as the reference does.
    expect((await annotation('quality', { type: 'integer', minimum: 1, maximum: 5 }, 4)).status).toBe(200);
    expect((await annotation('quality', { type: 'integer', minimum: 1, maximum: 5 }, 3.0)).status).toBe(200);
    const over = await annotation('quality', { type: 'integer', minimum: 1, maximum: 5 }, 9);
    expect([over.status, over.body.field]).toEqual([400, 'payload.value']);
    expect(over.body.reason).toContain('Feedback payload does not match annotation spec');
    expect((await annotation('quality', { type: 'integer', minimum: 1, maximum: 5 }, 2.5)).status).toBe(400);
    expect((await annotation('tone', { type: 'string', enum: ['kind', 'rude'] }, 'kind')).status).toBe(200);
    expect((await annotation('tone', { type: 'string', enum: ['kind', 'rude'] }, 'meh')).status).toBe(400);
    expect((await annotation('ok', { type: 'boolean' }, false)).status).toBe(200);
    expect((await annotation('ok', { type: 'boolean' }, 'yes')).status).toBe(400);
    expect((await annotation('why', { type: 'string', maxLength: 5 }, 'short')).status).toBe(200);
    expect((await annotation('why', { type: 'string', maxLength: 5 }, 'too long')).status).toBe(400);
    expect((await annotation('anything', {}, { any: ['thing'] })).status).toBe(200);
    const badSchema = await annotation('broken', { type: 'no-such-type' }, 1);
    expect([badSchema.status, badSchema.body.field]).toEqual([400, 'annotation_ref']);
    // Feedback given in an annotation queue names a live queue of the project.
    const noQueue = await replace({ payload: { a: 1 }, queue_id: '00000000-0000-7000-8000-000000000001' });
    expect([noQueue.status, noQueue.body.field]).toEqual([400, 'queue_id']);
    const queue = await api.post('/annotation_queues', { project_id: P, name: 'q', scorer_refs: [] });
    const inQueue = await replace({ svc_ref: callRef('c9'), payload: { a: 1 }, queue_id: queue.body.id });
    expect(inQueue.status, inQueue.text).toBe(200);
    const stored = await feedbackQuery({
      fields: ['queue_id'],
      query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: inQueue.body.id }] } },
    });
    expect(stored).toEqual([{ queue_id: queue.body.id }]);
    const big = await replace({ payload: { blob: 'x'.repeat(1024 * 1024) } });
    expect(big.status).toBe(400);
    expect(big.body.reason).toContain('Feedback payload too large');
    expect(big.body.field).toBe('payload');
  });
});

describe('/feedback/query', () => {
  it('selects payload.<path>, filters and sorts by payload fields, pages', async () => {
    for (const [i, label] of ['b', 'a', 'c', 'a'].entries()) {
      const r = await replace({
        svc_ref: callRef(`q${i}`),
        feedback_type: 'rating',
        payload: { rating: { stars: i + 1, label }, tags: ['t'] },
      });
      expect(r.status).toBe(200);
    }
    const typeIsRating = { $eq: [{ $getField: 'feedback_type' }, { $literal: 'rating' }] };
    const rows = await feedbackQuery({
      fields: ['svc_ref', 'payload.rating.stars', 'payload.rating.label'],
      query: { $expr: typeIsRating },
      sort_by: [{ field: 'payload.rating.stars', direction: 'desc' }],
    });
    expect(rows).toEqual([
      { svc_ref: callRef('q3'), 'payload.rating.stars': '4', 'payload.rating.label': 'a' },
      { svc_ref: callRef('q2'), 'payload.rating.stars': '3', 'payload.rating.label': 'c' },
      { svc_ref: callRef('q1'), 'payload.rating.stars': '2', 'payload.rating.label': 'a' },
      { svc_ref: callRef('q0'), 'payload.rating.stars': '1', 'payload.rating.label': 'b' },
    ]);
    const labelled = await feedbackQuery({
      fields: ['svc_ref'],
      query: {
        $expr: {
          $and: [
            typeIsRating,
            { $eq: [{ $getField: 'payload.rating.label' }, { $literal: 'a' }] },
            { $gt: [{ $getField: 'payload.rating.stars' }, { $literal: 2 }] },
          ],
        },
      },
    });
    expect(labelled.map((r) => r.svc_ref)).toEqual([callRef('q3')]);
    const page = await feedbackQuery({
      fields: ['svc_ref'],
      query: { $expr: typeIsRating },
      sort_by: [{ field: 'payload.rating.stars', direction: 'asc' }],
      limit: 2,
      offset: 1,
    });
    expect(page.map((r) => r.svc_ref)).toEqual([callRef('q1'), callRef('q2')]);
    const all = await feedbackQuery({ query: { $expr: typeIsRating }, limit: 1 });
    expect(Object.keys(all[0]!).sort()).toEqual(
      // The interface's names, and the reference SDK's (weave_ref, wb_user_id) alongside.
      [
        'annotation_ref',
        'call_ref',
        'created_at',
        'creator',
        'feedback_type',
        'id',
        'payload',
        'project_id',
        'queue_id',
        'runnable_ref',
        'svc_ref',
        'svc_user_id',
        'trigger_ref',
        'weave_ref',
        'wb_user_id',
      ].sort(),
    );
    expect(all[0]!.weave_ref).toBe(all[0]!.svc_ref);
    expect(all[0]!.wb_user_id).toBe(all[0]!.svc_user_id);
    expect(all[0]!.payload).toEqual({ rating: { stars: 1, label: 'b' }, tags: ['t'] });
    expect(await feedbackQuery({ fields: ['count(*)'], query: { $expr: typeIsRating } })).toEqual([{ 'count(*)': 4 }]);
  });

  it('answers 400 naming an unknown field in fields, query or sort', async () => {
    const f = await api.post('/feedback/query', { project_id: P, fields: ['nope'] });
    expect(f.status).toBe(400);
    expect(f.body.reason).toContain('Unknown field: nope');
    const q = await api.post('/feedback/query', { project_id: P, query: { $expr: { $eq: [{ $getField: 'nope' }, { $literal: 1 }] } } });
    expect(q.status).toBe(400);
    const s = await api.post('/feedback/query', { project_id: P, sort_by: [{ field: 'nope', direction: 'asc' }] });
    expect(s.status).toBe(400);
    expect(s.body.field).toBe('sort_by[0].field');
  });
});

describe('calls: expand_columns and include_feedback', () => {
  it('expands ref columns to the referenced values and attaches feedback per call', async () => {
    const model = await api.post('/obj/create', {
      obj: { project_id: P, object_id: 'model', val: { temperature: 0.5, prompt: 'weave:///acme/feedback/object/prompt:missing' } },
    });
    const modelRef = `weave:///${P}/object/model:${model.body.digest}`;
    const ids: string[] = [];
    for (const i of [0, 1]) {
      const s = await api.post('/call/start', {
        start: { project_id: P, op_name: 'predict', started_at: `2024-05-01T12:00:0${i}Z`, attributes: {}, inputs: { model: modelRef, i } },
      });
      expect(s.status).toBe(200);
      ids.push(s.body.id);
    }
    await replace({ svc_ref: callRef(ids[0]!), feedback_type: 'thumbs', payload: { up: true } });

    // Calls are written through the bus: wait until both are visible.
    let calls: any[] = [];
    for (let t = 0; t < 50 && calls.length < 2; t++) {
      calls = await api.jsonl('/calls/stream_query', {
        project_id: P,
        filter: { call_ids: ids },
        expand_columns: ['inputs.model'],
        include_feedback: true,
      });
      if (calls.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(calls).toHaveLength(2);
    for (const c of calls)
      expect(c.inputs.model).toEqual({ temperature: 0.5, prompt: 'weave:///acme/feedback/object/prompt:missing', _ref: modelRef });
    const first = calls.find((c) => c.id === ids[0]);
    const second = calls.find((c) => c.id === ids[1]);
    expect(first.summary.weave.feedback).toHaveLength(1);
    expect(first.summary.weave.feedback[0]).toMatchObject({ feedback_type: 'thumbs', payload: { up: true }, svc_ref: callRef(ids[0]!) });
    expect(second.summary.weave.feedback).toEqual([]);

    // return_expanded_column_values=false leaves refs as they are; input_refs filters still work.
    const plain = await api.jsonl('/calls/stream_query', {
      project_id: P,
      filter: { input_refs: [modelRef] },
      expand_columns: ['inputs.model'],
      return_expanded_column_values: false,
    });
    expect(plain.map((c) => c.inputs.model)).toEqual([modelRef, modelRef]);
    // A ref that does not resolve stays a string.
    const deeper = await api.jsonl('/calls/stream_query', {
      project_id: P,
      filter: { call_ids: [ids[0]!] },
      expand_columns: ['inputs.model', 'inputs.model.prompt'],
    });
    expect(deeper[0].inputs.model.prompt).toBe('weave:///acme/feedback/object/prompt:missing');
  });

  it('records feedback under another caller as that caller', async () => {
    const other = api.withAuth(basicAuth((await createKey(api, 'another-user', ['acme'])).key));
    const r = await other.post('/feedback/replace', {
      project_id: P,
      svc_ref: callRef('z'),
      feedback_type: 'custom',
      payload: {},
      feedback_id: 'x',
    });
    expect(r.status).toBe(200);
    const mine = await replace({ svc_ref: callRef('z') });
    expect(r.body.svc_user_id).not.toBe(mine.body.svc_user_id);
  });
});
