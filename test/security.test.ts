import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints, type EndpointName } from '@weft/api';
import { basicAuth, bearerAuth, Client } from './helpers/client';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

let weft: RunningWeft;
let admin: Client;
let alice: TestKey; // member of acme
let bob: TestKey; // member of globex
const TS = '2024-06-01T00:00:00Z';

beforeAll(async () => {
  weft = await startWeft();
  admin = new Client(weft.url);
  alice = await createKey(admin, 'alice', ['acme']);
  bob = await createKey(admin, 'bob', ['globex']);
});
afterAll(async () => {
  await weft?.stop();
});

/** A minimal valid body of every endpoint that names a project, aimed at `entity`. */
function bodyFor(name: EndpointName, entity: string): unknown {
  const project_id = `${entity}/p`;
  switch (name) {
    case 'feedbackReplace':
      return { project_id, svc_ref: `weave:///${project_id}/call/c1`, feedback_type: 'note', payload: { note: 'x' }, feedback_id: 'f1' };
    case 'objRead':
      return { project_id, object_id: 'o', digest: 'd' };
    case 'objCreate':
      return { obj: { project_id, object_id: 'o', val: 1 } };
    case 'tableQuery':
    case 'tableQueryStream':
      return { project_id, digest: 'd' };
    case 'tableUpdate':
      return { project_id, base_digest: 'd', updates: [] };
    case 'completionsCreate':
    case 'completionsCreateStream':
      return { project_id, inputs: { model: 'm', messages: [] } };
    case 'callStart':
      return { start: { project_id, op_name: 'o', started_at: TS } };
    case 'callEnd':
      return { end: { project_id, id: 'x', ended_at: TS } };
    case 'callUpsertBatch':
      return { batch: [{ mode: 'start', req: { start: { project_id, op_name: 'o', started_at: TS } } }] };
    case 'otelTrace':
      return { project_id, traces: {} };
    case 'modelCreate':
      return { project: 'p', name: 'n', base_model: 'b', entity };
    case 'chatCompletions':
      return null; // names no project
    default:
      return { project_id };
  }
}

describe('API keys', () => {
  it('issues high-entropy keys, shown once and never listed', async () => {
    expect(alice.key).toMatch(/^weft_[A-Za-z0-9_-]{43}$/);
    const list = await admin.post('/admin/keys/list', { user: 'alice' });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(1);
    expect(list.body.keys[0]).toMatchObject({ key_id: alice.key_id, user: 'alice', is_admin: false, entities: ['acme'], revoked_at: null });
    expect(list.text).not.toContain(alice.key);
    expect(alice.key.startsWith(list.body.keys[0].prefix)).toBe(true);
  });

  it('answers missing, malformed, unknown and other-scheme credentials with 401 naming the reason in the body and in headers', async () => {
    const body = bodyFor('callsQueryStats', 'acme');
    for (const authorization of [null, 'Basic', 'Basic !!!', basicAuth('weft_nope'), 'Bearer weft_nope', 'Digest abc']) {
      const r = await admin.withAuth(authorization).post('/calls/query_stats', body);
      expect(r.status, String(authorization)).toBe(401);
      expect(r.body).toMatchObject({ status: 401 });
      expect(typeof r.body.reason).toBe('string');
      expect(r.headers.get('x-weft-error')).toBe(r.body.reason);
      expect(r.headers.get('www-authenticate')).toContain('Basic realm="weft", Bearer realm="weft"');
      expect(r.headers.get('www-authenticate')).toContain(`error_description="${r.body.reason}"`);
    }
    // The username of Basic is ignored; Bearer works wherever Basic does (and the other way round).
    const ok = await admin.withAuth(`Basic ${Buffer.from(`anything:${alice.key}`).toString('base64')}`).post('/calls/query_stats', body);
    expect(ok.status).toBe(200);
    const start = await admin.withAuth(bearerAuth(alice.key)).post('/call/start', {
      start: { project_id: 'acme/bearer', op_name: 'op', started_at: '2026-01-01T00:00:00Z', inputs: {}, attributes: {} },
    });
    expect(start.status).toBe(200);
    expect(start.body.id).toEqual(expect.any(String));
    const bearer = await admin.withAuth(bearerAuth(alice.key)).post('/v1/preview/models', bodyFor('modelCreate', 'acme'));
    expect(bearer.status).not.toBe(401);
    expect(bearer.status).not.toBe(403);
  });

  it('stops accepting a revoked key at once', async () => {
    const k = await createKey(admin, 'carol', ['acme']);
    const carol = clientFor(admin, k);
    expect((await carol.post('/calls/query_stats', { project_id: 'acme/p' })).status).toBe(200);
    const rev = await admin.post('/admin/keys/revoke', { key_id: k.key_id });
    expect(rev.status).toBe(200);
    expect(rev.body.revoked_at).toMatch(/^\d{4}-/);
    const after = await carol.post('/calls/query_stats', { project_id: 'acme/p' });
    expect(after.status).toBe(401);
    expect((await admin.post('/admin/keys/revoke', { key_id: 'key_missing' })).status).toBe(404);
  });

  it('keeps the admin endpoints to admin keys', async () => {
    const r = await clientFor(admin, alice).post('/admin/keys/create', { user: 'mallory', admin: true });
    expect(r.status).toBe(403);
    expect((await admin.withAuth(null).post('/admin/entities/list', {})).status).toBe(401);
    const bearer = await admin.withAuth(bearerAuth('test-key')).post('/admin/entities/list', {});
    expect(bearer.status).toBe(200);
    expect(bearer.body.entities.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['acme', 'globex']));
    expect((await admin.post('/admin/entities/create', { name: 'acme' })).status).toBe(409);
    expect((await admin.post('/admin/entities/create', { name: 'bad/name' })).status).toBe(400);
    expect((await admin.post('/admin/entities/add_member', { entity: 'nope', user: 'alice' })).status).toBe(404);
  });

  it('gives membership changes effect at once', async () => {
    const dave = await createKey(admin, 'dave', []);
    const d = clientFor(admin, dave);
    expect((await d.post('/calls/query_stats', { project_id: 'initech/p' })).status).toBe(403);
    expect((await admin.post('/admin/entities/create', { name: 'initech' })).status).toBe(200);
    expect((await admin.post('/admin/entities/add_member', { entity: 'initech', user: 'dave' })).status).toBe(200);
    expect((await d.post('/calls/query_stats', { project_id: 'initech/p' })).status).toBe(200);
    expect((await admin.post('/admin/entities/remove_member', { entity: 'initech', user: 'dave' })).status).toBe(200);
    expect((await d.post('/calls/query_stats', { project_id: 'initech/p' })).status).toBe(403);
  });

  it('stamps svc_user_id with the caller, whatever the body says', async () => {
    const a = clientFor(admin, alice);
    const s = await a.post('/call/start', { start: { project_id: 'acme/who', op_name: 'o', started_at: TS, svc_user_id: bob.user_id } });
    expect(s.status).toBe(200);
    const [row] = await a.jsonl('/calls/stream_query', { project_id: 'acme/who', filter: { call_ids: [s.body.id] } });
    expect(row.svc_user_id).toBe(alice.user_id);
  });
});

describe('tenancy', () => {
  const named = (Object.keys(endpoints) as EndpointName[]).filter((n) => bodyFor(n, 'x') !== null);

  it('covers every endpoint that names a project', () => {
    expect(named.length).toBe(Object.keys(endpoints).length - 1);
  });

  it.each(named)("%s refuses another entity with 403 and serves the caller's own", async (name) => {
    const spec = endpoints[name];
    const auth = spec.auth === 'bearer' ? bearerAuth(alice.key) : basicAuth(alice.key);
    const c = admin.withAuth(auth);
    // The OpenAI-compatible /v1 routes answer in their `{error: {message, code}}` shape.
    const reason = (r: { body: any }) => (spec.path.startsWith('/v1/') ? r.body.error?.message : r.body.reason) as string;
    const theirs = await c.post(spec.path, bodyFor(name, 'globex'));
    expect(theirs.status, theirs.text).toBe(403);
    expect(spec.path.startsWith('/v1/') ? theirs.body.error.code : theirs.body.status).toBe(403);
    expect(reason(theirs)).toContain('globex');
    // The reason in a header too, for clients that log headers and not bodies.
    expect(theirs.headers.get('x-weft-error')).toBe(reason(theirs));
    // An entity that does not exist at all gets the very same answer: existence does not leak.
    const none = await c.post(spec.path, bodyFor(name, 'no-such-entity'));
    expect(none.status).toBe(403);
    expect(reason(none).replace('no-such-entity', 'globex')).toBe(reason(theirs));
    const mine = await c.post(spec.path, bodyFor(name, 'acme'));
    expect([200, 400, 404, 409, 501], mine.text).toContain(mine.status); // past the tenancy check
  });

  it('checks every item of a batch, and writes nothing when one is foreign', async () => {
    const a = clientFor(admin, alice);
    const ok = { mode: 'start', req: { start: { project_id: 'acme/mixed', id: 'mixed-1', op_name: 'o', started_at: TS } } };
    const bad = { mode: 'end', req: { end: { project_id: 'globex/p', id: 'x', ended_at: TS } } };
    const r = await a.post('/call/upsert_batch', { batch: [ok, bad] });
    expect(r.status).toBe(403);
    expect(r.body.field).toBe('batch[1].req.end.project_id');
    expect((await a.post('/calls/query_stats', { project_id: 'acme/mixed' })).body.count).toBe(0);
  });

  it('refuses refs into another entity anywhere in a body, and ref members outside the project', async () => {
    const a = clientFor(admin, alice);
    const foreign = 'weave:///globex/p/object/secret:abc';
    const inInputs = await a.post('/call/start', {
      start: { project_id: 'acme/p', op_name: 'o', started_at: TS, inputs: { x: [foreign] } },
    });
    expect(inInputs.status).toBe(403);
    expect(inInputs.body.field).toBe('start.inputs.x[0]');
    const inFilter = await a.post('/calls/query_stats', { project_id: 'acme/p', filter: { input_refs: [foreign] } });
    expect(inFilter.status).toBe(403);
    const opName = await a.post('/call/start', { start: { project_id: 'acme/p', op_name: 'weave:///globex/p/op/f:1', started_at: TS } });
    expect(opName.status).toBe(403);
    const otherProject = await a.post('/calls/query_stats', {
      project_id: 'acme/p',
      filter: { input_refs: ['weave:///acme/q/object/o:1'] },
    });
    expect(otherProject.status).toBe(400);
    expect(otherProject.body.field).toBe('filter.input_refs[0]');
    // A project_id inside the caller's own payload is data, not an address.
    const data = await a.post('/call/start', {
      start: { project_id: 'acme/p', op_name: 'o', started_at: TS, inputs: { project_id: 'globex/p' } },
    });
    expect(data.status).toBe(200);
  });

  it('guards routes outside the interface the same way (/cost/create)', async () => {
    const a = clientFor(admin, alice);
    const costs = { 'gpt-4o': { prompt_token_cost: 1, completion_token_cost: 1 } };
    const r = await a.post('/cost/create', { project_id: 'globex/p', costs });
    expect(r.status).toBe(403);
    expect(r.body.field).toBe('project_id');
    expect((await a.post('/cost/create', { project_id: 'acme/p', costs })).status).toBe(200);
  });

  it("never shows one entity's calls to another", async () => {
    const b = clientFor(admin, bob);
    const s = await b.post('/call/start', { start: { project_id: 'globex/secret', op_name: 'o', started_at: TS } });
    expect(s.status).toBe(200);
    const a = clientFor(admin, alice);
    expect((await a.post('/calls/stream_query', { project_id: 'globex/secret' })).status).toBe(403);
    expect((await a.post('/calls/query_stats', { project_id: 'globex/secret', filter: { call_ids: [s.body.id] } })).status).toBe(403);
    // Ending bob's call from alice's project touches nothing of bob's.
    expect((await a.post('/call/end', { end: { project_id: 'acme/p', id: s.body.id, ended_at: TS, exception: 'x' } })).status).toBe(200);
    const [row] = await b.jsonl('/calls/stream_query', { project_id: 'globex/secret', filter: { call_ids: [s.body.id] } });
    expect(row.exception).toBeNull();
    // The admin sees every entity.
    expect((await admin.post('/calls/query_stats', { project_id: 'globex/secret' })).body.count).toBe(1);
  });
});

describe('first start', () => {
  it('creates one admin key on an empty store and prints it once', async () => {
    const dataDir = newDataDir('first-key');
    const first = await startWeft({ dataDir, env: { WEFT_BOOTSTRAP_API_KEY: '' } });
    let key: string;
    try {
      const line = first.logs.find((l) => typeof (l as { api_key?: unknown }).api_key === 'string') as { api_key: string };
      expect(line).toBeDefined();
      key = line.api_key;
      expect(key).toMatch(/^weft_/);
      const c = new Client(first.url, basicAuth(key));
      expect((await c.post('/calls/query_stats', { project_id: 'any/p' })).status).toBe(200);
      expect((await c.post('/admin/keys/list', {})).body.keys).toHaveLength(1);
      expect((await new Client(first.url).post('/calls/query_stats', { project_id: 'any/p' })).status).toBe(401);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await startWeft({ dataDir, env: { WEFT_BOOTSTRAP_API_KEY: '' } });
    try {
      expect(second.logs.some((l) => typeof (l as { api_key?: unknown }).api_key === 'string')).toBe(false);
      expect((await new Client(second.url, basicAuth(key)).post('/calls/query_stats', { project_id: 'any/p' })).status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});
