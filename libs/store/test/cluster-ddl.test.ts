import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@weft/core';
import {
  ClusterDdlError,
  SHARDING_KEYS,
  clusterStatements,
  deleteStatement,
  localTable,
  physicalDeleteStatement,
} from '../src/cluster-ddl';
import { openStore } from '../src/connection';
import { MIGRATIONS_TABLE_DDL, loadMigrations, migrationPlan } from '../src/migrate';

/**
 * The cluster form of the migrations (CLICKHOUSE_CLUSTER). chDB is one process and cannot run
 * a cluster (no Keeper, no remote shards), so every generated statement is checked by the
 * engine's own parser (EXPLAIN AST, formatQuery) and by the rules that make it right; it is
 * not executed. Every migration on disk goes through it, new ones included.
 */
const require = createRequire(import.meta.url);
const chdb = require('chdb') as { query(sql: string, format?: string): string };

const CLUSTER = 'weft_cluster';
const sqlString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** The statement as the engine's parser reads it back (throws on a syntax error). */
function parsed(statement: string): string {
  chdb.query(`EXPLAIN AST ${statement}`, 'TSV');
  return chdb.query(`SELECT formatQuerySingleLine(${sqlString(statement)})`, 'TSVRaw').trim();
}

const singleNode = loadMigrations();
const cluster = migrationPlan(CLUSTER);
const clusterAll = [...cluster.bookkeeping, ...cluster.migrations.flatMap((m) => m.statements)];
const singleAll = [MIGRATIONS_TABLE_DDL, ...singleNode.flatMap((m) => m.statements)];

/** Tables the single-node DDL creates, with their ORDER BY columns (empty for Null). */
const tables = new Map<string, string[]>();
for (const s of singleAll) {
  const m = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(s);
  if (!m) continue;
  const order = /ORDER BY (?:\(([^)]*)\)|(\w+))/.exec(s);
  tables.set(m[1]!, order ? (order[1] ?? order[2]!).split(',').map((c) => c.trim()) : []);
}
const keyColumns = (key: string) => (/\(([^)]*)\)/.exec(key)?.[1] ?? key).split(',').map((c) => c.trim());

describe('migrations without CLICKHOUSE_CLUSTER', () => {
  it('are the single-node statements, unchanged', () => {
    const plain = migrationPlan(undefined);
    expect(plain.bookkeeping).toEqual([MIGRATIONS_TABLE_DDL]);
    expect(plain.migrations).toEqual(singleNode);
    expect(plain.migrations.flatMap((m) => m.statements).every((s, i) => s === singleNode.flatMap((n) => n.statements)[i])).toBe(true);
  });
});

describe('migrations with CLICKHOUSE_CLUSTER', () => {
  it('covers every migration on disk, statement by statement', () => {
    expect(cluster.migrations.map((m) => m.version)).toEqual(singleNode.map((m) => m.version));
    expect(singleNode.length).toBeGreaterThanOrEqual(1);
    for (const [i, m] of cluster.migrations.entries())
      expect(m.statements.length, m.name).toBeGreaterThanOrEqual(singleNode[i]!.statements.length);
  });

  it("gives every generated statement to the engine's parser, and it reads them back ON CLUSTER", () => {
    expect(clusterAll.length).toBeGreaterThan(singleAll.length);
    for (const s of clusterAll) {
      const formatted = parsed(s);
      if (/^(CREATE|ALTER|DROP|OPTIMIZE)/.test(s)) expect(formatted, s.slice(0, 80)).toContain(`ON CLUSTER ${CLUSTER}`);
    }
  });

  it('the parse check fails on a statement the engine cannot read', () => {
    expect(() => parsed(`CREATE TABLE IF NOT EXISTS x_local ON CLUSTER ${CLUSTER} (a String ENGINE = Null`)).toThrow(/Syntax error/i);
    expect(() =>
      parsed(`CREATE TABLE x ON CLUSTER ${CLUSTER} AS x_local ENGINE = Distributed('c', currentDatabase(), x_local, cityHash64(a)`),
    ).toThrow();
  });

  it('makes every table a replicated local table (with {shard}/{replica}) under a Distributed table', () => {
    expect(tables.size).toBeGreaterThanOrEqual(15);
    for (const [table, order] of tables) {
      const local = clusterAll.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${localTable(table)} ON CLUSTER ${CLUSTER} (`));
      expect(local, table).toBeDefined();
      const engine = /ENGINE = (\w+)/.exec(local!)![1]!;
      if (order.length === 0) expect(engine, table).toBe('Null');
      else {
        expect(engine, table).toMatch(/^Replicated\w*MergeTree$/);
        expect(local).toContain("('/clickhouse/tables/{shard}/{database}/{table}', '{replica}'");
        expect(local).not.toContain('non_replicated_deduplication_window');
      }
      const dist = clusterAll.filter((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER`));
      expect(dist, table).toEqual([
        `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER ${CLUSTER} AS ${localTable(table)} ENGINE = Distributed('${CLUSTER}', currentDatabase(), ${localTable(table)}, ${SHARDING_KEYS[table]})`,
      ]);
    }
  });

  it('shards by columns of the sorting key, so rows the engine folds or replaces together meet on one shard', () => {
    for (const [table, order] of tables) {
      const cols = keyColumns(SHARDING_KEYS[table]!);
      if (order.length === 0) continue; // Null: keeps nothing; its views' targets are checked below
      for (const c of cols) expect(order, `${table}: shard key ${SHARDING_KEYS[table]} vs ORDER BY ${order.join(', ')}`).toContain(c);
    }
    // The rule itself can fail: a key on a column outside the sorting key.
    expect(tables.get('calls_starts')).not.toContain('trace_id');
  });

  it('folds each part on the shard it was sent to: views read and write local tables with the same sharding key', () => {
    const views = clusterAll.filter((s) => s.startsWith('CREATE MATERIALIZED VIEW'));
    expect(views.length).toBeGreaterThanOrEqual(2);
    for (const v of views) {
      const [, name, target] = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) ON CLUSTER \w+ TO (\w+) AS/.exec(v)!;
      expect(target, name).toMatch(/_local$/);
      const sources = [...v.matchAll(/\bFROM\s+(\w+)/g)].map((m) => m[1]!);
      expect(sources.length, name).toBeGreaterThan(0);
      for (const source of sources) {
        expect(source, name).toMatch(/_local$/);
        // All parts of one call, and every fold of them, on one shard.
        expect(SHARDING_KEYS[source.replace(/_local$/, '')], `${name}: ${source} → ${target}`).toBe(
          SHARDING_KEYS[target!.replace(/_local$/, '')],
        );
      }
      // No Distributed table is read inside a view (it would fire on the insert's node only).
      for (const t of tables.keys()) expect(v, name).not.toMatch(new RegExp(`\\b${t}\\b(?!_local)`));
    }
  });

  it('alters the local tables on every node; a new or dropped column also on the Distributed table, right after', () => {
    // The baseline has no ALTER: these are the shapes a later migration may use.
    const known = new Set(['calls_starts', 'calls_ends', 'calls_merged']);
    const on = `ON CLUSTER ${CLUSTER}`;
    const derived = [
      [
        'ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS x UInt8 MATERIALIZED 1',
        [
          `ALTER TABLE calls_starts_local ${on} ADD COLUMN IF NOT EXISTS x UInt8 MATERIALIZED 1`,
          `ALTER TABLE calls_starts ${on} ADD COLUMN IF NOT EXISTS x UInt8 MATERIALIZED 1`,
        ],
      ],
      [
        'ALTER TABLE calls_starts DROP COLUMN IF EXISTS x',
        [`ALTER TABLE calls_starts_local ${on} DROP COLUMN IF EXISTS x`, `ALTER TABLE calls_starts ${on} DROP COLUMN IF EXISTS x`],
      ],
      [
        'ALTER TABLE calls_ends ADD INDEX IF NOT EXISTS i ended_at TYPE minmax GRANULARITY 1',
        [`ALTER TABLE calls_ends_local ${on} ADD INDEX IF NOT EXISTS i ended_at TYPE minmax GRANULARITY 1`],
      ],
      ['OPTIMIZE TABLE calls_ends FINAL', [`OPTIMIZE TABLE calls_ends_local ${on} FINAL`]],
      ['DROP VIEW IF EXISTS calls_ends_view', [`DROP VIEW IF EXISTS calls_ends_view ${on}`]],
      ['DROP TABLE IF EXISTS calls_merged', [`DROP TABLE IF EXISTS calls_merged ${on}`, `DROP TABLE IF EXISTS calls_merged_local ${on}`]],
    ] as const;
    for (const [single, expected] of derived) {
      const got = clusterStatements(single, CLUSTER, known);
      expect(got, single).toEqual(expected);
      for (const s of got) expect(parsed(s)).toContain(on);
    }
    // A dropped table is gone for the statements after it.
    expect(known.has('calls_merged')).toBe(false);
    expect(() => clusterStatements('OPTIMIZE TABLE calls_merged FINAL', CLUSTER, known)).toThrow(/no earlier migration created/);
  });

  it('refuses what it cannot derive, naming it', () => {
    expect(() => clusterStatements('CREATE TABLE IF NOT EXISTS unknown_table (a String) ENGINE = MergeTree ORDER BY a', CLUSTER)).toThrow(
      /unknown_table has no sharding key/,
    );
    expect(() => clusterStatements('CREATE TABLE IF NOT EXISTS tables (a String) ENGINE = Log', CLUSTER)).toThrow(ClusterDdlError);
    expect(() => clusterStatements('DROP TABLE calls_starts', CLUSTER)).toThrow(/no cluster form/);
  });
});

describe('mutations with CLICKHOUSE_CLUSTER', () => {
  // The WHERE clauses the services build: query parameters, which the initiator substitutes.
  const where = 'project_id = {p0:String} AND id IN {p1:Array(String)}';

  it('deletes from the local tables of every shard ON CLUSTER (a Distributed table takes no mutation), and the engine parses it', () => {
    // formatQuery (EXPLAIN AST wants the parameters' values); it throws on a syntax error too.
    const formatted = (q: string) => chdb.query(`SELECT formatQuerySingleLine(${sqlString(q)})`, 'TSVRaw').trim();
    expect(() => formatted(`DELETE FROM feedback_local ON CLUSTER ${CLUSTER} WHERE (`)).toThrow(/Syntax error/i);
    expect(formatted(deleteStatement('feedback', where, CLUSTER))).toBe(
      `DELETE FROM ${localTable('feedback')} ON CLUSTER ${CLUSTER} WHERE (project_id = {p0:String}) AND (id IN ({p1:Array(String)}))`,
    );
    // Single node: the plain table, as before.
    expect(formatted(deleteStatement('feedback', where, undefined))).toBe(
      'DELETE FROM feedback WHERE (project_id = {p0:String}) AND (id IN ({p1:Array(String)}))',
    );
  });

  it('deletes physically (ALTER TABLE … DELETE) on the local tables ON CLUSTER, or on the table itself', () => {
    const formatted = (q: string) => chdb.query(`SELECT formatQuerySingleLine(${sqlString(q)})`, 'TSVRaw').trim();
    expect(formatted(physicalDeleteStatement('calls_starts', where, CLUSTER))).toBe(
      `ALTER TABLE ${localTable('calls_starts')} ON CLUSTER ${CLUSTER} (DELETE WHERE (project_id = {p0:String}) AND (id IN ({p1:Array(String)})))`,
    );
    expect(formatted(physicalDeleteStatement('calls_starts', where, undefined))).toBe(
      'ALTER TABLE calls_starts (DELETE WHERE (project_id = {p0:String}) AND (id IN ({p1:Array(String)})))',
    );
  });

  it('knows the cluster wherever a store is opened on one', async () => {
    const store = openStore({ url: 'http://127.0.0.1:1', dataDir: '/nonexistent', cluster: CLUSTER });
    expect(store.cluster).toBe(CLUSTER);
    await store.close();
  });

  it('no service or library issues a mutation other than through deleteStatement or physicalDeleteStatement', () => {
    const root = resolve(__dirname, '../../..');
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name === 'test' || e.name === 'migrations') continue;
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else if (e.name.endsWith('.ts')) sources.push(path);
      }
    };
    for (const top of ['libs', 'services']) walk(join(root, top));
    expect(sources.length).toBeGreaterThan(50);
    const mutation = /\bDELETE\s+FROM\b|\bALTER\s+TABLE\b[^`]*\b(DELETE|UPDATE)\b|\bTRUNCATE\b/;
    const offenders = sources
      .filter((f) => !f.endsWith('cluster-ddl.ts') && mutation.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });
});

describe('CLICKHOUSE_CLUSTER configuration', () => {
  it('accepts a cluster name with a server, and refuses a bad name or no server, naming the variable', () => {
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'weft' }).CLICKHOUSE_CLUSTER).toBe('weft');
    expect(loadConfig({}).CLICKHOUSE_CLUSTER).toBeUndefined();
    expect(loadConfig({ CLICKHOUSE_CLUSTER: '' }).CLICKHOUSE_CLUSTER).toBeUndefined();
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "weft'; DROP" })).toThrow(/CLICKHOUSE_CLUSTER/);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'weft' })).toThrow(ConfigError);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'weft' })).toThrow(/CLICKHOUSE_CLUSTER: requires CLICKHOUSE_URL/);
  });
});
