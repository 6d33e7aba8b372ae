import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';

/**
 * Differences from the reference server (Weave 0.52.29) that its own test suite found (issue
 * 39), each pinned here by what the reference answers for the same request.
 */

const { api } = useWeft();

const ok = <T extends { status: number; text: string }>(r: T): T => {
  expect(r.status, r.text).toBe(200);
  return r;
};

describe('the reference names of the svc_ call fields in queries (wb_run_id, wb_run_step, wb_user_id)', () => {
  const P = 'acme/wb-fields';
  const started = async (id: string, runId: string, step: number) =>
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id, trace_id: id, op_name: 'op', started_at: '2024-05-01T12:00:00Z', wb_run_id: runId, wb_run_step: step },
      }),
    );

  it('filters, sorts and projects on them as on the svc_ fields', async () => {
    await started('c1', 'run-a', 2);
    await started('c2', 'run-b', 1);
    ok(await api.post('/call/end', { end: { project_id: P, id: 'c1', ended_at: '2024-05-01T12:00:01Z', wb_run_step_end: 7 } }));

    const byRun = await api.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'wb_run_id' }, { $literal: 'run-a' }] } },
    });
    expect(byRun.map((c) => c.id)).toEqual(['c1']);

    const byStep = await api.jsonl('/calls/stream_query', { project_id: P, sort_by: [{ field: 'wb_run_step', direction: 'asc' }] });
    expect(byStep.map((c) => c.id)).toEqual(['c2', 'c1']);
    const byStepEnd = await api.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $gt: [{ $getField: 'wb_run_step_end' }, { $literal: 5 }] } },
    });
    expect(byStepEnd.map((c) => c.id)).toEqual(['c1']);
    const byUser = await api.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $not: [{ $eq: [{ $getField: 'wb_user_id' }, { $literal: '' }] }] } },
    });
    expect(byUser).toHaveLength(2);

    const projected = await api.jsonl('/calls/stream_query', {
      project_id: P,
      columns: ['wb_run_id', 'wb_run_step', 'wb_run_step_end'],
      sort_by: [
        { field: 'started_at', direction: 'asc' },
        { field: 'id', direction: 'asc' },
      ],
    });
    expect(projected.map((c) => [c.id, c.wb_run_id, c.wb_run_step, c.wb_run_step_end])).toEqual([
      ['c1', 'run-a', 2, 7],
      ['c2', 'run-b', 1, null],
    ]);
    expect(projected[0]).toMatchObject({ svc_run_id: 'run-a', svc_run_step: 2 });

    const count = ok(
      await api.post('/calls/query_stats', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: 'wb_run_step' }, { $literal: 1 }] } },
      }),
    );
    expect(count.body.count).toBe(1);

    // The reference suite's thread filter with a run-id query: a thread list matching no call counts 0.
    const hasRun = { $expr: { $not: [{ $eq: [{ $getField: 'wb_run_id' }, { $literal: null }] }] } };
    for (const thread_ids of [['none'], []]) {
      const r = ok(await api.post('/calls/query_stats', { project_id: P, limit: 1, query: hasRun, filter: { thread_ids } }));
      expect(r.body.count, JSON.stringify(thread_ids)).toBe(0);
    }
    expect(ok(await api.post('/calls/query_stats', { project_id: P, limit: 1, query: hasRun })).body.count).toBe(1);
  });
});

describe('/table/query sort entries', () => {
  const P = 'acme/table-sort';

  it('takes {field, direction} (the reference SDK) as well as {field, order} (the seed), in the same order', async () => {
    const t = ok(await api.post('/table/create', { table: { project_id: P, rows: [{ n: 2 }, { n: 3 }, { n: 1 }] } }));
    const sorted = async (entry: Record<string, string>) => {
      const r = ok(await api.post('/table/query', { project_id: P, digest: t.body.digest, sort_by: [entry] }));
      // The seed's answer shape: rows of {digest, val, original_index}.
      expect(Object.keys(r.body)).toEqual(['rows']);
      expect(Object.keys(r.body.rows[0]).sort()).toEqual(['digest', 'original_index', 'val']);
      return r.body.rows.map((row: { val: { n: number } }) => row.val.n);
    };
    expect(await sorted({ field: 'n', direction: 'desc' })).toEqual([3, 2, 1]);
    expect(await sorted({ field: 'n', order: 'desc' })).toEqual([3, 2, 1]);
    expect(await sorted({ field: 'n', direction: 'asc' })).toEqual([1, 2, 3]);

    const stream = await api.jsonl('/table/query_stream', {
      project_id: P,
      digest: t.body.digest,
      sort_by: [{ field: 'n', direction: 'desc' }],
    });
    expect(stream.map((row) => row.val.n)).toEqual([3, 2, 1]);

    const bad = await api.post('/table/query', { project_id: P, digest: t.body.digest, sort_by: [{ field: 'n', direction: 'up' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.reason ?? bad.text).toContain('sort_by[0]');
  });
});

describe('/feedback/query rows in the spelling of the caller', () => {
  const P = 'acme/feedback-names';
  const ref = `weave:///${P}/call/c1`;
  /** Every member of weave 0.52.29's `Feedback` model (extra="forbid"). */
  const REFERENCE_FEEDBACK_MODEL = [
    'id',
    'project_id',
    'weave_ref',
    'creator',
    'feedback_type',
    'payload',
    'annotation_ref',
    'runnable_ref',
    'call_ref',
    'trigger_ref',
    'queue_id',
    'wb_user_id',
    'created_at',
  ];

  it('answers the SDK in the reference names only, and the interface callers with svc_ names', async () => {
    ok(await api.post('/feedback/create', { project_id: P, weave_ref: ref, feedback_type: 'custom', payload: { a: 1 } }));
    const query = { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: ref }] } };

    // The 0.52 SDK: pydantic's model_dump_json, every unset member null.
    const sdk052 = ok(
      await api.post('/feedback/query', {
        project_id: P,
        fields: null,
        query,
        sort_by: [{ field: 'created_at', direction: 'asc' }],
        limit: null,
        offset: null,
      }),
    ).body.result;
    expect(sdk052).toHaveLength(1);
    for (const key of Object.keys(sdk052[0])) expect(REFERENCE_FEEDBACK_MODEL).toContain(key);
    expect(sdk052[0]).toMatchObject({ weave_ref: ref, project_id: P, payload: { a: 1 } });
    expect(typeof sdk052[0].wb_user_id).toBe('string');

    // The 0.54 SDK (its vendored client's headers, no nulls): `weave_ref` is required by its model.
    const sdk054 = ok(
      await api.post('/feedback/query', { project_id: P, query }, { 'x-stainless-lang': 'python', 'x-weave-client-capabilities': 'x' }),
    ).body.result;
    expect(sdk054[0]).toMatchObject({ weave_ref: ref });
    expect(sdk054[0]).not.toHaveProperty('svc_ref');

    // The interface's own callers: the documented svc_ names.
    const ours = ok(
      await api.post('/feedback/query', { project_id: P, query: { $expr: { $eq: [{ $getField: 'svc_ref' }, { $literal: ref }] } } }),
    ).body.result;
    expect(ours[0]).toMatchObject({ svc_ref: ref });
    expect(typeof ours[0].svc_user_id).toBe('string');
  });
});

describe('reactions', () => {
  const P = 'acme/reactions';
  const ref = `weave:///${P}/call/c1`;

  it('store the alias, detoned emoji and detoned alias in the payload, and answer them on create', async () => {
    const made = ok(
      await api.post('/feedback/create', { project_id: P, weave_ref: ref, feedback_type: 'wandb.reaction.1', payload: { emoji: '👍🏻' } }),
    );
    const expected = { emoji: '👍🏻', alias: ':thumbs_up_light_skin_tone:', detoned: '👍', detoned_alias: ':thumbs_up:' };
    expect(made.body.payload).toEqual(expected);
    const rows = ok(await api.post('/feedback/query', { project_id: P, fields: ['payload'] })).body.result;
    expect(rows).toEqual([{ payload: expected }]);
    // Grouping by the detoned alias is what the UI's reaction counts read.
    const grouped = ok(
      await api.post('/feedback/query', {
        project_id: P,
        fields: ['id'],
        query: { $expr: { $eq: [{ $getField: 'payload.detoned_alias' }, { $literal: ':thumbs_up:' }] } },
      }),
    ).body.result;
    expect(grouped).toHaveLength(1);
  });
});

describe('calls filtered and sorted by their feedback (feedback.[type].payload…)', () => {
  const P = 'acme/by-feedback';
  const SCORER = `weave:///${P}/op/my_scorer:abc`;
  const TYPE = 'wandb.runnable.my_scorer';
  const outputs = ['a', 'x', 'c', 'y'];
  const expected = ['a', 'b', 'c', 'd'];

  const seed = async () => {
    for (let i = 0; i < 4; i++) {
      ok(
        await api.post('/call/start', {
          start: { project_id: P, id: `m${i}`, trace_id: `t${i}`, op_name: 'my_model', started_at: `2024-05-01T12:00:0${i}Z` },
        }),
      );
      ok(
        await api.post('/feedback/create', {
          project_id: P,
          weave_ref: `weave:///${P}/call/m${i}`,
          feedback_type: TYPE,
          runnable_ref: SCORER,
          call_ref: `weave:///${P}/call/s${i}`,
          payload: { output: { model_output: outputs[i], expected: expected[i], match: outputs[i] === expected[i] } },
        }),
      );
    }
    // Feedback of another type must not be read for this one.
    ok(
      await api.post('/feedback/create', {
        project_id: P,
        weave_ref: `weave:///${P}/call/m1`,
        feedback_type: 'custom',
        payload: { output: { model_output: 'zzz' } },
      }),
    );
    // A call without feedback.
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id: 'bare', trace_id: 'tb', op_name: 'other', started_at: '2024-05-01T12:00:09Z' },
      }),
    );
  };

  const ids = async (body: Record<string, unknown>) =>
    (await api.jsonl('/calls/stream_query', { project_id: P, filter: { op_names: ['my_model'] }, ...body })).map((c) => c.id);
  const field = (f: string) => `feedback.[${TYPE}].payload.output.${f}`;

  it('sorts and filters as the reference', async () => {
    await seed();
    const sorts: [string[], string[]][] = [
      [[field('model_output')], ['m0', 'm2', 'm1', 'm3']],
      [[field('expected')], ['m0', 'm1', 'm2', 'm3']],
      [
        [field('match'), field('model_output')],
        ['m1', 'm3', 'm0', 'm2'],
      ],
    ];
    for (const [fields, asc] of sorts) {
      expect(await ids({ sort_by: fields.map((f) => ({ field: f, direction: 'asc' })) })).toEqual(asc);
      expect(await ids({ sort_by: fields.map((f) => ({ field: f, direction: 'desc' })) })).toEqual([...asc].reverse());
    }
    const filters: [string, string, string[], string[]][] = [
      [field('model_output'), 'a', ['m0'], ['m1', 'm2', 'm3']],
      [field('expected'), 'c', ['m2'], ['m3']],
      [field('match'), 'false', ['m1', 'm3'], ['m0', 'm2']],
    ];
    for (const [f, value, eq, gt] of filters) {
      expect(await ids({ query: { $expr: { $eq: [{ $getField: f }, { $literal: value }] } } })).toEqual(eq);
      expect(await ids({ query: { $expr: { $gt: [{ $getField: f }, { $literal: value }] } } })).toEqual(gt);
    }
    // Across ops, with the runnable ref, and counted the same way.
    const byRunnable = await api.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: `feedback.[${TYPE}].runnable_ref` }, { $literal: SCORER }] } },
    });
    expect(byRunnable.map((c) => c.id)).toEqual(['m0', 'm1', 'm2', 'm3']);
    const stats = ok(
      await api.post('/calls/query_stats', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: field('match') }, { $literal: 'true' }] } },
      }),
    );
    expect(stats.body.count).toBe(2);

    // The reference's InvalidFieldError ("Invalid feedback path"): 422.
    const bad = await api.post('/calls/stream_query', { project_id: P, sort_by: [{ field: 'feedback.nope', direction: 'asc' }] });
    expect(bad.status).toBe(422);
    expect(bad.body.reason).toContain('sort_by[0].field');
  });
});

describe('object versions', () => {
  const P = 'acme/obj-versions';
  const create = async (object_id: string, val: unknown, extra: Record<string, unknown> = {}) =>
    ok(await api.post('/obj/create', { obj: { project_id: P, object_id, val, ...extra } })).body.digest as string;
  const versions = async (object_id: string) =>
    ok(
      await api.post('/objs/query', {
        project_id: P,
        filter: { object_ids: [object_id] },
        sort_by: [{ field: 'created_at', direction: 'asc' }],
      }),
    ).body.objs as { digest: string; version_index: number; is_latest: number; base_object_class: string | null; val: unknown }[];

  it('takes a new version of another type under an existing name', async () => {
    const plain = await create('shared', { a: 1 });
    const dataset = await create('shared', {
      _type: 'Dataset',
      _class_name: 'Dataset',
      _bases: ['Object', 'BaseModel'],
      name: 'shared',
      rows: [],
    });
    const model = await create('shared', { _type: 'MyModel', _class_name: 'MyModel', _bases: ['Model', 'Object', 'BaseModel'], x: 2 });
    const all = await versions('shared');
    expect(all.map((v) => [v.digest, v.version_index, v.base_object_class])).toEqual([
      [plain, 0, null],
      [dataset, 1, 'Dataset'],
      [model, 2, 'Model'],
    ]);
    expect(all.map((v) => v.is_latest)).toEqual([0, 0, 1]);
  });

  it('restores a deleted version when the same content is published again', async () => {
    const v0 = await create('again', { i: 1 });
    const v1 = await create('again', { i: 2 });
    ok(await api.post('/obj/delete', { project_id: P, object_id: 'again', digests: [v0] }));
    expect((await versions('again')).map((v) => v.digest)).toEqual([v1]);
    expect((await api.post('/obj/read', { project_id: P, object_id: 'again', digest: v0 })).status).toBe(404);

    expect(await create('again', { i: 1 })).toBe(v0);
    const back = await versions('again');
    // Created anew, as both references have it: after v1, with its new creation time.
    expect(back.map((v) => [v.digest, v.version_index])).toEqual([
      [v1, 0],
      [v0, 1],
    ]);
    const createdAt = (digest: string) =>
      Date.parse((back as unknown as { digest: string; created_at: string }[]).find((v) => v.digest === digest)!.created_at);
    expect(createdAt(v0)).toBeGreaterThan(createdAt(v1));
    // The re-publish is the latest, as any publish.
    expect(back.find((v) => v.digest === v0)!.is_latest).toBe(1);
    expect(ok(await api.post('/obj/read', { project_id: P, object_id: 'again', digest: v0 })).body.obj).toMatchObject({
      val: { i: 1 },
      deleted_at: null,
    });
    const refs = ok(await api.post('/refs/read_batch', { refs: [`weave:///${P}/object/again:${v0}`] }));
    expect(refs.body.vals).toEqual([{ i: 1 }]);

    // Deleting it again works as before.
    ok(await api.post('/obj/delete', { project_id: P, object_id: 'again', digests: [v0] }));
    expect((await versions('again')).map((v) => v.digest)).toEqual([v1]);
  });
});

describe('/cost/purge and /files/stats', () => {
  const P = 'acme/cost-purge';

  it('purges project prices by id only (the SDK purge_costs), leaving the rest', async () => {
    const made = ok(
      await api.post('/cost/create', {
        project_id: P,
        costs: {
          'my-model': { prompt_token_cost: 1, completion_token_cost: 2 },
          'other-model': { prompt_token_cost: 3, completion_token_cost: 4 },
        },
        wb_user_id: null,
      }),
    ).body.ids as [string, string][];
    const idOf = (llm: string) => made.find(([, l]) => l === llm)![0];
    const llms = async () =>
      (
        ok(
          await api.post('/cost/query', {
            project_id: P,
            fields: ['llm_id', 'pricing_level'],
            query: { $expr: { $eq: [{ $getField: 'pricing_level' }, { $literal: 'project' }] } },
          }),
        ).body.results as { llm_id: string }[]
      )
        .map((r) => r.llm_id)
        .sort();
    expect(await llms()).toEqual(['my-model', 'other-model']);

    // What client.purge_costs sends: an $in of ids (several) or an $eq (one).
    const purged = await api.post('/cost/purge', {
      project_id: P,
      query: { $expr: { $in: [{ $getField: 'id' }, [{ $literal: idOf('my-model') }]] } },
    });
    expect(purged.status, purged.text).toBe(200);
    expect(purged.body).toEqual({});
    expect(await llms()).toEqual(['other-model']);

    // Anything but ids is refused, naming the query; another project's purge touches nothing here.
    const byName = await api.post('/cost/purge', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'llm_id' }, { $literal: 'other-model' }] } },
    });
    expect(byName.status).toBe(400);
    expect(byName.body).toMatchObject({ field: 'query' });
    expect(byName.body.reason).toContain('cost ids');
    ok(
      await api.post('/cost/purge', {
        project_id: 'acme/elsewhere',
        query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: idOf('other-model') }] } },
      }),
    );
    expect(await llms()).toEqual(['other-model']);
    ok(
      await api.post('/cost/purge', {
        project_id: P,
        query: { $expr: { $or: [{ $eq: [{ $getField: 'id' }, { $literal: idOf('other-model') }] }] } },
      }),
    );
    expect(await llms()).toEqual([]);
  });

  it('answers the bytes of the stored files, each file once', async () => {
    const P2 = 'acme/files-stats';
    const empty = ok(await api.post('/files/stats', { project_id: P2 }));
    expect(empty.body).toEqual({ total_size_bytes: 0 });
    const upload = async (content: string) => {
      const form = new FormData();
      form.set('project_id', P2);
      form.set('file', new Blob([content]), 'obj.py');
      const r = await fetch(`${api.baseUrl}/files/create`, { method: 'POST', headers: { authorization: api.authorization! }, body: form });
      expect(r.status).toBe(200);
    };
    await upload('print(1)\n');
    await upload('x'.repeat(250_000));
    await upload('print(1)\n');
    expect(ok(await api.post('/files/stats', { project_id: P2 })).body).toEqual({ total_size_bytes: 9 + 250_000 });
    expect((await api.post('/files/stats', {})).status).toBe(422);
  });
});

describe('/trace/usage, /calls/usage and /project/stats', () => {
  const P = 'acme/usage';
  const T = 'usage-trace';
  const gpt = (prompt: number, completion: number, requests = 1) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    requests,
  });
  const call = async (id: string, parent: string | null, usage?: Record<string, unknown>) => {
    ok(
      await api.post('/call/start', {
        start: {
          project_id: P,
          id,
          trace_id: T,
          parent_id: parent,
          op_name: id,
          started_at: '2024-05-01T12:00:00Z',
          inputs: { big: 'x'.repeat(100) },
        },
      }),
    );
    if (usage) ok(await api.post('/call/end', { end: { project_id: P, id, ended_at: '2024-05-01T12:00:01Z', summary: { usage } } }));
  };

  it('counts each LLM request once, though the SDK rolls children usage up into their parents', async () => {
    ok(
      await api.post('/cost/create', {
        project_id: P,
        costs: { 'gpt-4': { prompt_token_cost: 0.01, completion_token_cost: 0.02, effective_date: '2024-01-01T00:00:00Z' } },
      }),
    );
    // root ─ llm1 (gpt-4 3+1), mid ─ llm2 (gpt-4 2+1); root itself asks claude (10+2). Summaries as
    // the SDK writes them: each parent's usage holds its children's.
    await call('llm1', 'root', { 'gpt-4': gpt(3, 1) });
    await call('llm2', 'mid', { 'gpt-4': gpt(2, 1) });
    await call('mid', 'root', { 'gpt-4': gpt(2, 1) });
    await call('running', 'root');
    await call('root', null, { 'gpt-4': gpt(5, 2, 2), claude: { input_tokens: 10, output_tokens: 2, requests: 1 } });

    const trace = ok(await api.post('/trace/usage', { project_id: P, filter: { trace_ids: [T] } })).body;
    expect(trace.unfinished_call_ids).toEqual(['running']);
    expect(trace.call_usage.running).toEqual({});
    expect(trace.call_usage.mid).toEqual({
      'gpt-4': {
        requests: 1,
        prompt_tokens: 2,
        completion_tokens: 1,
        total_tokens: 3,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
      },
    });
    expect(trace.call_usage.root).toEqual({
      'gpt-4': {
        requests: 2,
        prompt_tokens: 5,
        completion_tokens: 2,
        total_tokens: 7,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
      },
      claude: {
        requests: 1,
        prompt_tokens: 10,
        completion_tokens: 2,
        total_tokens: 12,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
      },
    });

    const roots = ok(await api.post('/calls/usage', { project_id: P, call_ids: ['root', 'nope'], include_costs: true })).body;
    expect(Object.keys(roots.call_usage).sort()).toEqual(['nope', 'root']);
    expect(roots.call_usage.nope).toEqual({});
    const g = roots.call_usage.root['gpt-4'];
    expect(g).toMatchObject({ requests: 2, prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    expect(g.prompt_tokens_total_cost).toBeCloseTo(0.05, 10);
    expect(g.completion_tokens_total_cost).toBeCloseTo(0.04, 10);
    expect(roots.unfinished_call_ids).toEqual(['running']);

    expect((await api.post('/calls/usage', { project_id: P })).status).toBe(422);
    expect((await api.post('/trace/usage', { project_id: P, limit: 10_001 })).status).toBe(422);
  });

  it('answers the bytes stored per kind', async () => {
    const P2 = 'acme/project-stats';
    const empty = ok(await api.post('/project/stats', { project_id: P2 })).body;
    expect(empty).toEqual({
      trace_storage_size_bytes: 0,
      objects_storage_size_bytes: 0,
      tables_storage_size_bytes: 0,
      files_storage_size_bytes: 0,
    });
    ok(
      await api.post('/call/start', {
        start: { project_id: P2, id: 'c', op_name: 'op', started_at: '2024-05-01T12:00:00Z', inputs: { a: 1 } },
      }),
    );
    ok(await api.post('/obj/create', { obj: { project_id: P2, object_id: 'o', val: { k: 'v' } } }));
    ok(await api.post('/obj/create', { obj: { project_id: P2, object_id: 'o', val: { k: 'v' } } }));
    ok(await api.post('/table/create', { table: { project_id: P2, rows: [{ r: 1 }, { r: 22 }] } }));
    const stats = ok(await api.post('/project/stats', { project_id: P2 })).body;
    expect(stats.trace_storage_size_bytes).toBe('{}'.length + '{"a":1}'.length);
    expect(stats.objects_storage_size_bytes).toBe('{"k": "v"}'.length);
    expect(stats.tables_storage_size_bytes).toBe('{"r": 1}'.length + '{"r": 22}'.length);
    expect(stats.files_storage_size_bytes).toBe(0);
    const onlyObjects = ok(
      await api.post('/project/stats', {
        project_id: P2,
        include_trace_storage_size: false,
        include_table_storage_size: false,
        include_file_storage_size: false,
      }),
    ).body;
    expect(onlyObjects).toEqual({ ...empty, objects_storage_size_bytes: stats.objects_storage_size_bytes });
    const none = await api.post('/project/stats', {
      project_id: P2,
      include_trace_storage_size: false,
      include_object_storage_size: false,
      include_table_storage_size: false,
      include_file_storage_size: false,
    });
    expect(none.status).toBe(400);
  });
});

describe('/calls/stats', () => {
  const P = 'acme/call-stats';
  const span = async (id: string, parent: string | null, start: string, end: string, extra: Record<string, unknown> = {}) => {
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id, trace_id: parent ? 'root' : id, parent_id: parent, op_name: id, started_at: start },
      }),
    );
    ok(await api.post('/call/end', { end: { project_id: P, id, ended_at: end, ...extra } }));
  };

  it('answers call and usage metrics per bucket, each LLM request counted once', async () => {
    ok(
      await api.post('/cost/create', {
        project_id: P,
        costs: { 'gpt-4': { prompt_token_cost: 0.01, completion_token_cost: 0.02, effective_date: '2024-01-01T00:00:00Z' } },
      }),
    );
    const usage = { 'gpt-4': { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, requests: 1 } };
    await span('llm', 'root', '2024-05-01T12:05:01Z', '2024-05-01T12:05:01.500Z', { summary: { usage } });
    // The root's summary holds its child's usage, as the SDK rolls it up.
    await span('root', null, '2024-05-01T12:05:00Z', '2024-05-01T12:05:02Z', { summary: { usage } });
    await span('err', null, '2024-05-01T12:40:00Z', '2024-05-01T12:40:01Z', { exception: 'boom' });
    await span('later', null, '2024-05-01T13:10:00Z', '2024-05-01T13:10:01Z', { summary: { usage } });

    const r = ok(
      await api.post('/calls/stats', {
        project_id: P,
        start: '2024-05-01T12:00:00Z',
        end: '2024-05-01T13:00:00Z',
        granularity: 1800,
        call_metrics: [
          { metric: 'call_count' },
          { metric: 'latency_ms', aggregations: ['avg'], percentiles: [50] },
          { metric: 'error_count', aggregations: ['sum'] },
        ],
        usage_metrics: [{ metric: 'input_tokens' }, { metric: 'total_cost' }],
        filter: null,
        timezone: 'UTC',
      }),
    ).body;
    expect(r).toMatchObject({ start: '2024-05-01T12:00:00Z', end: '2024-05-01T13:00:00Z', granularity: 1800, timezone: 'UTC' });
    expect(r.call_buckets).toEqual([
      {
        timestamp: '2024-05-01T12:00:00+00:00',
        sum_call_count: 2,
        avg_latency_ms: 1250,
        p50_latency_ms: 1250,
        sum_error_count: 0,
        count: 2,
      },
      {
        timestamp: '2024-05-01T12:30:00+00:00',
        sum_call_count: 1,
        avg_latency_ms: 1000,
        p50_latency_ms: 1000,
        sum_error_count: 1,
        count: 1,
      },
    ]);
    expect(r.usage_buckets).toHaveLength(2);
    expect(r.usage_buckets[0]).toMatchObject({
      timestamp: '2024-05-01T12:00:00+00:00',
      model: 'gpt-4',
      sum_input_tokens: 3,
      sum_output_tokens: 1,
      count: 1,
    });
    expect(r.usage_buckets[0].sum_total_cost).toBeCloseTo(0.05, 10);
    expect(r.usage_buckets[1]).toEqual({
      timestamp: '2024-05-01T12:30:00+00:00',
      model: 'gpt-4',
      sum_input_tokens: 0,
      sum_total_cost: 0,
      sum_output_tokens: 0,
      count: 0,
    });

    // Buckets align to the caller's time zone.
    const paris = ok(
      await api.post('/calls/stats', {
        project_id: P,
        start: '2024-05-01T12:00:00Z',
        end: '2024-05-01T13:00:00Z',
        granularity: 3600,
        call_metrics: [{ metric: 'call_count' }],
        timezone: 'Europe/Paris',
      }),
    ).body;
    expect(paris.call_buckets.map((b: { timestamp: string }) => b.timestamp)).toEqual(['2024-05-01T14:00:00+02:00']);
    expect(paris.usage_buckets).toEqual([]);

    const tooLong = await api.post('/calls/stats', { project_id: P, start: '2024-01-01T00:00:00Z', end: '2024-03-01T00:00:00Z' });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.field).toBe('end');
    const badZone = await api.post('/calls/stats', { project_id: P, start: '2024-05-01T12:00:00Z', timezone: 'Mars/Olympus' });
    expect(badZone.status).toBe(422);
    expect(badZone.body.field).toBe('timezone');
  });
});

describe('calls filtered and sorted on values inside referenced objects (expand_columns)', () => {
  const P = 'acme/expand-filter';
  const publish = async (name: string, val: unknown) =>
    `weave:///${P}/object/${name}:${ok(await api.post('/obj/create', { obj: { project_id: P, object_id: name, val } })).body.digest}`;

  it('reads the referenced values, through nested expansions, in queries, sorts and counts', async () => {
    const config1 = await publish('config1', { temperature: 0.5, model: 'gpt-4' });
    const config2 = await publish('config2', { temperature: 0.8, model: 'gpt-3.5' });
    const worker1 = await publish('worker1', { id: 1, status: 'active', config: config1 });
    const worker2 = await publish('worker2', { id: 2, status: 'inactive', config: config2 });
    const project = await publish('project', { name: 'p', settings: { debug: true } });
    for (const [id, worker] of [
      ['c1', worker1],
      ['c2', worker2],
    ] as const) {
      ok(
        await api.post('/call/start', {
          start: {
            project_id: P,
            id,
            op_name: 'process',
            started_at: '2024-05-01T12:00:00Z',
            inputs: { worker_config: worker, project_info: project },
          },
        }),
      );
      ok(
        await api.post('/call/end', { end: { project_id: P, id, ended_at: '2024-05-01T12:00:01Z', output: { processed_worker: worker } } }),
      );
    }
    const ids = async (query: unknown, expand_columns: string[], extra: Record<string, unknown> = {}) =>
      (await api.jsonl('/calls/stream_query', { project_id: P, query: { $expr: query }, expand_columns, ...extra })).map((c) => c.id);
    const eq = (field: string, value: unknown) => ({ $eq: [{ $getField: field }, { $literal: value }] });

    expect(
      await ids({ $eq: [{ $convert: { input: { $getField: 'inputs.worker_config.id' }, to: 'double' } }, { $literal: 1 }] }, [
        'inputs.worker_config',
      ]),
    ).toEqual(['c1']);
    expect(await ids(eq('inputs.worker_config.config.model', 'gpt-4'), ['inputs.worker_config', 'inputs.worker_config.config'])).toEqual([
      'c1',
    ]);
    expect(await ids(eq('inputs.project_info.settings.debug', 'true'), ['inputs.project_info'])).toEqual(['c1', 'c2']);
    expect(await ids(eq('output.processed_worker.status', 'active'), ['output.processed_worker'])).toEqual(['c1']);
    // Without the expansion, the field is read from the call itself (a ref string there): no match.
    expect(await ids(eq('inputs.worker_config.status', 'active'), [])).toEqual([]);
    // Sorted by a nested expanded value; values returned expanded as before.
    const sorted = await api.jsonl('/calls/stream_query', {
      project_id: P,
      expand_columns: ['inputs.worker_config', 'inputs.worker_config.config'],
      sort_by: [{ field: 'inputs.worker_config.config.temperature', direction: 'desc' }],
    });
    expect(sorted.map((c) => c.id)).toEqual(['c2', 'c1']);
    expect(sorted[0].inputs.worker_config).toMatchObject({ id: 2, config: { model: 'gpt-3.5' } });
    const stats = ok(
      await api.post('/calls/query_stats', {
        project_id: P,
        query: { $expr: eq('inputs.worker_config.status', 'inactive') },
        expand_columns: ['inputs.worker_config'],
      }),
    );
    expect(stats.body.count).toBe(1);
  });
});

describe('checks the reference makes in its server answer 400, in its words', () => {
  const P = 'acme/server-checks';

  it('refuses a negative limit or offset, and a table sort on an empty or malformed path, with 400 naming the field', async () => {
    for (const [path, body] of [
      ['/calls/query_stats', { project_id: P, limit: -1 }],
      ['/calls/stream_query', { project_id: P, limit: -1 }],
      ['/objs/query', { project_id: P, offset: -2 }],
    ] as const) {
      const r = await api.post(path, body);
      expect(r.status, `${path} ${r.text}`).toBe(400);
      expect(r.body.field).toBe('limit' in body ? 'limit' : 'offset');
    }
    const t = ok(await api.post('/table/create', { table: { project_id: P, rows: [{ a: 1 }, { a: 2 }] } }));
    for (const field of ['', ' ', '.', '..', 'a.', '.a', 'a..b']) {
      const r = await api.post('/table/query', { project_id: P, digest: t.body.digest, sort_by: [{ field, direction: 'asc' }] });
      expect(r.status, JSON.stringify(field)).toBe(400);
      expect(r.body.field).toBe('sort_by[0].field');
    }
    // A malformed body is still the schema's 422.
    expect((await api.post('/calls/query_stats', { project_id: P, limit: 1.5 })).status).toBe(422);
    expect((await api.post('/table/query', { project_id: P, digest: t.body.digest, sort_by: [{ field: 'a' }] })).status).toBe(422);
  });

  it('names too long filter lists and object deletions as the reference does', async () => {
    const r = await api.post('/calls/query_stats', { project_id: P, filter: { call_ids: Array.from({ length: 1001 }, () => 'x') } });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe(
      "filter.call_ids: Parameter: 'call_ids' request length is greater than max length (1000). Actual length: 1001",
    );

    const tooMany = await api.post('/obj/delete', {
      project_id: P,
      object_id: 'o',
      digests: Array.from({ length: 101 }, (_, i) => `d${i}`),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.reason).toContain('Object delete request contains 101 objects. Please delete 100 or fewer objects at a time.');

    const v0 = ok(await api.post('/obj/create', { obj: { project_id: P, object_id: 'o', val: { i: 0 } } })).body.digest;
    const mixed = await api.post('/obj/delete', { project_id: P, object_id: 'o', digests: [v0, "no'pe"] });
    expect(mixed.status).toBe(404);
    expect(mixed.body.reason).toBe(`Delete request contains 2 digests, but found 1 objects to delete. Diff digests: {"no'pe"}`);
    const none = await api.post('/obj/delete', { project_id: P, object_id: 'o', digests: ['a', 'b'] });
    expect(none.body.reason).toBe("Object o (['a', 'b']) not found when deleting.");
    expect((await api.post('/obj/delete', { project_id: P, object_id: 'missing' })).body.reason).toBe(
      'Object missing (None) not found when deleting.',
    );
    // Nothing was deleted by the refused requests.
    expect(ok(await api.post('/obj/read', { project_id: P, object_id: 'o', digest: v0 })).body.obj.val).toEqual({ i: 0 });
    // An empty digest names no version.
    expect((await api.post('/obj/read', { project_id: P, object_id: 'o', digest: '' })).status).toBe(404);
  });
});

describe('builtin object classes derived from other builtin classes', () => {
  const P = 'acme/builtin-inherited';

  it('record the whole hierarchy: base class the parent, leaf class the class itself', async () => {
    const created = ok(
      await api.post('/obj/create', {
        obj: {
          project_id: P,
          object_id: 'inherited',
          val: { name: null, description: null, b: 1, c: 2, additional_field: 'x' },
          builtin_object_class: 'TestOnlyInheritedBaseObject',
        },
      }),
    );
    const read = ok(await api.post('/obj/read', { project_id: P, object_id: 'inherited', digest: created.body.digest })).body.obj;
    expect(read).toMatchObject({ base_object_class: 'TestOnlyNestedBaseObject', leaf_object_class: 'TestOnlyInheritedBaseObject' });
    expect(read.val).toMatchObject({
      _type: 'TestOnlyInheritedBaseObject',
      _class_name: 'TestOnlyInheritedBaseObject',
      _bases: ['TestOnlyNestedBaseObject', 'BaseObject', 'BaseModel'],
    });
    const byBase = ok(await api.post('/objs/query', { project_id: P, filter: { base_object_classes: ['TestOnlyNestedBaseObject'] } }));
    expect(byBase.body.objs.map((o: { object_id: string }) => o.object_id)).toEqual(['inherited']);
  });
});

describe('builtin object classes with a schema: validated and dumped as the reference (model_validate, dump_object)', () => {
  const P = 'acme/builtin-schemas';
  const create = (object_id: string, val: unknown, builtin_object_class?: string) =>
    api.post('/obj/create', { obj: { project_id: P, object_id, val, ...(builtin_object_class ? { builtin_object_class } : {}) } });
  const read = async (object_id: string, digest: string) => ok(await api.post('/obj/read', { project_id: P, object_id, digest })).body.obj;

  it('fills defaults and dumps nested models with their classes, so the digest is the SDK-published one', async () => {
    const sent = {
      primitive: 1,
      nested_base_model: { a: 2, aliased_property_alias: 3 },
      nested_base_object: 'weave:///acme/x/object/n:1',
      stray: 5,
    };
    const created = ok(await create('example', sent, 'TestOnlyExample')).body.digest;
    // What the SDK publishes for TestOnlyExample(primitive=1, nested_base_model=TestOnlyNestedBaseModel(a=2, ...), ...).
    const published = {
      _type: 'TestOnlyExample',
      name: null,
      description: null,
      primitive: 1,
      nested_base_model: {
        _type: 'TestOnlyNestedBaseModel',
        a: 2,
        aliased_property_alias: 3,
        _class_name: 'TestOnlyNestedBaseModel',
        _bases: ['BaseModel'],
      },
      nested_base_object: 'weave:///acme/x/object/n:1',
      _class_name: 'TestOnlyExample',
      _bases: ['BaseObject', 'BaseModel'],
    };
    expect(ok(await create('example-published', published)).body.digest).toBe(created);
    expect((await read('example', created)).val).toEqual(published);
  });

  it('answers 400 naming the field when the value does not fit the class', async () => {
    const missing = await create('nested', { a: 2, aliased_property_alias: 3 }, 'TestOnlyNestedBaseObject');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ field: 'obj.val.b' });
    expect(missing.body.reason).toContain('Field required');
    const wrongType = await create('nested', { b: 'two' }, 'TestOnlyNestedBaseObject');
    expect([wrongType.status, wrongType.body.field]).toEqual([400, 'obj.val.b']);
    // LLMStructuredCompletionModel (a weave.Model) forbids undeclared fields.
    const extra = await create('m', { llm_model_id: 'gpt-4', stray: 1 }, 'LLMStructuredCompletionModel');
    expect([extra.status, extra.body.field]).toEqual([400, 'obj.val.stray']);
    const noModel = await create('m', { default_params: { temperature: 0.5 } }, 'LLMStructuredCompletionModel');
    expect([noModel.status, noModel.body.field]).toEqual([400, 'obj.val.llm_model_id']);
    // A value that names its classes is taken as it is (an edited object), as the reference.
    ok(
      await create(
        'nested',
        { b: 2, _class_name: 'TestOnlyNestedBaseObject', _bases: ['BaseObject', 'BaseModel'] },
        'TestOnlyNestedBaseObject',
      ),
    );
  });

  it('records an LLMStructuredCompletionModel as a Model, with its default parameters', async () => {
    const digest = ok(
      await create(
        'llm',
        { llm_model_id: 'gpt-4', default_params: { temperature: 1, messages_template: [{ role: 'user', content: 'hi' }] } },
        'LLMStructuredCompletionModel',
      ),
    ).body.digest;
    const obj = await read('llm', digest);
    expect(obj).toMatchObject({ base_object_class: 'Model', leaf_object_class: 'LLMStructuredCompletionModel' });
    expect(obj.val._bases).toEqual(['Model', 'Object', 'BaseModel']);
    expect(obj.val.default_params).toMatchObject({ _type: 'LLMStructuredCompletionModelDefaultParams', temperature: 1, max_tokens: null });
    expect(obj.val.default_params.messages_template[0]).toMatchObject({ _type: 'Message', role: 'user', content: 'hi', name: null });
    const byBase = ok(
      await api.post('/objs/query', {
        project_id: P,
        filter: { base_object_classes: ['Model'], leaf_object_classes: ['LLMStructuredCompletionModel'] },
      }),
    );
    expect(byBase.body.objs.map((o: { object_id: string }) => o.object_id)).toEqual(['llm']);
  });
});

describe('summary.weave.costs entries', () => {
  const P = 'acme/cost-entries';

  it("carry the reference's fields only when the call counted no cached tokens (gpt-4o has a cache price)", async () => {
    const at = '2025-09-01T12:00:00Z';
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id: 'c', trace_id: 't', op_name: 'llm', started_at: at, inputs: {}, attributes: {} },
      }),
    );
    const usage = { 'gpt-4o': { requests: 1, prompt_tokens: 1000, completion_tokens: 2000 } };
    ok(await api.post('/call/end', { end: { project_id: P, id: 'c', ended_at: at, output: null, summary: { usage } } }));
    const [call] = await api.jsonl('/calls/stream_query', { project_id: P, include_costs: true });
    const entry = call.summary.weave.costs['gpt-4o'];
    expect(Object.keys(entry).sort()).toEqual(
      [
        'requests',
        'prompt_tokens',
        'completion_tokens',
        'total_tokens',
        'prompt_tokens_total_cost',
        'completion_tokens_total_cost',
        'prompt_token_cost',
        'completion_token_cost',
        'prompt_token_cost_unit',
        'completion_token_cost_unit',
        'effective_date',
        'created_at',
        'provider_id',
        'pricing_level',
        'pricing_level_id',
        'created_by',
      ].sort(),
    );
    expect(entry.prompt_tokens_total_cost).toBeCloseTo(1000 * entry.prompt_token_cost, 12);
  });
});

describe('$contains on a JSON value the call does not have', () => {
  const P = 'acme/contains-missing';

  it('reads it as the empty string, as the reference (JSON_VALUE): it contains "" and nothing else', async () => {
    const at = '2024-05-01T12:00:00Z';
    for (const [id, in_val] of [
      ['has', { str: 'a string' }],
      ['other', { prim: 5 }],
      ['primitive', 'simple'],
    ] as const) {
      ok(
        await api.post('/call/start', {
          start: { project_id: P, id, trace_id: id, op_name: 'op', started_at: at, inputs: { in_val }, attributes: {} },
        }),
      );
    }
    const contains = (substr: string) => ({
      $expr: { $contains: { input: { $getField: 'inputs.in_val.str' }, substr: { $literal: substr } } },
    });
    const ids = async (substr: string) =>
      (
        await api.jsonl('/calls/stream_query', { project_id: P, query: contains(substr), sort_by: [{ field: 'id', direction: 'asc' }] })
      ).map((c) => c.id);
    expect(await ids('')).toEqual(['has', 'other', 'primitive']);
    expect(await ids('str')).toEqual(['has']);
    expect(ok(await api.post('/calls/query_stats', { project_id: P, query: contains('') })).body.count).toBe(3);
  });
});

describe('the differences Weave 0.54-era suite found (issue 49)', () => {
  const usage = (prompt: number, completion: number, total: number, requests = 0) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    requests,
  });
  const withNulls = (u: ReturnType<typeof usage>) => ({ ...u, prompt_tokens_total_cost: null, completion_tokens_total_cost: null });
  const writeCall = async (P: string, id: string, trace: string, parent: string | null, second: number, u?: Record<string, unknown>) => {
    const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
    ok(
      await api.post('/call/start', {
        start: { project_id: P, id, trace_id: trace, parent_id: parent, op_name: 'op', started_at: at(second), inputs: {} },
      }),
    );
    ok(await api.post('/call/end', { end: { project_id: P, id, ended_at: at(second + 1), summary: u ? { usage: u } : {} } }));
  };

  it('/trace/usage and /calls/usage read every summary as the call’s own and sum the descendants (test_trace_usage)', async () => {
    const P = 'acme/usage-054';
    // root 5/5/10, child 2 in / 1 out (no total), grandchild 3/1/4: the reference's 10/7/17.
    await writeCall(P, 'u-root', 'ut', null, 0, { 'gpt-4': { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } });
    await writeCall(P, 'u-child', 'ut', 'u-root', 2, { 'gpt-4': { input_tokens: 2, output_tokens: 1 } });
    await writeCall(P, 'u-leaf', 'ut', 'u-child', 4, { 'gpt-4': { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
    const trace = ok(await api.post('/trace/usage', { project_id: P, filter: { trace_ids: ['ut'] } })).body;
    expect(trace.call_usage['u-root']).toEqual({ 'gpt-4': withNulls(usage(10, 7, 17)) });
    expect(trace.call_usage['u-child']).toEqual({ 'gpt-4': withNulls(usage(5, 2, 7)) });
    const roots = ok(await api.post('/calls/usage', { project_id: P, call_ids: ['u-root'] })).body;
    expect(roots.call_usage['u-root']['gpt-4']).toMatchObject(usage(10, 7, 17));

    // A middle call without usage (test_calls_usage_handles_missing_usage[middle_missing_usage]): root + leaf.
    const full = { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10, requests: 1 };
    await writeCall(P, 'm-root', 'mt', null, 0, { 'gpt-4': full });
    await writeCall(P, 'm-mid', 'mt', 'm-root', 2);
    await writeCall(P, 'm-leaf', 'mt', 'm-mid', 4, { 'gpt-4': { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, requests: 1 } });
    const missing = ok(await api.post('/calls/usage', { project_id: P, call_ids: ['m-root'] })).body;
    expect(missing.call_usage['m-root']['gpt-4']).toMatchObject(usage(8, 6, 14, 2));

    // Analytics agree: the project's totals are the roots' figures.
    const totals = ok(await api.post('/calls/usage', { project_id: P, call_ids: ['u-root', 'm-root'] })).body.call_usage;
    const agg = ok(await api.post('/calls/aggregate', { project_id: P })).body;
    for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const)
      expect(agg.totals[k]).toBe(totals['u-root']['gpt-4'][k] + totals['m-root']['gpt-4'][k]);
  });

  it('filters and sorts calls through an expanded table-row ref (test_filter_calls_by_ref_properties_with_table_rows_simple)', async () => {
    const P = 'acme/row-refs';
    const rows = [
      { input: '1+2', target: 3 },
      { input: '2**4', target: 15 },
      { input: '3**3', target: 27 },
    ];
    const table = ok(await api.post('/table/create', { table: { project_id: P, rows } })).body;
    const dataset = ok(
      await api.post('/obj/create', {
        obj: {
          project_id: P,
          object_id: 'ds',
          val: { _type: 'Dataset', _class_name: 'Dataset', _bases: ['Object'], rows: `weave:///${P}/table/${table.digest}` },
        },
      }),
    ).body;
    const rowRef = (i: number) => `weave:///${P}/object/ds:${dataset.digest}/attr/rows/id/${table.row_digests[i]}`;
    for (let i = 0; i < rows.length; i++) {
      ok(
        await api.post('/call/start', {
          start: {
            project_id: P,
            id: `row-${i}`,
            trace_id: `row-${i}`,
            op_name: 'predict_and_score',
            started_at: '2025-01-01T00:00:00Z',
            inputs: { example: rowRef(i) },
          },
        }),
      );
    }
    const q = (expr: unknown, extra: object = {}) =>
      api.jsonl('/calls/stream_query', { project_id: P, query: { $expr: expr }, expand_columns: ['inputs.example'], ...extra });
    expect((await q({ $eq: [{ $getField: 'inputs.example.input' }, { $literal: '1+2' }] })).map((c) => c.id)).toEqual(['row-0']);
    const over3 = await q({ $gt: [{ $convert: { input: { $getField: 'inputs.example.target' }, to: 'double' } }, { $literal: 3 }] });
    expect(over3.map((c) => c.id).sort()).toEqual(['row-1', 'row-2']);
    const sorted = await api.jsonl('/calls/stream_query', {
      project_id: P,
      expand_columns: ['inputs.example'],
      sort_by: [{ field: 'inputs.example.target', direction: 'desc' }],
    });
    expect(sorted.map((c) => c.id)).toEqual(['row-2', 'row-1', 'row-0']);
    // Without the expansion, the field is the ref's text: nothing matches.
    expect(
      await api.jsonl('/calls/stream_query', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: 'inputs.example.input' }, { $literal: '1+2' }] } },
      }),
    ).toEqual([]);
  });

  it('filters calls by annotation_queue_items.queue_id (no match for an unknown queue)', async () => {
    const P = 'acme/queue-filter';
    for (const id of ['q-a', 'q-b', 'q-c'])
      ok(
        await api.post('/call/start', {
          start: { project_id: P, id, trace_id: id, op_name: 'op', started_at: '2025-01-01T00:00:00Z', inputs: {} },
        }),
      );
    const queue = ok(await api.post('/annotation_queues', { project_id: P, name: 'review', scorer_refs: [] })).body.id;
    ok(await api.post(`/annotation_queues/${queue}/items`, { project_id: P, call_ids: ['q-a', 'q-c'], display_fields: [] }));
    const inQueue = (id: string) =>
      api.jsonl('/calls/stream_query', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: 'annotation_queue_items.queue_id' }, { $literal: id }] } },
      });
    expect((await inQueue(queue)).map((c) => c.id).sort()).toEqual(['q-a', 'q-c']);
    expect(await inQueue('00000000-0000-0000-0000-000000000000')).toEqual([]);
    const count = ok(
      await api.post('/calls/query_stats', {
        project_id: P,
        query: { $expr: { $eq: [{ $getField: 'annotation_queue_items.queue_id' }, { $literal: queue }] } },
      }),
    ).body;
    expect(count.count).toBe(2);
    expect(
      (
        await api.post('/calls/stream_query', {
          project_id: P,
          query: { $expr: { $eq: [{ $getField: 'annotation_queue_items.secret' }, { $literal: 'x' }] } },
        })
      ).status,
    ).toBe(422);
  });

  it('stores scorer refs of an annotation queue that point into another project (as the reference)', async () => {
    const P = 'acme/queue-refs';
    const ref = 'weave:///acme/other-project/object/scorer:abc123';
    const created = ok(await api.post('/annotation_queues', { project_id: P, name: 'q', scorer_refs: [ref] })).body;
    const read = ok(await api.request('GET', `/annotation_queues/${created.id}?project_id=${encodeURIComponent(P)}`)).body;
    expect(read.queue.scorer_refs).toEqual([ref]);
  });
});
