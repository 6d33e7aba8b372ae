import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * `weft backup` / `weft restore` of an all-in-one data directory: calls, objects, feedback,
 * settings and keys written through a real server — and calls it acknowledged but had not stored
 * when it was killed (still in its ingest log) — are backed up with the server stopped (a running
 * one makes the backup refuse), restored into a fresh directory, and read back through a server
 * started on it: the same calls.
 */
const P = 'bk/proj';
const TS = '2024-06-01T00:00:00Z';
const source = newDataDir('backup-source');
const restored = newDataDir('backup-restored');
const backupDir = join(TEST_ROOT, `backup-${process.pid}`);
const running: RunningWeft[] = [];
afterAll(async () => {
  for (const w of running) await w.stop();
});

const uuid = (n: number) => `0199bbbb-0000-7000-8000-${String(n).padStart(12, '0')}`;
const batch = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => from + i).flatMap((k) => [
    {
      mode: 'start',
      req: { start: { project_id: P, id: uuid(k), trace_id: uuid(k), op_name: 'op', started_at: TS, inputs: { k }, attributes: {} } },
    },
    { mode: 'end', req: { end: { project_id: P, id: uuid(k), ended_at: TS, output: k * 2, summary: {} } } },
  ]);
const calls = async (api: Client) =>
  (await api.jsonl('/calls/stream_query', { project_id: P, sort_by: [{ field: 'id', direction: 'asc' }] })).map((c) => ({
    id: c.id,
    inputs: c.inputs,
    output: c.output,
  }));

async function weftCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: unknown; err: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), ...args], {
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, out: null, err: err.stderr };
  }
}

describe('backup and restore of an all-in-one data directory', () => {
  let before: { id: string }[];
  let objectDigest: string;

  it('refuses while a server runs on the directory; backs it up once it is stopped, unstored acknowledged calls included', async () => {
    const first = await startWeft({ dataDir: source });
    running.push(first);
    const api = new Client(first.url);
    expect((await api.post('/admin/entities/create', { name: 'bk' })).status).toBe(200);
    expect((await api.post('/call/upsert_batch', { batch: batch(1, 20) })).status).toBe(200);
    const obj = await api.post('/obj/create', { obj: { project_id: P, object_id: 'config', val: { temperature: 0.2 } } });
    objectDigest = obj.body.digest;
    expect((await api.post('/project/ttl_settings/update', { project_id: P, retention_days: 30 })).status).toBe(200);
    expect(
      (
        await api.post('/feedback/create', {
          project_id: P,
          weave_ref: `weave:///${P}/call/${uuid(1)}`,
          feedback_type: 'note',
          payload: { note: 'kept' },
        })
      ).status,
    ).toBe(200);
    expect((await calls(api)).length).toBe(20);

    const busy = await weftCli(['backup', backupDir, '--data-dir', source]);
    expect(busy.code).toBe(1);
    expect(busy.err).toMatch(/in use by another weft process \(pid \d+\)/);
    expect(existsSync(backupDir)).toBe(false);
    await first.stop();

    // Calls acknowledged and not yet stored when the server is killed: in its ingest log only.
    const second = await startWeft({ dataDir: source, env: { WEFT_LOG_FLUSH_MS: '600000', WEFT_MONITORS_INTERVAL_MS: '0' } });
    running.push(second);
    expect((await new Client(second.url).post('/call/upsert_batch', { batch: batch(21, 5) })).status).toBe(200);
    await second.kill();

    const backup = await weftCli(['backup', backupDir, '--data-dir', source]);
    expect(backup.code, backup.err).toBe(0);
    expect(backup.out).toMatchObject({ database: 'default', ingest_log: true, schema_version: expect.any(Number) });
    expect((backup.out as { tables: Record<string, number> }).tables).toMatchObject({
      weft_migrations: expect.any(Number),
      object_versions: 1,
      feedback: 1,
    });
    expect(existsSync(join(backupDir, 'weft-backup.json'))).toBe(true);
    // A second backup into the same directory is refused, the first left as it was.
    expect((await weftCli(['backup', backupDir, '--data-dir', source])).err).toMatch(/is not empty/);
  }, 300_000);

  it('restores into a fresh directory only; a server started on it reads the same calls, objects, feedback, settings and keys', async () => {
    expect((await weftCli(['restore', backupDir, '--data-dir', source])).err).toMatch(/already holds a store/);
    const restore = await weftCli(['restore', backupDir, '--data-dir', restored]);
    expect(restore.code, restore.err).toBe(0);
    expect(restore.out).toMatchObject({ restored_tables: expect.any(Number) });

    // The original, started again, stores what its log acknowledged: the reference to compare with.
    const original = await startWeft({ dataDir: source });
    running.push(original);
    before = await calls(new Client(original.url));
    expect(before.length).toBe(25);
    await original.stop();

    const copy = await startWeft({ dataDir: restored });
    running.push(copy);
    const api = new Client(copy.url);
    expect(await calls(api)).toEqual(before);
    expect((await api.post('/obj/read', { project_id: P, object_id: 'config', digest: objectDigest })).body.obj.val).toEqual({
      temperature: 0.2,
    });
    const feedback = await api.post('/feedback/query', { project_id: P });
    expect(feedback.body.result.map((f: { payload: unknown }) => f.payload)).toEqual([{ note: 'kept' }]);
    expect((await api.post('/project/ttl_settings/read', { project_id: P })).body).toEqual({ retention_days: 30 });
    expect((await api.post('/admin/keys/list', {})).status).toBe(200);
    await copy.stop();
  }, 300_000);

  it('says what to use in server mode', async () => {
    const r = await weftCli(['backup', join(TEST_ROOT, 'never')], { CLICKHOUSE_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ClickHouse's own BACKUP\/RESTORE/);
  });
});
