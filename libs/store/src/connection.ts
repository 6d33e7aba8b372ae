import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { claimDataDir } from './data-dir-lock';
import { InsertFiles, insertStatement } from './insert-files';
import { withSessionParams } from './chdb-params';
import { defaultLaneOptions, laneSettings, laneTurns, type LaneOptions } from './lanes';
import { statementsOf, type StoreStatements } from './statements';

export type { ClickHouseClient };

export interface StoreOptions {
  /** A ClickHouse server's HTTP URL; absent → embedded chDB under `dataDir`. */
  url?: string;
  username?: string;
  password?: string;
  database?: string;
  /** Where the embedded engine keeps its data (persistent across restarts). */
  dataDir: string;
  /** CLICKHOUSE_CLUSTER: the tables are Distributed over this cluster (server mode only). */
  cluster?: string;
  /** The engine's lanes (WEFT_LANE_*); absent: the defaults. */
  lanes?: LaneOptions;
}

/**
 * JSON text the engine writes (toJSONString, JSON formats) as JSON.stringify writes it: `/` not
 * escaped. Inserts too: the call tables' line fragments are built as rows are written.
 */
const JSON_TEXT_SETTINGS = { output_format_json_escape_forward_slashes: 0 } as const;

/** Settings every query runs with, in both modes. */
const settings: ClickHouseSettings = {
  // 64-bit integers as JSON numbers: our counts and steps stay well below 2^53.
  output_format_json_quote_64bit_integers: 0,
  date_time_input_format: 'best_effort',
  // Inserted rows are visible to the very next query (read-your-writes on the server too).
  async_insert: 0,
  ...JSON_TEXT_SETTINGS,
};

/** Added on a cluster (SCHEMA.md "Cluster mode"). */
const clusterSettings: ClickHouseSettings = {
  // An insert into a Distributed table returns once every shard has its rows, so the writer
  // commits a Kafka offset only for rows stored on their shard (not queued on the initiator).
  insert_distributed_sync: 1,
  // GROUP BY project_id, id covers the sharding key: each shard's groups are final, the
  // initiator only concatenates them.
  optimize_distributed_group_by_sharding_key: 1,
  // `x IN (SELECT … FROM <Distributed>)` inside a query on a Distributed table: the subquery
  // runs once and its result goes to every shard, right whatever the two tables' sharding.
  distributed_product_mode: 'global',
};

/**
 * Embedded, the calls' search index (migration 203) is built when parts merge, not on insert:
 * tokenizing every call's text on the acknowledgement path cost about a third of the engine's
 * insert rate (docs/performance.md, "Engine and schema"). A fresh part without it is read whole
 * by a search (the index only prunes), and the background merges soon replace it with one that has it.
 */
const DEFERRED_INDEXES = { exclude_materialize_skip_indexes_on_insert: 'idx_search' } as const;

/** Settings of one INSERT (names as ClickHouse's; numbers only, all we use). */
export type InsertSettings = Record<string, number>;

/**
 * Row formats whose bytes the engine's own parser reads (no row objects on our side): RowBinary
 * for what the services write (call-part-rowbinary.ts); TabSeparated for the engine benchmark's
 * comparison with the format call parts had before envelope version 4 (bench/ingest-engine.ts,
 * its encoder in @weft/harness), which the product no longer writes or reads.
 */
export type RawRowFormat = 'RowBinary' | 'TabSeparated';

/**
 * The store: the typed statements (statements.ts) are what packages use. `client` is the raw
 * @clickhouse/client, for libs/store itself, tests and benches only (test/unit/boundaries.test.ts).
 */
export interface Store extends StoreStatements {
  client: ClickHouseClient;
  mode: 'server' | 'embedded';
  /** CLICKHOUSE_CLUSTER, where the tables are Distributed (mutations go to the local tables). */
  cluster?: string;
  /**
   * Inserts rows already encoded in `format` in one INSERT: embedded, the bytes go straight to
   * chDB's parser (no SQL text around them, no copy into a JS string); on a server, as the
   * request body.
   */
  insertRaw(table: string, columns: readonly string[], format: RawRowFormat, bytes: Buffer, settings?: InsertSettings): Promise<void>;
  /**
   * Runs a statement that reads and writes this process's own files (file() … INTO OUTFILE) on
   * an engine connection of its own, so it runs beside the store's queries, not between them:
   * embedded, a second connection to the same data; with a server (which cannot read this
   * process's files), a private chDB session of this process, opened on first use.
   */
  convert(sql: string): Promise<void>;
  /** Closes the connections, after waiting for what the engine is still running on them. */
  close(): Promise<void>;
}

/** The part of a chDB session this module uses. */
interface ChdbSession {
  queryAsync(query: string): Promise<unknown>;
  close(): void;
}
interface Chdb {
  Session: new (path?: string) => ChdbSession;
  drainPending(): Promise<void>;
}
/** chdb is published as CommonJS only. */
const chdb = (): Chdb => createRequire(import.meta.url)('chdb') as Chdb;

/**
 * A chDB session opened on first use (on `path`, the embedded store's data; else a directory of
 * its own). Closing waits until nothing runs on any connection of the engine: a process that
 * exits while the engine still runs a statement waits in the engine's teardown for that
 * statement, outside any deadline of ours.
 */
function sideSession(path?: string) {
  let session: ChdbSession | undefined;
  return {
    run: async (sql: string) => {
      session ??= new (chdb().Session)(path);
      await session.queryAsync(sql);
    },
    close: async () => {
      // With a server, chDB is loaded only if a conversion ran; embedded, it always is.
      if (!session && path === undefined) return;
      session?.close();
      session = undefined;
      await chdb().drainPending();
    },
  };
}

/**
 * A conversion (an export's Parquet) is heavy work on a connection of its own: it runs with the
 * heavy lane's settings (its threads, priority and caps), so it yields to interactive reads too —
 * at the lane's nice value only while there is someone to yield to (`yieldNow`, LaneYielding).
 */
function asHeavy(sql: string, lanes: LaneOptions, yieldNow: boolean): string {
  const settings = laneSettings('heavy', lanes);
  // Said explicitly: the conversion session keeps the last value set.
  if (!yieldNow && settings.os_thread_priority !== undefined) settings.os_thread_priority = '0';
  const sets = Object.entries(settings).map(([k, v]) => `SET ${k} = ${typeof v === 'string' ? `'${v}'` : String(v)}`);
  return sets.length ? `${sets.join('; ')}; ${sql}` : sql;
}

/**
 * The chDB sessions an embedded store opens for `lanes`: each lane's connections, the control
 * connection and the conversion session — each runs its statements on a thread of Node's pool
 * (libs/core thread-pool.ts), so the pool needs at least this many.
 */
export function embeddedSessionCount(lanes: LaneOptions): number {
  return Object.values(laneTurns(lanes)).reduce((n, t) => n + t.size, 0) + 2;
}

/**
 * Opens ClickHouse through @clickhouse/client. Nothing outside libs/store knows which
 * connection is in use: the embedded mode plugs chDB in as the client's connection.
 */
export function openStore(opts: StoreOptions): Store {
  const lanes = opts.lanes ?? defaultLaneOptions();
  const turns = laneTurns(lanes);
  if (opts.url) {
    // A session on a directory of its own (removed at close): nothing of the server's is in it.
    const converter = sideSession();
    const client = createClient({
      url: opts.url,
      username: opts.username,
      password: opts.password,
      database: opts.database,
      clickhouse_settings: opts.cluster ? { ...settings, ...clusterSettings } : settings,
      request_timeout: 120_000,
      compression: { request: false, response: true },
    });
    // The lanes are the server's too: the same turns, and each lane's settings on its statements.
    const { inLane, shouldYield, ...statements } = statementsOf({
      turns,
      clientFor: () => client,
      options: lanes,
      // A read whose request was aborted (its client left) is cancelled by the server.
      settings: { cancel_http_readonly_queries_on_client_close: 1 },
    });
    return {
      client,
      ...statements,
      mode: 'server',
      cluster: opts.cluster,
      insertRaw: (table, columns, format, bytes, insertSettings) =>
        inLane('ingest', { name: `insert.${table}` }, async (laneClient) => {
          const values = Readable.from([bytes], { objectMode: false });
          const clickhouse_settings = insertSettings as ClickHouseSettings | undefined;
          if (format === 'TabSeparated') {
            await laneClient.insert({ table, columns: [...columns] as [string, ...string[]], format, values, clickhouse_settings });
            return;
          }
          // The client's insert() streams text formats only; exec sends any body after the query.
          const result = await laneClient.exec({ query: insertStatement(table, columns, format), values, clickhouse_settings });
          for await (const chunk of result.stream) void chunk;
        }),
      convert: (sql) => converter.run(asHeavy(sql, lanes, shouldYield('heavy'))),
      close: async () => {
        await client.close();
        await converter.close();
      },
    };
  }
  const dir = resolve(opts.dataDir, 'clickhouse');
  mkdirSync(dir, { recursive: true });
  const release = claimDataDir(resolve(opts.dataDir));
  // chdb/connection is published as CommonJS only.
  const require = createRequire(import.meta.url);
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- a type of a CommonJS require
  const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
  // The engine runs one statement at a time on a connection; a second one on the same data runs
  // beside it. So each lane has connections of its own, and a control connection stops statements.
  const side = sideSession(dir);
  type ChdbConnection = ReturnType<typeof createChdbConnection>;
  const opened: ChdbConnection[] = [];
  const open = () => {
    const connection = createChdbConnection({ path: dir });
    opened.push(connection);
    return {
      connection,
      client: createClient({ connection: withSessionParams(connection), clickhouse_settings: settings } as Parameters<
        typeof createClient
      >[0]),
    };
  };
  let laneConnections: Record<string, ReturnType<typeof open>[]>;
  let control: ReturnType<typeof open>;
  try {
    laneConnections = Object.fromEntries(Object.entries(turns).map(([lane, t]) => [lane, Array.from({ length: t.size }, open)]));
    control = open();
  } catch (e) {
    for (const c of opened) void c.close();
    release();
    throw e;
  }
  const files = new InsertFiles(resolve(opts.dataDir, 'insert-files'));
  const { inLane, shouldYield, ...statements } = statementsOf({
    turns,
    clientFor: (lane, slot) => laneConnections[lane]![slot]!.client,
    options: lanes,
    cancel: async (tag) => {
      await control.client.command({ query: "KILL QUERY WHERE Settings['log_comment'] = {tag:String} ASYNC", query_params: { tag } });
    },
  });
  const all = [...Object.values(laneConnections).flat(), control];
  return {
    // Tests' and benches' raw client: an interactive connection.
    client: laneConnections.interactive![0]!.client,
    ...statements,
    mode: 'embedded',
    insertRaw: (table, columns, format, bytes, insertSettings) => {
      if (bytes.length === 0) return Promise.resolve();
      return inLane('ingest', { name: `insert.${table}` }, async (client, laneSettings, slot) => {
        if (format === 'TabSeparated') {
          // rawInsert needs chDB's own handle of the turn's connection.
          const connection = laneConnections.ingest![slot]!.connection;
          await connection.chdb.rawInsert({
            table,
            columns,
            format,
            values: bytes,
            settings: { ...JSON_TEXT_SETTINGS, ...DEFERRED_INDEXES, ...insertSettings },
          });
          return;
        }
        const clickhouse_settings = { ...laneSettings, ...DEFERRED_INDEXES, ...(insertSettings as ClickHouseSettings | undefined) };
        await files.with(bytes, (path) =>
          client.command({ query: insertStatement(table, columns, format, path), clickhouse_settings }).then(() => undefined),
        );
      });
    },
    convert: (sql) => side.run(asHeavy(sql, lanes, shouldYield('heavy'))),
    close: async () => {
      try {
        for (const c of all) await c.client.close();
        await side.close();
      } finally {
        release();
      }
    },
  };
}
