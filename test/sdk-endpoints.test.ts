import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Client, basicAuth } from './helpers/client';
import { createKey, type TestKey } from './helpers/keys';
import { useWeft } from './helpers/fixture';

/**
 * The endpoints weft serves for the Weave SDK beyond the 20 (docs/sdks.md),
 * over real HTTP: the edge's protections on each, and what the SDK relies on (422 for a body
 * that does not fit, digests, all-or-nothing batches, delete cascades).
 */
let member: TestKey;
let memberApi: Client;
const P = 'sdkx/p';
const T0 = '2024-05-01T12:00:00Z';

const { weft, api } = useWeft({}, async (api) => {
  await api.post('/admin/entities/create', { name: 'sdkx' });
  await api.post('/admin/entities/create', { name: 'other' });
  member = await createKey(api, 'sdk-member', ['sdkx']);
  memberApi = api.withAuth(basicAuth(member.key));
});

const completed = (id: string, over: Record<string, unknown> = {}) => ({
  project_id: P,
  id,
  trace_id: `t-${id}`,
  op_name: 'weave:///sdkx/p/op/f:abc',
  started_at: T0,
  ended_at: '2024-05-01T12:00:01.5Z',
  attributes: {},
  inputs: { x: 1, none: null },
  output: { y: 2 },
  summary: { usage: {} },
  parent_id: null,
  display_name: null,
  wb_run_id: 'run-1',
  wb_user_id: 'spoofed',
  ...over,
});
const calls = (body: Record<string, unknown>) => memberApi.jsonl('/calls/stream_query', { project_id: P, ...body });
const bytesDigest = (b: Buffer) => createHash('sha256').update(b).digest('base64url').replace(/-/g, 'X').replace(/_/g, 'Y');

describe('weave.init: GraphQL and /traces', () => {
  const gql = (query: string, variables: Record<string, unknown> = {}, c = memberApi) => c.post('/graphql', { query, variables });
  it('answers the viewer, project lookup and upsert for the key, and nothing else', async () => {
    const viewer = await gql('query DefaultEntity { viewer { username defaultEntity { name } } }');
    // `username` is the key's user name (the SDK prints it as "Logged in as …"); the id is `id`.
    expect(viewer.body).toEqual({ data: { viewer: { id: member.user_id, username: 'sdk-member', defaultEntity: { name: 'sdkx' } } } });
    expect(
      (
        await gql('query Project($name: String!, $entityName: String!) { project(name: $name, entityName: $entityName) { name } }', {
          name: 'p',
          entityName: 'sdkx',
        })
      ).body,
    ).toEqual({
      data: { project: { name: 'p' } },
    });
    const upsert = await gql(
      'mutation UpsertModel($name: String!, $entity: String!) { upsertModel(input: {name: $name, entityName: $entity}) { model { name } } }',
      { name: 'q', entity: 'sdkx' },
    );
    expect(upsert.body.data.upsertModel.model.name).toBe('q');
    const denied = await gql(
      'query Project($name: String!, $entityName: String!) { project(name: $name, entityName: $entityName) { name } }',
      { name: 'p', entityName: 'other' },
    );
    expect(denied.body.errors[0].extensions.code).toBe('PERMISSION_ERROR');
    expect(denied.body.data).toBeNull();
    const unknown = await gql('query Runs { runs { id } }');
    expect(unknown.body.errors[0].message).toContain('DefaultEntity');
    expect((await gql('query DefaultEntity { viewer { username } }', {}, api.withAuth(null))).status).toBe(401);
  });
  it('serves the trace API under /traces too', async () => {
    const r = await memberApi.post('/traces/calls/query_stats', { project_id: P });
    expect(r.status).toBe(200);
    expect((await fetch(`${weft.url}/traces/server_info`)).status).toBe(200);
  });
});

describe('v2 calls', () => {
  it('calls/complete stores each call whole (start and end), with wb_ names read as svc_', async () => {
    const r = await memberApi.post(`/v2/sdkx/p/calls/complete`, {
      batch: [completed('c1'), completed('c2', { exception: 'boom', output: null })],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({});
    const got = await calls({ filter: { call_ids: ['c1', 'c2'] } });
    expect(got.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(got[0]).toMatchObject({
      output: { y: 2 },
      inputs: { x: 1, none: null },
      svc_run_id: 'run-1',
      wb_run_id: 'run-1',
      svc_user_id: member.user_id,
      wb_user_id: member.user_id,
    });
    expect(got[0].summary.weave).toMatchObject({ status: 'success', latency_ms: 1500 });
    expect(got[1].summary.weave.status).toBe('error');
  });
  it('refuses a batch with one invalid call with 422 naming it, writing none of it', async () => {
    const r = await memberApi.post(`/v2/sdkx/p/calls/complete`, { batch: [completed('c3'), completed('c4', { ended_at: 'soon' })] });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe('batch[1].ended_at');
    expect(await calls({ filter: { call_ids: ['c3', 'c4'] } })).toEqual([]);
  });
  it('keeps tenancy: another entity is 403, a body project other than the path is 400', async () => {
    expect((await memberApi.post(`/v2/other/p/calls/complete`, { batch: [completed('c5', { project_id: 'other/p' })] })).status).toBe(403);
    const mismatch = await memberApi.post(`/v2/sdkx/q/calls/complete`, { batch: [completed('c5')] });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.field).toBe('batch[0].project_id');
  });
  it('call/start and call/end under /v2 as the v1 routes', async () => {
    const s = await memberApi.post('/v2/sdkx/p/call/start', {
      start: { project_id: P, id: 'c6', trace_id: 't6', op_name: 'f', started_at: T0, attributes: {}, inputs: {} },
    });
    expect(s.body).toEqual({ id: 'c6', trace_id: 't6' });
    expect(
      (await memberApi.post('/v2/sdkx/p/call/end', { end: { project_id: P, id: 'c6', ended_at: T0, summary: {}, output: 'ok' } })).status,
    ).toBe(200);
    expect((await calls({ filter: { call_ids: ['c6'] } }))[0].output).toBe('ok');
  });
});

describe('call read, update, delete', () => {
  it('reads one call, or null', async () => {
    expect((await memberApi.post('/call/read', { project_id: P, id: 'c1', include_costs: null })).body.call).toMatchObject({
      id: 'c1',
      wb_user_id: member.user_id,
    });
    expect((await memberApi.post('/call/read', { project_id: P, id: 'nope' })).body).toEqual({ call: null });
  });
  it('renames (the newest name wins) and needs a name', async () => {
    expect((await memberApi.post('/call/update', { project_id: P, call_id: 'c1', display_name: 'first', wb_user_id: null })).status).toBe(
      200,
    );
    expect((await memberApi.post('/call/update', { project_id: P, call_id: 'c1', display_name: 'second' })).status).toBe(200);
    expect((await calls({ filter: { call_ids: ['c1'] } }))[0].display_name).toBe('second');
    expect((await memberApi.post('/call/update', { project_id: P, call_id: 'c1' })).status).toBe(400);
  });
  it('deletes calls with all their descendants', async () => {
    const tree = [
      completed('r'),
      completed('k1', { parent_id: 'r', trace_id: 't-r' }),
      completed('k2', { parent_id: 'k1', trace_id: 't-r' }),
      completed('s', { trace_id: 't-r' }),
    ];
    await memberApi.post('/v2/sdkx/p/calls/complete', { batch: tree });
    const r = await memberApi.post('/calls/delete', { project_id: P, call_ids: ['r'], wb_user_id: 'x' });
    expect(r.body).toEqual({ num_deleted: 3 });
    expect((await calls({ filter: { trace_ids: ['t-r'] } })).map((c) => c.id)).toEqual(['s']);
    expect((await memberApi.post('/calls/delete', { project_id: 'other/p', call_ids: ['s'] })).status).toBe(403);
    expect(
      (await memberApi.post('/calls/delete', { project_id: P, call_ids: Array.from({ length: 1001 }, (_, i) => `x${i}`) })).status,
    ).toBe(422);
  });
});

describe('objects, tables, files', () => {
  it('deletes object versions by digest, latest or vN; an unknown one is 404 and deletes nothing', async () => {
    const mk = async (v: number) =>
      (await memberApi.post('/obj/create', { obj: { project_id: P, object_id: 'o', val: { v } } })).body.digest as string;
    const [d0, d1, d2] = [await mk(0), await mk(1), await mk(2)];
    expect((await memberApi.post('/obj/delete', { project_id: P, object_id: 'o', digests: [d0, 'nope'] })).status).toBe(404);
    expect((await memberApi.post('/obj/read', { project_id: P, object_id: 'o', digest: d0 })).status).toBe(200);
    expect((await memberApi.post('/obj/delete', { project_id: P, object_id: 'o', digests: ['latest'] })).body).toEqual({ num_deleted: 1 });
    expect((await memberApi.post('/obj/read', { project_id: P, object_id: 'o', digest: d2 })).status).toBe(404);
    const latest = await memberApi.post('/obj/read', { project_id: P, object_id: 'o', digest: 'latest' });
    expect(latest.body.obj).toMatchObject({ digest: d1, version_index: 1, wb_user_id: member.user_id });
    expect((await memberApi.post('/obj/delete', { project_id: P, object_id: 'o', digests: null })).body).toEqual({ num_deleted: 2 });
    expect((await memberApi.post('/objs/query', { project_id: P, filter: { object_ids: ['o'] } })).body.objs).toEqual([]);
  });
  it('counts table rows, one table or many', async () => {
    const t = await memberApi.post('/table/create', { table: { project_id: P, rows: [{ a: 1 }, { a: 2 }, { a: 1 }] } });
    expect((await memberApi.post('/table/query_stats', { project_id: P, digest: t.body.digest })).body).toEqual({ count: 3 });
    expect((await memberApi.post('/table/query_stats', { project_id: P, digest: 'f'.repeat(64) })).body).toEqual({ count: 0 });
    const batch = await memberApi.post('/table/query_stats_batch', {
      project_id: P,
      digests: [t.body.digest, 'f'.repeat(64)],
      include_storage_size: true,
    });
    expect(batch.body.tables).toEqual([{ digest: t.body.digest, count: 3, storage_size_bytes: expect.any(Number) }]);
    expect(batch.body.tables[0].storage_size_bytes).toBeGreaterThan(0);
  });
  it('stores files from multipart uploads under the reference digest, in chunks, and reads them back byte for byte', async () => {
    const content = randomBytes(250_000); // three chunks, not UTF-8
    const form = new FormData();
    form.set('project_id', P);
    form.set('file', new Blob([content]), 'obj.bin');
    const up = await fetch(`${weft.url}/file/create`, { method: 'POST', headers: { authorization: memberApi.authorization! }, body: form });
    expect(up.status).toBe(200);
    const { digest } = (await up.json()) as { digest: string };
    expect(digest).toBe(bytesDigest(content));
    for (const path of ['/file/content', '/traces/files/content']) {
      const down = await fetch(`${weft.url}${path}`, {
        method: 'POST',
        headers: { authorization: memberApi.authorization!, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: P, digest }),
      });
      expect(down.status).toBe(200);
      expect(Buffer.from(await down.arrayBuffer()).equals(content)).toBe(true);
    }
    expect((await memberApi.post('/file/content', { project_id: P, digest: 'nope' })).status).toBe(404);
    const other = new FormData();
    other.set('project_id', 'other/p');
    other.set('file', new Blob([content]), 'obj.bin');
    expect(
      (await fetch(`${weft.url}/file/create`, { method: 'POST', headers: { authorization: memberApi.authorization! }, body: other }))
        .status,
    ).toBe(403);
    const wrong = new FormData();
    wrong.set('project_id', P);
    wrong.set('expected_digest', 'abc');
    wrong.set('file', new Blob([content]), 'obj.bin');
    expect(
      (await fetch(`${weft.url}/file/create`, { method: 'POST', headers: { authorization: memberApi.authorization! }, body: wrong }))
        .status,
    ).toBe(409);
    expect((await fetch(`${weft.url}/file/create`, { method: 'POST', body: form })).status).toBe(401);
  });
});

describe('feedback create, batch, purge', () => {
  const ref = `weave:///${P}/call/c1`;
  it('creates with the client id, answers both spellings, batches all or nothing, purges by id only', async () => {
    const id = '0190f0e0-0000-7000-8000-0000000000b1';
    const one = await memberApi.post('/feedback/create', {
      id,
      project_id: P,
      weave_ref: ref,
      feedback_type: 'wandb.note.1',
      payload: { note: 'hi' },
      creator: null,
      wb_user_id: 'spoofed',
    });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({ id, svc_user_id: member.user_id, wb_user_id: member.user_id, payload: { note: 'hi' } });
    const bad = await memberApi.post('/feedback/batch/create', {
      batch: [
        { project_id: P, weave_ref: ref, feedback_type: 'custom', payload: { a: 1 } },
        { project_id: P, weave_ref: ref, feedback_type: 'wandb.reaction.1', payload: { emoji: 'not an emoji' } },
      ],
    });
    expect(bad.status).toBe(400);
    const rows = async () =>
      (
        await memberApi.post('/feedback/query', {
          project_id: P,
          query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: ref }] } },
          fields: null,
          limit: null,
        })
      ).body.result;
    expect((await rows()).map((r: any) => r.id)).toEqual([id]);
    const ok = await memberApi.post('/feedback/batch/create', {
      batch: [{ project_id: P, weave_ref: ref, feedback_type: 'wandb.reaction.1', payload: { emoji: '👍' } }],
    });
    expect(ok.body.res).toHaveLength(1);
    const all = await rows();
    expect(all).toHaveLength(2);
    // A body in the SDK's spelling (`fields: null`) gets the reference's names alone (its Feedback model forbids others).
    expect(all[1]).toMatchObject({ weave_ref: ref, wb_user_id: member.user_id });
    expect(all[1]).not.toHaveProperty('svc_ref');
    const byId = (fid: string) => ({ $eq: [{ $getField: 'id' }, { $literal: fid }] });
    expect(
      (
        await memberApi.post('/feedback/purge', {
          project_id: P,
          query: { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: 'x' }] } },
        })
      ).status,
    ).toBe(400);
    expect((await memberApi.post('/feedback/purge', { project_id: P, query: { $expr: { $or: [byId(id)] } } })).status).toBe(200);
    expect((await rows()).map((r: any) => r.id)).toEqual([ok.body.res[0].id]);
    expect(
      (
        await memberApi.post('/feedback/create', {
          project_id: 'other/p',
          weave_ref: 'weave:///other/p/call/c1',
          feedback_type: 'x',
          payload: {},
        })
      ).status,
    ).toBe(403);
  });
});

describe('the SDK OTel exporter path', () => {
  it('answers /agents/otel/v1/traces as /otel/v1/traces', async () => {
    const r = await memberApi.raw('/agents/otel/v1/traces', JSON.stringify({ resourceSpans: [] }), { project_id: P });
    expect(r.status, r.text).toBe(200);
  });
});
