import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import type { Logger } from '@weft/core';
import { statementsFor } from './cluster-ddl';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/** Migrations are `NNN_name.sql` files; statements are separated by lines holding only `;`-terminated SQL. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .filter((l) => !l.trimStart().startsWith('--'))
        .join('\n');
      return {
        version: Number(file.slice(0, 3)),
        name: file.replace(/\.sql$/, ''),
        statements: text
          .split(/;\s*(?:\n|$)/)
          .map((s) => s.trim())
          .filter(Boolean),
      };
    });
}

/**
 * The migrations of weft before 1.0 (001 to 161), squashed into 200_baseline.sql. A data dir that
 * has applied all of them holds the baseline's schema plus two tables nothing reads any more; it
 * is upgraded in place (RETIRED_TABLES dropped, the baseline recorded). One that stopped earlier
 * is refused: its missing migrations no longer exist.
 */
export const PRE_1_0_MIGRATIONS: readonly number[] = [
  1, 10, 11, 12, 13, 20, 21, 22, 23, 50, 60, 70, 80, 85, 90, 91, 92, 100, 101, 102, 103, 110, 120, 125, 130, 140, 150, 160, 161,
];
export const BASELINE_VERSION = 200;
/** What the last pre-1.0 schema holds beyond the baseline (unfed since before 1.0). */
export const RETIRED_TABLES = ['calls_merged', 'calls_merged_stats'] as const;

/** A data dir this code cannot bring to its schema; the message says why and what to do. */
export class SchemaTooOldError extends Error {
  override name = 'SchemaTooOldError';
}

/** Where weft records its applied migrations (created before any migration runs). */
export const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS weft_migrations (
      version UInt32, name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = ReplacingMergeTree ORDER BY version`;

/**
 * Every migration's statements as they are run: as written, or in cluster form on `cluster`
 * (cluster-ddl.ts). Always derived for the whole list, so a later migration's view knows the
 * tables the earlier ones created.
 */
export function migrationPlan(cluster?: string, dir?: string): { bookkeeping: string[]; migrations: Migration[] } {
  const tables = new Set<string>();
  const bookkeeping = statementsFor([MIGRATIONS_TABLE_DDL], cluster, tables);
  const migrations = loadMigrations(dir).map((m) => ({ ...m, statements: statementsFor(m.statements, cluster, tables) }));
  return { bookkeeping, migrations };
}

export interface MigrateOptions {
  dir?: string;
  /** CLICKHOUSE_CLUSTER: create replicated tables ON CLUSTER behind Distributed ones. */
  cluster?: string;
}

/**
 * Applies the migrations not yet recorded in `weft_migrations`, in order. Each statement is
 * idempotent (IF NOT EXISTS), so a migration interrupted half-way is safe to run again; a
 * migration is recorded only after all its statements succeeded.
 */
export async function migrate(
  target: ClickHouseClient | { client: ClickHouseClient },
  log?: Logger,
  options: MigrateOptions = {},
): Promise<number[]> {
  const client = 'client' in target ? target.client : target;
  const { bookkeeping, migrations } = migrationPlan(options.cluster, options.dir);
  // On a cluster: inserts through a Distributed table reach the shards before the statement
  // returns; a back-fill's `IN (SELECT … FROM <Distributed>)` reads each shard's own rows,
  // which is right because both sides are sharded by the same key (SCHEMA.md "Cluster mode").
  const clickhouse_settings: ClickHouseSettings | undefined = options.cluster
    ? { insert_distributed_sync: 1, distributed_product_mode: 'local' }
    : undefined;
  for (const statement of bookkeeping) await client.command({ query: statement, clickhouse_settings });
  const rs = await client.query({ query: 'SELECT DISTINCT version FROM weft_migrations', format: 'JSONEachRow' });
  const done = new Set((await rs.json<{ version: number }>()).map((r) => Number(r.version)));
  const applied: number[] = [];
  const legacy = [...done].filter((v) => v < BASELINE_VERSION);
  if (legacy.length > 0 && !done.has(BASELINE_VERSION)) {
    const missing = PRE_1_0_MIGRATIONS.filter((v) => !done.has(v));
    if (missing.length > 0) {
      throw new SchemaTooOldError(
        `this data dir's schema stops at pre-1.0 migration ${Math.max(...legacy)} (missing ${missing.join(', ')}); ` +
          `this weft upgrades only the last pre-1.0 schema (migration 161) to its baseline. Open the data dir once with ` +
          `weft 0.1 at its last commit (it applies the rest), or start with a new data dir (docs/operations.md "Upgrades").`,
      );
    }
    for (const statement of statementsFor(
      RETIRED_TABLES.map((t) => `DROP TABLE IF EXISTS ${t}`),
      options.cluster,
      new Set(RETIRED_TABLES),
    ))
      await client.command({ query: statement, clickhouse_settings });
    await client.insert({
      table: 'weft_migrations',
      values: [{ version: BASELINE_VERSION, name: 'baseline (upgraded from pre-1.0 migration 161)' }],
      format: 'JSONEachRow',
      clickhouse_settings,
    });
    log?.info({ from: 161, to: BASELINE_VERSION }, 'data dir upgraded to the 1.0 baseline');
    done.add(BASELINE_VERSION);
  }
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const statement of m.statements) await client.command({ query: statement, clickhouse_settings });
    await client.insert({
      table: 'weft_migrations',
      values: [{ version: m.version, name: m.name }],
      format: 'JSONEachRow',
      clickhouse_settings,
    });
    log?.info({ migration: m.name }, 'migration applied');
    applied.push(m.version);
  }
  return applied;
}

/** The schema version this code needs: the newest migration it ships. */
export function latestMigration(dir?: string): number {
  return Math.max(0, ...loadMigrations(dir).map((m) => m.version));
}

/**
 * For processes that do not migrate (WEFT_MIGRATE=wait): polls until `weft migrate` (or the one
 * process that migrates) has applied every migration this code ships, or throws after `timeoutMs`.
 */
export async function waitForMigrations(
  target: ClickHouseClient | { client: ClickHouseClient },
  timeoutMs: number,
  log?: Logger,
  dir?: string,
): Promise<void> {
  const client = 'client' in target ? target.client : target;
  const needed = latestMigration(dir);
  const deadline = Date.now() + timeoutMs;
  for (let waited = false; ; waited = true) {
    const version = await appliedVersion(client);
    if (version >= needed) return;
    if (Date.now() > deadline) {
      throw new Error(`schema at migration ${version}, this code needs ${needed}: run \`weft migrate\` (waited ${timeoutMs} ms)`);
    }
    if (!waited) log?.info({ applied: version, needed }, 'waiting for migrations (weft migrate)');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The newest migration recorded as applied; 0 when none (or no migrations table yet). */
async function appliedVersion(client: ClickHouseClient): Promise<number> {
  const exists = await client.query({ query: 'EXISTS TABLE weft_migrations', format: 'JSONEachRow' });
  if (!Number(Object.values((await exists.json<Record<string, number>>())[0] ?? {})[0] ?? 0)) return 0;
  const rs = await client.query({ query: 'SELECT max(version) AS v FROM weft_migrations', format: 'JSONEachRow' });
  return Number((await rs.json<{ v: number }>())[0]?.v ?? 0);
}
