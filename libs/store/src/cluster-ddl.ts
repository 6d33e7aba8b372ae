/**
 * The cluster form of the migrations (CLICKHOUSE_CLUSTER, SCHEMA.md "Cluster mode"), derived
 * statement by statement from the single-node DDL, so there is one copy of every migration:
 *
 * - `CREATE TABLE t (…) ENGINE = XMergeTree(args) …` becomes `t_local ON CLUSTER` with
 *   `ReplicatedXMergeTree('<zk path with {shard}>', '{replica}', args)`, plus a Distributed `t`
 *   over it, sharded by `SHARDING_KEYS[t]`. The application keeps reading and writing `t`.
 * - `ENGINE = Null` (call_parts) stays Null, as `t_local ON CLUSTER` under a Distributed `t`:
 *   an insert is routed to one shard, whose materialized views fold it there.
 * - `CREATE MATERIALIZED VIEW v TO t AS SELECT … FROM s` runs on every node, from `s_local`
 *   into `t_local` (a view fires on the local insert, never on a Distributed one).
 * - `ALTER TABLE t …` (indexes, settings) applies to `t_local ON CLUSTER`; an `ADD COLUMN` or
 *   `DROP COLUMN` also to the Distributed `t` (its columns are its own copy of the local table's).
 * - `DROP VIEW IF EXISTS v` and `OPTIMIZE TABLE t FINAL` run ON CLUSTER (on `t_local`);
 *   `DROP TABLE IF EXISTS t` drops the Distributed `t` and `t_local`, ON CLUSTER.
 * - `INSERT … SELECT` (back-fills, seeds) is left as written: it runs once, through the
 *   Distributed tables, which route every row by the same sharding key.
 *
 * Any other statement shape throws: a new kind of migration must be taught here (and the test
 * runs every migration on disk through this).
 */

/**
 * Where each table's rows go. Every key is a function of columns of the table's ORDER BY,
 * so rows that the engine folds or replaces together (same sorting key) always land on the same
 * shard; and call tables share one key, so every part of one call, and everything read per call,
 * meet on one shard.
 */
export const SHARDING_KEYS: Readonly<Record<string, string>> = {
  // One call's parts (start, end, updates, delete) and every per-call fold.
  call_parts: 'cityHash64(project_id, id)',
  calls_starts: 'cityHash64(project_id, id)',
  calls_deleted: 'cityHash64(project_id, id)',
  calls_ends: 'cityHash64(project_id, id)',
  calls_renames: 'cityHash64(project_id, id)',
  // Every version of one object on one shard (version_index counts them).
  object_versions: 'cityHash64(project_id, kind, object_id)',
  table_rows: 'cityHash64(project_id, digest)',
  // One table's whole row list on one shard: a page is one key range, in position order.
  table_rows_index: 'cityHash64(project_id, table_digest)',
  tables: 'cityHash64(project_id, digest)',
  // All feedback on one ref (a call, an object) on one shard.
  feedback: 'cityHash64(project_id, svc_ref)',
  files: 'cityHash64(project_id, digest)',
  llm_token_prices: 'cityHash64(pricing_level_id, llm_id)',
  // The same name on the same shard, so the insert deduplication token drops a second create.
  models: 'cityHash64(entity, project, name)',
  weft_entities: 'cityHash64(name)',
  weft_users: 'cityHash64(user_id)',
  weft_memberships: 'cityHash64(user_id, entity)',
  weft_api_keys: 'cityHash64(key_hash)',
  weft_migrations: 'version',
  // A project's log records on one shard (their key is the project and time; reads are by project).
  otel_logs: 'cityHash64(project_id)',
  // A deletion job's versions on one shard (the latest replaces the others).
  deletion_jobs: 'cityHash64(id)',
  // Every action on one dead letter on one shard (the first one counts).
  dead_letter_actions: 'cityHash64(letter)',
  // A project's settings, each one's versions on one shard (the latest replaces the others).
  project_settings: 'cityHash64(project_id, name)',
  // A queue's items and their progress on one shard: an items page joins the two.
  annotation_queues: 'cityHash64(project_id, id)',
  annotation_queue_items: 'cityHash64(project_id, queue_id)',
  annotator_queue_items_progress: 'cityHash64(project_id, queue_id)',
  // A run's heartbeats on one shard (the latest replaces the others), and its cancellation.
  evaluation_runs: 'cityHash64(project_id, call_id)',
  evaluation_cancels: 'cityHash64(project_id, call_id)',
  // A monitor's lease rows on one shard (the latest replaces the others).
  monitor_leases: 'cityHash64(project_id, monitor)',
  // Alerts: a project's channels, states, mutes on one shard; an event's deliveries and attempts with it.
  alert_channels: 'cityHash64(project_id)',
  alert_states: 'cityHash64(project_id)',
  alert_events: 'cityHash64(project_id)',
  alert_deliveries: 'cityHash64(project_id)',
  alert_delivery_attempts: 'cityHash64(project_id)',
  alert_mutes: 'cityHash64(project_id)',
  alert_leases: 'cityHash64(name)',
  // Object labels and dataset sources: a project's on one shard, beside its objects.
  object_aliases: 'cityHash64(project_id)',
  object_tags: 'cityHash64(project_id)',
  dataset_source_links: 'cityHash64(project_id)',
  // A day's facts and its builds with the day (not used on a cluster: block numbers are per shard).
  call_facts: 'cityHash64(project_id, day)',
  call_facts_days: 'cityHash64(project_id, day)',
  call_facts_segments: 'cityHash64(project_id, day)',
};

/** The local (per-shard, replicated) table under the Distributed table `table`. */
export const localTable = (table: string) => `${table}_local`;

/** Replica path in Keeper: one per shard and table; `{shard}`/`{replica}` are server macros. */
const REPLICA_PATH = "'/clickhouse/tables/{shard}/{database}/{table}'";

const CREATE_TABLE = /^CREATE TABLE IF NOT EXISTS (\w+) (\([\s\S]*\))\s*ENGINE = (\w+)(?:\(([^()]*)\))?([\s\S]*)$/;
const CREATE_MV = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s([\s\S]*)$/;
const ALTER_TABLE = /^ALTER TABLE (\w+) ([\s\S]*)$/;
const INSERT = /^INSERT INTO \w+/;
const DROP_VIEW = /^DROP VIEW IF EXISTS (\w+)$/;
const DROP_TABLE = /^DROP TABLE IF EXISTS (\w+)$/;
const OPTIMIZE = /^OPTIMIZE TABLE (\w+) FINAL$/;

export class ClusterDdlError extends Error {}

/**
 * The statements that give `statement` its cluster form on `cluster`. `tables` collects the
 * tables created so far (a view's sources are renamed to their local tables).
 */
export function clusterStatements(statement: string, cluster: string, tables = new Set<string>()): string[] {
  const onCluster = `ON CLUSTER ${cluster}`;
  let m = CREATE_TABLE.exec(statement);
  if (m) {
    const [, table, columns, engine, args, rest] = m as unknown as [string, string, string, string, string | undefined, string];
    const key = SHARDING_KEYS[table];
    if (!key)
      throw new ClusterDdlError(`table ${table} has no sharding key: add it to SHARDING_KEYS in cluster-ddl.ts (SCHEMA.md "Cluster mode")`);
    let localEngine: string;
    let tail = rest;
    if (engine === 'Null') localEngine = 'Null';
    else if (/^(\w*)MergeTree$/.test(engine)) {
      localEngine = `Replicated${engine}(${[REPLICA_PATH, "'{replica}'", ...(args?.trim() ? [args.trim()] : [])].join(', ')})`;
      // The single-node window has a replicated counterpart (kept in Keeper, per shard).
      tail = tail.replace(/\bnon_replicated_deduplication_window\b/g, 'replicated_deduplication_window');
    } else throw new ClusterDdlError(`table ${table}: engine ${engine} has no cluster form`);
    tables.add(table);
    const local = localTable(table);
    return [
      `CREATE TABLE IF NOT EXISTS ${local} ${onCluster} ${columns} ENGINE = ${localEngine}${tail}`,
      `CREATE TABLE IF NOT EXISTS ${table} ${onCluster} AS ${local} ENGINE = Distributed('${cluster}', currentDatabase(), ${local}, ${key})`,
    ];
  }
  m = CREATE_MV.exec(statement);
  if (m) {
    const [, view, target, select] = m as unknown as [string, string, string, string];
    if (!tables.has(target)) throw new ClusterDdlError(`view ${view} writes to ${target}, which no earlier migration created`);
    let localSelect = select;
    for (const t of tables) localSelect = localSelect.replace(new RegExp(`\\b${t}\\b`, 'g'), localTable(t));
    return [`CREATE MATERIALIZED VIEW IF NOT EXISTS ${view} ${onCluster} TO ${localTable(target)} AS\n${localSelect}`];
  }
  m = ALTER_TABLE.exec(statement);
  if (m) {
    const [, table, change] = m as unknown as [string, string, string];
    if (!tables.has(table)) throw new ClusterDdlError(`ALTER of ${table}, which no earlier migration created`);
    const local = `ALTER TABLE ${localTable(table)} ${onCluster} ${change}`;
    return /^(ADD|DROP) COLUMN\b/.test(change) ? [local, `ALTER TABLE ${table} ${onCluster} ${change}`] : [local];
  }
  m = DROP_VIEW.exec(statement);
  if (m) return [`DROP VIEW IF EXISTS ${m[1]!} ${onCluster}`];
  m = DROP_TABLE.exec(statement);
  if (m) {
    tables.delete(m[1]!);
    return [`DROP TABLE IF EXISTS ${m[1]!} ${onCluster}`, `DROP TABLE IF EXISTS ${localTable(m[1]!)} ${onCluster}`];
  }
  m = OPTIMIZE.exec(statement);
  if (m) {
    if (!tables.has(m[1]!)) throw new ClusterDdlError(`OPTIMIZE of ${m[1]!}, which no earlier migration created`);
    return [`OPTIMIZE TABLE ${localTable(m[1]!)} ${onCluster} FINAL`];
  }
  if (INSERT.test(statement)) return [statement];
  throw new ClusterDdlError(`no cluster form for statement: ${statement.slice(0, 80)}`);
}

/**
 * A lightweight delete of the rows of `table` matching `where`. A mutation cannot run on a
 * Distributed table, so on a cluster it goes to the local tables of every shard, ON CLUSTER
 * (each shard deletes the matching rows it holds; replication carries it to the other replica).
 * Every runtime DELETE goes through here (the cluster-ddl test checks the sources for others).
 */
export function deleteStatement(table: string, where: string, cluster?: string): string {
  return cluster ? `DELETE FROM ${localTable(table)} ON CLUSTER ${cluster} WHERE ${where}` : `DELETE FROM ${table} WHERE ${where}`;
}

/**
 * A delete that rewrites the parts holding matching rows (ALTER TABLE … DELETE): once it ends,
 * the rows are gone from disk, not only masked as a lightweight delete leaves them until a merge.
 * For data that must leave (retention): one statement per table, however many rows. On a
 * cluster, on every shard's local table.
 */
export function physicalDeleteStatement(table: string, where: string, cluster?: string): string {
  return cluster
    ? `ALTER TABLE ${localTable(table)} ON CLUSTER ${cluster} DELETE WHERE ${where}`
    : `ALTER TABLE ${table} DELETE WHERE ${where}`;
}

/** The whole list in cluster form, or unchanged (the very same strings) without a cluster. */
export function statementsFor(statements: readonly string[], cluster: string | undefined, tables = new Set<string>()): string[] {
  if (!cluster) return [...statements];
  return statements.flatMap((s) => clusterStatements(s, cluster, tables));
}
