import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/paths';
import { openStore } from '@weft/store';
import { useWeft } from './helpers/fixture';
import { clientFor, createKey, type TestKey } from './helpers/keys';

/**
 * Retention (/project/ttl_settings): calls older than their project's retention, and their
 * feedback, leave the store — removed by the engine, not hidden — while the rest stays. One
 * server with a default retention of 30 days and a pass every half second.
 */
const DAY = 86_400_000;
let key: TestKey;
let outsider: TestKey;
const { weft, api } = useWeft({ env: { WEFT_RETENTION_DAYS: '30', WEFT_RETENTION_INTERVAL_MS: '500' } }, async (admin) => {
  for (const e of ['ret', 'other']) expect((await admin.post('/admin/entities/create', { name: e })).status).toBe(200);
  key = await createKey(admin, 'ret-alice', ['ret']);
  outsider = await createKey(admin, 'ret-bob', ['other']);
});
const as = (k: TestKey) => clientFor(api, k);

/** Calls of `project` started `ages` days ago (one each), each with a note as feedback. */
async function seed(project: string, ages: number[]): Promise<string[]> {
  const ids = ages.map((_, i) => `0199cccc-0000-7000-8000-${project.length}${String(i).padStart(11, '0')}`);
  const batch = ages.flatMap((age, i) => {
    const started = Date.now() - age * DAY;
    return [
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id: ids[i],
            trace_id: `t-${ids[i]}`,
            op_name: 'step',
            started_at: new Date(started).toISOString(),
            inputs: { age },
            attributes: {},
          },
        },
      },
      {
        mode: 'end',
        req: { end: { project_id: project, id: ids[i], ended_at: new Date(started + 1000).toISOString(), output: 'ok', summary: {} } },
      },
    ];
  });
  // The feedback first: a pass between the two removes the expired calls, and feedback written
  // after its call has gone would never expire (its age is its call's).
  for (const id of ids) {
    const r = await as(key).post('/feedback/create', {
      project_id: project,
      weave_ref: `weave:///${project}/call/${id}`,
      feedback_type: 'wandb.note.1',
      payload: { note: `on ${id}` },
    });
    expect(r.status, r.text).toBe(200);
  }
  expect((await as(key).post('/call/upsert_batch', { batch })).status).toBe(200);
  return ids;
}

const callIds = async (project: string) =>
  (await as(key).jsonl('/calls/stream_query', { project_id: project, columns: ['id'] })).map((c) => c.id as string).sort();
const feedbackCount = async (project: string) =>
  (await as(key).post('/feedback/query', { project_id: project })).body.result.length as number;

describe('retention', () => {
  it("reads and sets a project retention through Weave's own endpoints, refusing what is not null or ≥ 1", async () => {
    const P = 'ret/settings';
    expect((await as(key).post('/project/ttl_settings/read', { project_id: P })).body).toEqual({ retention_days: 30 }); // the default
    expect((await as(key).post('/project/ttl_settings/update', { project_id: P, retention_days: 7 })).body).toEqual({ retention_days: 7 });
    expect((await as(key).post('/project/ttl_settings/read', { project_id: P })).body).toEqual({ retention_days: 7 });
    expect((await as(key).post('/project/ttl_settings/update', { project_id: P, retention_days: null })).body).toEqual({
      retention_days: null,
    });
    expect((await as(key).post('/project/ttl_settings/read', { project_id: P })).body).toEqual({ retention_days: null });
    const zero = await as(key).post('/project/ttl_settings/update', { project_id: P, retention_days: 0 });
    expect(zero.status).toBe(422);
    expect(zero.body.field).toBe('retention_days');
    expect((await as(outsider).post('/project/ttl_settings/update', { project_id: P, retention_days: 1 })).status).toBe(403);
    expect((await as(key).post('/project/ingest_sampling_settings/read', { project_id: P })).body).toEqual({
      dry_run: false,
      sample_rate: 1,
    });

    // The CLI, through the server.
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'retention', ...args], {
        env: { ...process.env, WEFT_URL: weft.url, WEFT_API_KEY: key.key },
        timeout: 60_000,
      });
    expect(JSON.parse((await cli(P, '14')).stdout)).toEqual({ retention_days: 14 });
    expect(JSON.parse((await cli(P)).stdout)).toEqual({ retention_days: 14 });
    expect(JSON.parse((await cli(P, 'off')).stdout)).toEqual({ retention_days: null });
    await expect(cli(P, '0')).rejects.toMatchObject({ code: 2 });
  });

  it('removes what expired — calls, their end rows and feedback — per project, keeping the rest', async () => {
    const short = 'ret/short'; // its own retention: 5 days
    const deflt = 'ret/default'; // the server's 30 days
    const forever = 'ret/forever'; // null: keeps everything
    // Settings first: until a project sets its own, the server's default (30 days) applies to it.
    await as(key).post('/project/ttl_settings/update', { project_id: short, retention_days: 5 });
    await as(key).post('/project/ttl_settings/update', { project_id: forever, retention_days: null });
    const [s10, s1] = await seed(short, [10, 1]);
    const [d40, d10] = await seed(deflt, [40, 10]);
    const forIds = await seed(forever, [40, 10]);

    await expect.poll(() => callIds(short), { timeout: 60_000, interval: 250 }).toEqual([s1]);
    await expect.poll(() => callIds(deflt), { timeout: 60_000, interval: 250 }).toEqual([d10]);
    expect(await callIds(forever)).toEqual([...forIds].sort());
    await expect.poll(() => feedbackCount(short), { timeout: 60_000, interval: 250 }).toBe(1);
    await expect.poll(() => feedbackCount(deflt), { timeout: 60_000, interval: 250 }).toBe(1);
    expect(await feedbackCount(forever)).toBe(2);
    // Counts agree with the rows.
    expect((await as(key).post('/calls/query_stats', { project_id: short })).body.count).toBe(1);
    void s10;
    void d40;

    // In the engine itself, with the server stopped: the rows are gone from the parts, not masked.
    expect(await weft.stop()).toBe(0);
    const store = openStore({ dataDir: weft.dataDir });
    try {
      const count = async (sql: string) => {
        const rs = await store.client.query({ query: `${sql} SETTINGS apply_deleted_mask = 0`, format: 'JSONEachRow' });
        return Number((await rs.json<{ n: string }>())[0]!.n);
      };
      for (const [table, project, n] of [
        ['calls_starts', short, 1],
        ['calls_ends', short, 1],
        ['feedback', short, 1],
        ['calls_starts', deflt, 1],
        ['calls_ends', deflt, 1],
        ['calls_starts', forever, 2],
      ] as const)
        expect(await count(`SELECT count() AS n FROM ${table} WHERE project_id = '${project}'`), `${table} ${project}`).toBe(n);
      // Physical deletes are mutations that ended; none left pending.
      expect(await count(`SELECT count() AS n FROM system.mutations WHERE NOT is_done`)).toBe(0);
    } finally {
      await store.close();
    }
  }, 180_000);
});
