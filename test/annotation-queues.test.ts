import { beforeAll, describe, expect, it } from 'vitest';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import type { Client } from './helpers/client';
import { useWeft } from './helpers/fixture';

// The annotation-queue lifecycle over HTTP, at the paths and with the bodies the Weave SDK sends
// (0.52.29's RemoteHTTPTraceServer, 0.54's vendored client): reference spellings (`wb_user_id`,
// nulls for unset members), GET/DELETE with the project in the query string.

const P = 'acme/queues';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let alice: TestKey;
let bob: TestKey;
let outsider: TestKey;
const { api } = useWeft({}, async (admin) => {
  alice = await createKey(admin, 'alice', ['acme']);
  bob = await createKey(admin, 'bob', ['acme']);
  outsider = await createKey(admin, 'mallory', ['globex']);
  // Three calls: two ended, one still running.
  const start = (id: string, op: string, at: string) =>
    admin.post('/call/start', {
      start: { project_id: P, id, trace_id: `trace-${id}`, op_name: op, started_at: at, inputs: { q: id }, attributes: {} },
    });
  for (const [id, op, at] of [
    ['c1', 'weave:///acme/queues/op/answer:abc', '2026-01-01T10:00:00.000001Z'],
    ['c2', 'weave:///acme/queues/op/answer:abc', '2026-01-01T10:00:01Z'],
    ['c3', 'weave:///acme/queues/op/plan:def', '2026-01-01T10:00:02Z'],
  ] as const) {
    expect((await start(id, op, at)).status).toBe(200);
  }
  for (const id of ['c1', 'c2']) {
    const r = await admin.post('/call/end', { end: { project_id: P, id, ended_at: '2026-01-01T10:00:05Z', output: 'ok', summary: {} } });
    expect(r.status).toBe(200);
  }
});

/** A request with any method, as the SDK's httpx client makes it. */
const send = (client: Client, method: string, path: string, body?: unknown) =>
  client.request(method, path, body === undefined ? undefined : JSON.stringify(body));
const as = (key: TestKey) => clientFor(api, key);

async function createQueue(client: Client, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await send(client, 'POST', '/annotation_queues', {
    project_id: P,
    name,
    description: `about ${name}`,
    scorer_refs: [`weave:///${P}/object/severity:abc`],
    wb_user_id: 'spoofed',
    ...extra,
  });
  expect(r.status, r.text).toBe(200);
  expect(Object.keys(r.body)).toEqual(['id']);
  expect(r.body.id).toMatch(UUID);
  return r.body.id as string;
}

describe('annotation queues', () => {
  let queueId: string;
  beforeAll(async () => {
    queueId = await createQueue(as(alice), 'Error Review');
  });

  it('creates and reads a queue with the reference shape; the creator is the caller, not the body', async () => {
    const r = await send(as(alice), 'GET', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.queue).toEqual({
      id: queueId,
      project_id: P,
      name: 'Error Review',
      description: 'about Error Review',
      scorer_refs: [`weave:///${P}/object/severity:abc`],
      created_at: expect.stringMatching(/Z$/),
      created_by: alice.user_id,
      updated_at: r.body.queue.created_at,
      deleted_at: null,
    });
    // Also under /traces/… (the SDK's default trace-server URL under WANDB_BASE_URL).
    const viaTraces = await send(as(alice), 'GET', `/traces/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`);
    expect(viaTraces.body).toEqual(r.body);
    const missing = await send(
      as(alice),
      'GET',
      `/annotation_queues/00000000-0000-7000-8000-000000000000?project_id=${encodeURIComponent(P)}`,
    );
    expect(missing.status).toBe(404);
  });

  it('updates only the members given; none given leaves the queue as it is', async () => {
    const before = (await send(as(alice), 'GET', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`)).body.queue;
    const same = await send(as(alice), 'PUT', `/annotation_queues/${queueId}`, {
      project_id: P,
      name: null,
      description: null,
      scorer_refs: null,
    });
    expect(same.status, same.text).toBe(200);
    expect(same.body.queue).toEqual(before);

    const r = await send(as(bob), 'PUT', `/annotation_queues/${queueId}`, {
      project_id: P,
      description: 'triage',
      name: null,
      scorer_refs: null,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.queue).toMatchObject({ name: 'Error Review', description: 'triage', created_by: alice.user_id, deleted_at: null });
    expect(Date.parse(r.body.queue.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    const read = await send(as(alice), 'GET', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`);
    expect(read.body.queue).toEqual(r.body.queue);
  });

  it('lists queues as JSONL: name part in any case, sorted, paged; deleted ones gone', async () => {
    await createQueue(as(alice), 'Hallucination review');
    const doomed = await createQueue(as(alice), 'Scratch');
    const list = async (body: Record<string, unknown>) => {
      const r = await send(as(alice), 'POST', '/annotation_queues/query', { project_id: P, ...body });
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/jsonl/);
      return r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string });
    };
    expect((await list({ name: 'REVIEW', sort_by: [{ field: 'name', direction: 'asc' }] })).map((q) => q.name)).toEqual([
      'Error Review',
      'Hallucination review',
    ]);
    // The default order is newest first.
    expect((await list({})).map((q) => q.name)).toEqual(['Scratch', 'Hallucination review', 'Error Review']);
    expect((await list({ sort_by: [{ field: 'name', direction: 'desc' }], limit: 1, offset: 1 })).map((q) => q.name)).toEqual([
      'Hallucination review',
    ]);

    // As the Weave SDK 0.54's client sends a DELETE: a JSON Content-Type and no bytes.
    const del = await as(alice).request('DELETE', `/annotation_queues/${doomed}?project_id=${encodeURIComponent(P)}`, undefined, {
      'content-type': 'application/json',
      'content-length': '0',
    });
    expect(del.status, del.text).toBe(200);
    expect(del.body.queue).toMatchObject({ id: doomed, name: 'Scratch', deleted_at: expect.stringMatching(/Z$/) });
    expect(del.body.queue.updated_at).toBe(del.body.queue.deleted_at);
    expect((await list({})).map((q) => q.name)).not.toContain('Scratch');
    expect((await send(as(alice), 'GET', `/annotation_queues/${doomed}?project_id=${encodeURIComponent(P)}`)).status).toBe(404);
    expect((await send(as(alice), 'DELETE', `/annotation_queues/${doomed}?project_id=${encodeURIComponent(P)}`)).status).toBe(404);
    expect((await send(as(alice), 'PUT', `/annotation_queues/${doomed}`, { project_id: P, name: 'back' })).status).toBe(404);
  });

  it('adds calls once each, with what the items show of them; unknown calls are neither added nor duplicates', async () => {
    const add = (call_ids: string[]) =>
      send(as(bob), 'POST', `/annotation_queues/${queueId}/items`, { project_id: P, call_ids, display_fields: ['input.q', 'output'] });
    const first = await add(['c1', 'c2']);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ added_count: 2, duplicates: 0 });
    expect((await add(['c2', 'c3', 'nope'])).body).toEqual({ added_count: 1, duplicates: 1 });
    expect((await add(['c1', 'c3'])).body).toEqual({ added_count: 0, duplicates: 2 });

    const r = await send(as(alice), 'POST', `/annotation_queues/${queueId}/items/query`, { project_id: P, filter: null, sort_by: null });
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.map((i: any) => i.call_id)).toEqual(['c1', 'c2', 'c3']);
    const [c1, , c3] = r.body.items;
    expect(c1).toEqual({
      id: expect.stringMatching(UUID),
      project_id: P,
      queue_id: queueId,
      call_id: 'c1',
      call_started_at: '2026-01-01T10:00:00.000001Z',
      call_ended_at: '2026-01-01T10:00:05Z',
      call_op_name: 'weave:///acme/queues/op/answer:abc',
      call_trace_id: 'trace-c1',
      display_fields: ['input.q', 'output'],
      added_by: bob.user_id,
      annotation_state: 'unstarted',
      annotator_user_id: null,
      created_at: expect.stringMatching(/Z$/),
      created_by: bob.user_id,
      updated_at: c1.created_at,
      deleted_at: null,
      position_in_queue: null,
    });
    expect(c3.call_ended_at).toBeNull();
    expect((await add([])).status).toBe(422);
  });

  it('walks an item through in_progress → completed, per annotator, with the reference transitions', async () => {
    const items = (await send(as(alice), 'POST', `/annotation_queues/${queueId}/items/query`, { project_id: P })).body.items;
    const [i1, i2, i3] = items.map((i: any) => i.id as string);
    const progress = (who: TestKey, item: string, annotation_state: string) =>
      send(as(who), 'POST', `/annotation_queues/${queueId}/items/${item}/progress`, { project_id: P, annotation_state });

    const started = await progress(alice, i1!, 'in_progress');
    expect(started.status, started.text).toBe(200);
    expect(started.body.item).toMatchObject({ id: i1, annotation_state: 'in_progress', annotator_user_id: alice.user_id });
    // The same state again: unchanged.
    expect((await progress(alice, i1!, 'in_progress')).body.item.annotation_state).toBe('in_progress');
    const done = await progress(alice, i1!, 'completed');
    expect(done.body.item).toMatchObject({ annotation_state: 'completed', annotator_user_id: alice.user_id });

    const back = await progress(alice, i1!, 'in_progress');
    expect(back.status).toBe(400);
    expect(back.body.field).toBe('annotation_state');
    const sideways = await progress(alice, i1!, 'skipped');
    expect(sideways.status).toBe(400);
    expect(sideways.body.reason).toContain("Invalid state transition from 'completed' to 'skipped'");
    const invalid = await progress(alice, i2!, 'done');
    expect(invalid.status).toBe(422);
    expect(invalid.body.field).toBe('annotation_state');
    expect((await progress(alice, 'no-such-item', 'completed')).status).toBe(404);

    // Another annotator: straight to skipped, on another item; the item shows the latest state and who set it.
    const skipped = await progress(bob, i2!, 'skipped');
    expect(skipped.body.item).toMatchObject({ id: i2, annotation_state: 'skipped', annotator_user_id: bob.user_id });
    expect((await progress(bob, i3!, 'in_progress')).status).toBe(200);

    const stats = await send(as(alice), 'POST', '/annotation_queues/stats', {
      project_id: P,
      queue_ids: ['00000000-0000-7000-8000-00000000dead', queueId],
    });
    expect(stats.status, stats.text).toBe(200);
    expect(stats.body).toEqual({
      stats: [
        { queue_id: '00000000-0000-7000-8000-00000000dead', total_items: 0, completed_items: 0 },
        { queue_id: queueId, total_items: 3, completed_items: 2 },
      ],
    });
    expect((await send(as(alice), 'POST', '/annotation_queues/stats', { project_id: P, queue_ids: [] })).body).toEqual({ stats: [] });
  });

  it('filters, sorts and numbers items; the state filter applies after the numbering', async () => {
    const query = async (body: Record<string, unknown>) => {
      const r = await send(as(alice), 'POST', `/annotation_queues/${queueId}/items/query`, { project_id: P, ...body });
      expect(r.status, r.text).toBe(200);
      return r.body.items as any[];
    };
    const byOp = await query({ filter: { call_op_name: 'weave:///acme/queues/op/answer:abc' } });
    expect(byOp.map((i) => i.call_id)).toEqual(['c1', 'c2']);
    expect((await query({ filter: { added_by: bob.user_id, call_trace_id: 'trace-c3' } })).map((i) => i.call_id)).toEqual(['c3']);
    const desc = await query({ sort_by: [{ field: 'call_started_at', direction: 'desc' }], include_position: true });
    expect(desc.map((i) => [i.call_id, i.position_in_queue])).toEqual([
      ['c3', 1],
      ['c2', 2],
      ['c1', 3],
    ]);
    const open = await query({ filter: { annotation_states: ['unstarted', 'in_progress'] }, include_position: true });
    expect(open.map((i) => [i.call_id, i.annotation_state, i.position_in_queue])).toEqual([['c3', 'in_progress', 3]]);
    expect((await query({ limit: 1, offset: 1 })).map((i) => i.call_id)).toEqual(['c2']);
  });

  it('refuses bad input with the field named, and other entities with 403', async () => {
    const noName = await send(as(alice), 'POST', '/annotation_queues', { project_id: P, scorer_refs: [] });
    expect(noName.status).toBe(422);
    expect(noName.body.field).toBe('name');
    const badRef = await send(as(alice), 'POST', '/annotation_queues', { project_id: P, name: 'x', scorer_refs: ['severity'] });
    expect(badRef.body.field).toBe('scorer_refs[0]');
    const badSort = await send(as(alice), 'POST', '/annotation_queues/query', {
      project_id: P,
      sort_by: [{ field: 'secret', direction: 'asc' }],
    });
    expect(badSort.status).toBe(422);
    expect(badSort.body.field).toBe('sort_by[0].field');
    const noProject = await send(as(alice), 'GET', `/annotation_queues/${queueId}`);
    expect(noProject.status).toBe(422);
    expect(noProject.body.field).toBe('project_id');

    // Tenancy reads the query string and the body as any request's.
    expect((await send(as(outsider), 'GET', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`)).status).toBe(403);
    expect((await send(as(outsider), 'DELETE', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`)).status).toBe(403);
    expect((await send(as(outsider), 'POST', `/annotation_queues/${queueId}/items/query`, { project_id: P })).status).toBe(403);
    // Its own project does not see another project's queue.
    expect((await send(as(outsider), 'GET', `/annotation_queues/${queueId}?project_id=globex%2Fqueues`)).status).toBe(404);
    expect((await send(as(alice), 'GET', `/annotation_queues/${queueId}?project_id=${encodeURIComponent(P)}`)).status).toBe(200);
  });

  it('/openapi.json documents the routes with their methods and parameters', async () => {
    const doc = (await send(api, 'GET', '/openapi.json')).body;
    const byId = doc.paths['/annotation_queues/{queue_id}'];
    expect(Object.keys(byId).sort()).toEqual(['delete', 'get', 'put']);
    expect(byId.get.tags).toEqual(['extra']);
    expect(byId.get.requestBody).toBeUndefined();
    expect(byId.get.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([
      ['queue_id', 'path', true],
      ['project_id', 'query', true],
    ]);
    expect(Object.keys(byId.put.requestBody.content['application/json'].schema.properties)).not.toContain('queue_id');
    expect(doc.paths['/annotation_queues/query'].post.responses['200'].content['application/jsonl']).toBeDefined();
    expect(doc.paths['/annotation_queues/{queue_id}/items/{item_id}/progress'].post.parameters.map((p: any) => p.name)).toEqual([
      'queue_id',
      'item_id',
    ]);
  });
});
