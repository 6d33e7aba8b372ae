import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BASELINE_VERSION, latestMigration, loadMigrations, PRE_1_0_MIGRATIONS, RETIRED_TABLES } from '@weft/store';
import { Client } from './helpers/client';
import { weftCli } from './helpers/cli';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * The 1.0 schema baseline (libs/store/src/migrations/200_baseline.sql) against data dirs made
 * before it: a dir holding the last pre-1.0 schema (test/fixtures/pre-1.0-schema.sql, all of
 * 001–161) is upgraded in place — same tables and views as a new dir, the retired ones dropped,
 * its calls still read — and a dir that stopped earlier is refused with a message saying what
 * to do, untouched.
 */
const run = promisify(execFile);
const FIXTURE = join(REPO_ROOT, 'test/fixtures/pre-1.0-schema.sql');
const P = 'qa/upgrade';

interface Dump {
  tables: Record<string, string>;
  migrations: number[];
  counts: { starts: number; ends: number; prices: number };
}
async function schemaTool(dataDir: string, ...args: string[]): Promise<string> {
  const r = await run(process.execPath, ['--import', 'tsx', 'test/helpers/schema-tool.ts', dataDir, ...args], {
    cwd: REPO_ROOT,
    timeout: 120_000,
  });
  return r.stdout;
}
const dump = async (dataDir: string) => JSON.parse(await schemaTool(dataDir, 'dump')) as Dump;
const migrateCli = (dataDir: string) => weftCli(['migrate'], { WEFT_DATA_DIR: dataDir });

/** A data dir with the last pre-1.0 schema and two calls stored the pre-1.0 way (through call_parts). */
async function legacyDataDir(label: string, keepVersions: (v: number) => boolean = () => true): Promise<string> {
  const dir = newDataDir(label);
  const calls = join(dir, 'legacy-calls.sql');
  writeFileSync(
    calls,
    [
      `INSERT INTO call_parts (project_id, id, trace_id, op_name, started_at, attributes_dump, inputs_dump, input_refs, output_refs) VALUES ('${P}', 'old-1', 't1', 'weave:///qa/upgrade/op/answer:v1', '2026-01-01 00:00:00', '{}', '{"q":1}', [], []);`,
      `INSERT INTO call_parts (project_id, id, ended_at, summary_dump, output_dump, input_refs, output_refs) VALUES ('${P}', 'old-1', '2026-01-01 00:00:02', '{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":10,"completion_tokens":5}}}', '"answer"', [], []);`,
      `INSERT INTO call_parts (project_id, id, trace_id, parent_id, op_name, started_at, attributes_dump, inputs_dump, input_refs, output_refs) VALUES ('${P}', 'old-2', 't1', 'old-1', 'weave:///qa/upgrade/op/tool:v1', '2026-01-01 00:00:01', '{}', '{}', [], []);`,
      `ALTER TABLE weft_migrations DELETE WHERE version NOT IN (${PRE_1_0_MIGRATIONS.filter(keepVersions).join(', ')}) SETTINGS mutations_sync = 2;`,
    ].join('\n') + '\n',
  );
  await schemaTool(dir, 'apply', FIXTURE);
  await schemaTool(dir, 'apply', calls);
  return dir;
}

describe('the 1.0 schema baseline', () => {
  let weft: RunningWeft | undefined;
  afterAll(async () => void (await weft?.stop()));

  it('upgrades a data dir holding the last pre-1.0 schema in place: the same schema as a new one, its calls kept', async () => {
    const fresh = newDataDir('baseline-new');
    expect((await migrateCli(fresh)).code).toBe(0);
    const expected = await dump(fresh);
    const since1_0 = loadMigrations().map((m) => m.version);
    expect(since1_0[0]).toBe(BASELINE_VERSION);
    expect(expected.migrations).toEqual(since1_0);
    expect(Number(expected.counts.prices)).toBeGreaterThan(20);

    const legacy = await legacyDataDir('baseline-legacy');
    const before = await dump(legacy);
    for (const t of RETIRED_TABLES) expect(Object.keys(before.tables)).toContain(t);
    expect(before.migrations).toEqual([...PRE_1_0_MIGRATIONS]);

    const upgrade = await migrateCli(legacy);
    expect(upgrade.code, upgrade.err).toBe(0);
    const after = await dump(legacy);
    // Every table and view a new dir has, defined alike; the retired ones gone.
    expect(after.tables).toEqual(expected.tables);
    expect(after.migrations).toEqual([...PRE_1_0_MIGRATIONS, ...since1_0]);
    expect(after.counts).toMatchObject({ starts: 2, ends: 1 });
    // A second run has nothing to do.
    expect(JSON.parse((await migrateCli(legacy)).out)).toMatchObject({ applied: [], schema_version: latestMigration() });

    // The server reads the calls stored before the upgrade, and stores new ones beside them.
    weft = await startWeft({ dataDir: legacy });
    const api = new Client(weft.url);
    await api.post('/call/upsert_batch', {
      batch: [
        {
          mode: 'start',
          req: {
            start: {
              project_id: P,
              id: 'new-1',
              trace_id: 't2',
              op_name: 'answer',
              started_at: '2026-02-01T00:00:00Z',
              inputs: {},
              attributes: {},
            },
          },
        },
      ],
    });
    const calls = await api.jsonl<{ id: string; output?: unknown; summary?: any }>('/calls/stream_query', {
      project_id: P,
      sort_by: [{ field: 'started_at', direction: 'asc' }],
    });
    expect(calls.map((c) => c.id)).toEqual(['old-1', 'old-2', 'new-1']);
    expect(calls[0]).toMatchObject({ output: 'answer', summary: { weave: { status: 'success' } } });
    const totals = await api.post('/calls/aggregate', { project_id: P });
    expect(totals.body.totals).toMatchObject({ calls: 3 });
  });

  it('refuses a data dir that stopped before the last pre-1.0 migration, saying what to do, and leaves it as it was', async () => {
    const legacy = await legacyDataDir('baseline-older', (v) => v <= 140);
    const before = await dump(legacy);
    expect(before.migrations.at(-1)).toBe(140);
    const r = await migrateCli(legacy);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/schema stops at pre-1\.0 migration 140 \(missing 150, 160, 161\)/);
    expect(r.err).toMatch(/new data dir/);
    expect(await dump(legacy)).toEqual(before);

    // The server refuses to start on it with the same message (it never serves a half-known schema).
    await expect(startWeft({ dataDir: legacy })).rejects.toThrow(/pre-1\.0 migration 140/);
  });
});
