import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openStore } from '@weft/store';
import { HARNESS_API_KEY } from './helpers/client';
import { useWeft } from './helpers/fixture';
import { REPO_ROOT } from './helpers/paths';
import { clientFor, createKey, type TestKey } from './helpers/keys';

/**
 * Deletion that deletes: a project's data, and a data subject's calls with the feedback on
 * them, each a job whose status says done only once the rows are out of the engine's parts —
 * checked at the end in the parts themselves, with the server stopped.
 */
let alice: TestKey; // member of `del`; her calls are the data subject's
let carol: TestKey; // member of `del` too; her calls stay
let bob: TestKey; // member of `other` only
const { weft, api } = useWeft({}, async (admin) => {
  for (const e of ['del', 'other']) expect((await admin.post('/admin/entities/create', { name: e })).status).toBe(200);
  alice = await createKey(admin, 'del-alice', ['del']);
  carol = await createKey(admin, 'del-carol', ['del']);
  bob = await createKey(admin, 'del-bob', ['other']);
});
const as = (k: TestKey) => clientFor(api, k);
const TS = '2024-06-01T00:00:00Z';

let seq = 0;
/** Finished calls written by `who` in `project`, each with a note on it written by `noter` (default: the writer). */
async function seed(who: TestKey, project: string, n: number, noter = who): Promise<string[]> {
  const ids = Array.from({ length: n }, () => `0199dddd-0000-7000-8000-${String(++seq).padStart(12, '0')}`);
  const batch = ids.flatMap((id) => [
    {
      mode: 'start',
      req: { start: { project_id: project, id, trace_id: id, op_name: 'step', started_at: TS, inputs: { who: who.user_id } } },
    },
    { mode: 'end', req: { end: { project_id: project, id, ended_at: TS, output: 'ok', summary: {} } } },
  ]);
  expect((await as(who).post('/call/upsert_batch', { batch })).status).toBe(200);
  for (const id of ids) {
    const r = await as(noter).post('/feedback/create', {
      project_id: project,
      weave_ref: `weave:///${project}/call/${id}`,
      feedback_type: 'wandb.note.1',
      payload: { note: 'n' },
    });
    expect(r.status, r.text).toBe(200);
  }
  return ids;
}

const callIds = async (k: TestKey, project: string) =>
  (await as(k).jsonl('/calls/stream_query', { project_id: project, columns: ['id'] })).map((c) => c.id as string).sort();

async function untilDone(k: TestKey | null, jobId: string) {
  const client = k ? as(k) : api;
  let last: any;
  await expect
    .poll(
      async () => {
        last = (await client.post('/deletion/status', { job_id: jobId })).body;
        return last.state;
      },
      { timeout: 60_000, interval: 250 },
    )
    .toBe('done');
  return last;
}

const GONE = 'del/gone';
const KEPT = 'del/kept';
let aliceCalls: string[] = [];
let carolCalls: string[] = [];

describe('deleting a project', () => {
  it('members of its entity may; the job is done once no row of it is left, and nothing of another project went', async () => {
    await seed(alice, GONE, 3);
    // Written by carol: the data-subject job below deletes alice's calls everywhere.
    const kept = await seed(carol, KEPT, 2);
    for (const p of [GONE, KEPT]) {
      expect((await as(alice).post('/obj/create', { obj: { project_id: p, object_id: 'cfg', val: { a: 1 } } })).status).toBe(200);
      expect((await as(alice).post('/table/create', { table: { project_id: p, rows: [{ r: 1 }, { r: 2 }] } })).status).toBe(200);
      expect((await as(alice).post('/project/ttl_settings/update', { project_id: p, retention_days: 90 })).status).toBe(200);
    }

    const refused = await as(bob).post('/project/delete', { project_id: GONE });
    expect(refused.status).toBe(403);
    const bad = await as(alice).post('/project/delete', {});
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('project_id');

    const job = await as(alice).post('/project/delete', { project_id: GONE });
    expect(job.status, job.text).toBe(200);
    expect(job.body).toMatchObject({ kind: 'project', target: GONE });
    expect(job.body.job_id).toMatch(/^[0-9a-f-]{36}$/);
    // Another entity's member learns nothing of the job.
    expect((await as(bob).post('/deletion/status', { job_id: job.body.job_id })).status).toBe(404);
    const done = await untilDone(alice, job.body.job_id);
    expect(done.mutations_pending).toBe(0);
    expect(done.tables.map((t: { table: string }) => t.table)).toEqual(
      expect.arrayContaining(['calls_starts', 'calls_ends', 'feedback', 'object_versions', 'tables', 'table_rows', 'project_settings']),
    );
    expect(done.tables.every((t: { rows_left: number }) => t.rows_left === 0)).toBe(true);

    expect(await callIds(alice, GONE)).toEqual([]);
    expect((await as(alice).post('/feedback/query', { project_id: GONE })).body.result).toEqual([]);
    expect((await as(alice).post('/objs/query', { project_id: GONE })).body.objs).toEqual([]);
    expect(await callIds(alice, KEPT)).toEqual([...kept].sort());
    expect((await as(alice).post('/objs/query', { project_id: KEPT })).body.objs).toHaveLength(1);
    expect((await as(alice).post('/project/ttl_settings/read', { project_id: KEPT })).body).toEqual({ retention_days: 90 });
  });
});

describe("deleting a data subject's calls", () => {
  it('admin keys only; every call of the svc_user_id in every project and the feedback on them go, others stay', async () => {
    aliceCalls = [...(await seed(alice, 'del/p1', 3)), ...(await seed(alice, 'del/p2', 2, carol))];
    carolCalls = await seed(carol, 'del/p1', 2, alice);

    expect((await as(alice).post('/user_data/delete', { svc_user_id: alice.user_id })).status).toBe(403);
    const empty = await api.post('/user_data/delete', { svc_user_id: '' });
    expect(empty.status).toBe(422);
    expect(empty.body.field).toBe('svc_user_id');

    const job = await api.post('/user_data/delete', { svc_user_id: alice.user_id });
    expect(job.status, job.text).toBe(200);
    expect(job.body).toMatchObject({ kind: 'user', target: alice.user_id });
    // A member cannot read an admin's user job.
    expect((await as(alice).post('/deletion/status', { job_id: job.body.job_id })).status).toBe(404);
    const done = await untilDone(null, job.body.job_id);
    expect(done.tables.every((t: { rows_left: number }) => t.rows_left === 0)).toBe(true);
    // The CLI reads the same status through the server.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'delete', 'status', job.body.job_id],
      { env: { ...process.env, WEFT_URL: weft.url, WEFT_API_KEY: HARNESS_API_KEY }, timeout: 60_000 },
    );
    expect(JSON.parse(stdout)).toMatchObject({ job_id: job.body.job_id, state: 'done' });

    expect(await callIds(carol, 'del/p1')).toEqual([...carolCalls].sort());
    expect(await callIds(carol, 'del/p2')).toEqual([]);
    // Feedback on alice's calls (also carol's notes on them) went; alice's notes on carol's calls are not "on her calls": they stay.
    expect((await as(carol).post('/feedback/query', { project_id: 'del/p2' })).body.result).toEqual([]);
    const p1 = (await as(carol).post('/feedback/query', { project_id: 'del/p1' })).body.result as { weave_ref: string }[];
    expect(p1.map((f) => f.weave_ref.split('/').pop()).sort()).toEqual([...carolCalls].sort());
  });

  it("in the engine's parts, with the server stopped: nothing of the project or of the subject's calls is left, masked or not", async () => {
    expect(await weft.stop()).toBe(0);
    const store = openStore({ dataDir: weft.dataDir });
    try {
      const rows = async <T>(sql: string) => {
        const rs = await store.client.query({ query: `${sql} SETTINGS apply_deleted_mask = 0`, format: 'JSONEachRow' });
        return rs.json<T>();
      };
      const count = async (sql: string) => Number((await rows<{ n: string }>(sql))[0]!.n);
      const tables = (
        await rows<{ table: string }>(
          `SELECT DISTINCT c.table AS table FROM system.columns c JOIN system.tables t ON t.name = c.table AND t.database = c.database
           WHERE c.database = currentDatabase() AND c.name = 'project_id' AND t.engine LIKE '%MergeTree'`,
        )
      ).map((r) => r.table);
      expect(tables.length).toBeGreaterThan(10);
      for (const table of tables) expect(await count(`SELECT count() AS n FROM ${table} WHERE project_id = '${GONE}'`), table).toBe(0);
      expect(await count(`SELECT count() AS n FROM calls_starts WHERE project_id = '${KEPT}'`)).toBe(2);

      const inList = (ids: string[]) => `(${ids.map((i) => `'${i}'`).join(',')})`;
      for (const table of ['calls_starts', 'calls_ends'])
        expect(await count(`SELECT count() AS n FROM ${table} WHERE id IN ${inList(aliceCalls)}`), table).toBe(0);
      expect(await count(`SELECT count() AS n FROM calls_starts WHERE svc_user_id = '${alice.user_id}'`)).toBe(0);
      expect(await count(`SELECT count() AS n FROM feedback WHERE splitByChar('/', svc_ref)[-1] IN ${inList(aliceCalls)}`)).toBe(0);
      expect(await count(`SELECT count() AS n FROM calls_ends WHERE id IN ${inList(carolCalls)}`)).toBe(2);
      expect(await count(`SELECT count() AS n FROM feedback WHERE splitByChar('/', svc_ref)[-1] IN ${inList(carolCalls)}`)).toBe(2);
      // The deletes were mutations rewriting the parts, all of them ended.
      expect(await count(`SELECT count() AS n FROM system.mutations WHERE NOT is_done`)).toBe(0);
      expect(await count(`SELECT count() AS n FROM system.mutations WHERE is_done AND command LIKE '%DELETE%'`)).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });
});
