import { z } from 'zod';
import { LANES, type Lane } from './lanes';

/**
 * The whole configuration, read from the environment and validated once at start.
 * Defaults make the all-in-one mode (`npm start`) work with no variable set.
 * Every variable here is listed, once, in the table of docs/configuration.md (test/unit/docs.test.ts).
 */
const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

// --- The transport's variables, one slice per component. Each slice is validated with the
// whole configuration (its variables are part of configSchema) and read by its component as
// settings of its own (`kafkaConfig.parse(config)`): the component's names, not the variables'.

/** The publish stage of every bus (libs/bus batching-stage.ts): its pending bounds and deadline. */
const publishStageVars = {
  /** Call parts handed to the bus and not yet acknowledged (ack-after-insert: not yet stored) before publishers get 503. */
  WEFT_BUS_MAX_PENDING: int(200_000, 1),
  /** How long a write may wait for the bus to acknowledge before the request gets 503. */
  WEFT_PUBLISH_TIMEOUT_MS: int(15_000, 1),
  /** Bytes of messages in flight to the bus (either bus) before publishers get 503 (bounded memory). */
  WEFT_BUS_MAX_PENDING_BYTES: int(256 * 1024 * 1024, 1024),
};

/** The all-in-one's ingest log (WEFT_ACK_AFTER=log): its batches to the store and its syncs. */
const ingestLogVars = {
  /** WEFT_ACK_AFTER=log: parts per insert at most... */
  WEFT_LOG_BATCH_ROWS: int(10_000, 1),
  /** ...and how long (ms) acknowledged parts wait for others to join their insert. */
  WEFT_LOG_FLUSH_MS: int(100, 0),
  /** WEFT_ACK_AFTER=log: `1` = fdatasync every append (survives power loss; the engine's own inserts are not synced either). */
  WEFT_LOG_FSYNC: z.enum(['0', '1']).default('0'),
};

/** The writer stage: its inserts (ack-after-insert and Kafka), its Kafka consumers, and the gateway's pacing by its lag. */
const writerVars = {
  /** Writer: insert when this many call parts are buffered... */
  WEFT_WRITER_BATCH_ROWS: int(20_000, 1),
  /**
   * ...the group-commit window (ms): the all-in-one waits this long before each insert for more
   * parts (unless WEFT_WRITER_BATCH_ROWS wait already); the Kafka writer after the first part
   * of an idle period. Fuller inserts cost the engine less per part (docs/performance.md).
   */
  WEFT_WRITER_FLUSH_MS: int(20, 0),
  /** All-in-one: past WEFT_WRITER_FLUSH_MS the window stretches up to this (ms) while admitted call writes, or the last insert's clients, have yet to publish; 0 = off (default). */
  WEFT_WRITER_FLUSH_MAX_MS: int(0, 0),
  /** Writer: consumers (group members) per process. */
  WEFT_WRITER_CONSUMERS: int(1, 1),
  /**
   * Kafka mode, gateway: while the backlog it acknowledged would take the writers longer than
   * this (ms) at their measured pace, call publishes wait; a part unwritten past 4× this gets
   * call writes 503 + Retry-After. The ack→queryable bound (libs/bus writer-lag.ts); 0 = off
   * (the default: docs/operations.md "Writers behind" says why).
   */
  WEFT_MAX_WRITER_LAG_MS: int(0, 0),
};

/** Kafka (WEFT_BUS=kafka): the client, the topics weft creates, the writers' group and fetches. */
const kafkaVars = {
  KAFKA_BROKERS: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Kafka client id (broker logs, quotas). */
  KAFKA_CLIENT_ID: z.string().min(1).default('weft'),
  /** Prepended to weft's topic names (several deployments on one cluster). */
  KAFKA_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default(''),
  /** Writer consumer group; writers sharing it share the partitions. */
  KAFKA_GROUP_ID: z.string().min(1).default('weft-writer'),
  /** Partitions and replication of the topics weft creates at start (if missing). */
  KAFKA_TOPIC_PARTITIONS: int(6, 1),
  KAFKA_REPLICATION_FACTOR: int(1, 1),
  /** Start-up waits this long (ms) for the cluster: topics created, partition leaders elected, group joined. */
  KAFKA_STARTUP_TIMEOUT_MS: int(300_000, 1000),
  /** Producer batch compression. */
  KAFKA_COMPRESSION: z.enum(['gzip', 'none']).default('gzip'),
  /**
   * Writer fetch: the broker answers when this many bytes are ready... (the writer inserts what
   * one fetch brings: a fetch that waits for more makes the engine's inserts larger and cheaper)
   */
  KAFKA_FETCH_MIN_BYTES: int(2 * 1024 * 1024, 1),
  /** ...or after this many ms. */
  KAFKA_FETCH_MAX_WAIT_MS: int(100, 0),
  /** Writer: a member silent this long is dropped from the group and its partitions move on. */
  KAFKA_SESSION_TIMEOUT_MS: int(30_000, 1000),
};

/**
 * `lane=value` pairs for some of the lanes (`heavy=2,background=1`): the lanes not named keep
 * their default. One variable per kind of setting, so the table of lanes reads in one place.
 */
const laneValues = (defaults: Record<Lane, number>) =>
  z
    .preprocess(
      // Already read (a component re-reading its slice of the parsed configuration): the pairs again.
      (v) =>
        typeof v === 'object' && v !== null
          ? Object.entries(v)
              .map(([lane, n]) => `${lane}=${String(n)}`)
              .join(',')
          : v,
      z.string().optional(),
    )
    .transform((text, ctx) => {
      const out = { ...defaults };
      for (const pair of (text ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [lane, value] = pair.split('=').map((p) => p.trim());
        const n = Number(value);
        if (!(LANES as readonly string[]).includes(lane ?? '') || value === undefined || !Number.isInteger(n) || n < 0) {
          ctx.addIssue({
            code: 'custom',
            message: `"${pair}": expected lane=number with a lane of ${LANES.join(', ')} and a whole number ≥ 0`,
          });
          return z.NEVER;
        }
        out[lane as Lane] = n;
      }
      return out;
    });

/** The engine's lanes (libs/store lanes.ts, docs/operations.md "Lanes"): connections, threads, caps, waits. */
const laneVars = {
  /** `one`: every statement on one engine connection with no lane settings, as before lanes (a benchmark's control, bench:team). */
  WEFT_LANES: z.enum(['separate', 'one']).default('separate'),
  /** Engine connections (embedded) or statements at once (server) per lane. */
  WEFT_LANE_CONNECTIONS: laneValues({ ingest: 1, interactive: 2, heavy: 2, background: 2 }),
  /** Engine threads a statement of the lane may use (max_threads); 0 = the engine's default (all cores). */
  WEFT_LANE_THREADS: laneValues({ ingest: 0, interactive: 0, heavy: 1, background: 1 }),
  /**
   * The nice value of a statement's engine threads per lane (os_thread_priority; 0 = as the
   * process): heavy and background threads yield the cores to interactive reads and to Node's own
   * thread, which serves every request. The engine applies it where it may (CAP_SYS_NICE).
   */
  WEFT_LANE_NICE: laneValues({ ingest: 0, interactive: 0, heavy: 10, background: 19 }).refine(
    (nice) => Object.values(nice).every((n) => n <= 19),
    'a nice value is at most 19',
  ),
  /** A statement's time cap per lane, seconds (max_execution_time); past it: 422 naming what to narrow. 0 = none. */
  WEFT_LANE_MAX_SECONDS: laneValues({ ingest: 0, interactive: 30, heavy: 300, background: 3600 }),
  /** A statement's memory cap per lane, MiB (max_memory_usage); 0 = none. */
  WEFT_LANE_MAX_MEMORY_MB: laneValues({ ingest: 0, interactive: 2048, heavy: 4096, background: 4096 }),
  /** Rows a statement of the lane may read (max_rows_to_read); 0 = none. */
  WEFT_LANE_MAX_ROWS: laneValues({ ingest: 0, interactive: 0, heavy: 0, background: 0 }),
  /** How long a statement may wait for a connection of its lane before it is refused (503 or 429), ms; 0 = no bound. */
  WEFT_LANE_QUEUE_MS: laneValues({ ingest: 0, interactive: 30_000, heavy: 30_000, background: 0 }),
  /** Heavy requests (analytics, exports, dashboards, aggregates) one project may run at once. */
  WEFT_HEAVY_PER_PROJECT: int(2, 1),
  /** Heavy requests one API key may run at once. */
  WEFT_HEAVY_PER_KEY: int(3, 1),
  /** How long a heavy request past its project's or key's cap waits for a turn before 429 + Retry-After, ms. */
  WEFT_HEAVY_WAIT_MS: int(2_000, 0),
};

export const publishStageConfig = z.object(publishStageVars).transform((c) => ({
  maxPendingItems: c.WEFT_BUS_MAX_PENDING,
  maxPendingBytes: c.WEFT_BUS_MAX_PENDING_BYTES,
  timeoutMs: c.WEFT_PUBLISH_TIMEOUT_MS,
}));

export const ingestLogConfig = z.object(ingestLogVars).transform((c) => ({
  maxBatchItems: c.WEFT_LOG_BATCH_ROWS,
  lingerMs: c.WEFT_LOG_FLUSH_MS,
  fsync: c.WEFT_LOG_FSYNC === '1',
}));

export const writerConfig = z.object(writerVars).transform((c) => ({
  maxBatchItems: c.WEFT_WRITER_BATCH_ROWS,
  lingerMs: c.WEFT_WRITER_FLUSH_MS,
  maxLingerMs: c.WEFT_WRITER_FLUSH_MAX_MS,
  consumers: c.WEFT_WRITER_CONSUMERS,
  maxLagMs: c.WEFT_MAX_WRITER_LAG_MS,
}));

export const kafkaConfig = z
  .object(kafkaVars)
  .transform((c) => ({
    brokers: (c.KAFKA_BROKERS ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    clientId: c.KAFKA_CLIENT_ID,
    topicPrefix: c.KAFKA_TOPIC_PREFIX,
    groupId: c.KAFKA_GROUP_ID,
    topicPartitions: c.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: c.KAFKA_REPLICATION_FACTOR,
    startupTimeoutMs: c.KAFKA_STARTUP_TIMEOUT_MS,
    compression: c.KAFKA_COMPRESSION,
    fetchMinBytes: c.KAFKA_FETCH_MIN_BYTES,
    fetchMaxWaitMs: c.KAFKA_FETCH_MAX_WAIT_MS,
    sessionTimeoutMs: c.KAFKA_SESSION_TIMEOUT_MS,
  }))
  .refine((k) => k.brokers.length > 0, { message: 'KAFKA_BROKERS: required when WEFT_BUS=kafka' });

export const laneConfig = z.object(laneVars).transform((c) => ({
  shared: c.WEFT_LANES === 'one',
  connections: c.WEFT_LANE_CONNECTIONS,
  threads: c.WEFT_LANE_THREADS,
  nice: c.WEFT_LANE_NICE,
  maxSeconds: c.WEFT_LANE_MAX_SECONDS,
  maxMemoryMb: c.WEFT_LANE_MAX_MEMORY_MB,
  maxRows: c.WEFT_LANE_MAX_ROWS,
  queueMs: c.WEFT_LANE_QUEUE_MS,
  heavyPerProject: c.WEFT_HEAVY_PER_PROJECT,
  heavyPerKey: c.WEFT_HEAVY_PER_KEY,
  heavyWaitMs: c.WEFT_HEAVY_WAIT_MS,
}));

export type PublishStageConfig = z.output<typeof publishStageConfig>;
export type IngestLogConfig = z.output<typeof ingestLogConfig>;
export type WriterConfig = z.output<typeof writerConfig>;
export type KafkaConfig = z.output<typeof kafkaConfig>;
export type LaneConfig = z.output<typeof laneConfig>;

export const configSchema = z.object({
  PORT: int(6345, 0),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** Unset: embedded ClickHouse (chDB) under WEFT_DATA_DIR. Set: a ClickHouse server over HTTP. */
  CLICKHOUSE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  CLICKHOUSE_USER: z.string().default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .default('default'),
  /**
   * Set: the migrations create replicated tables ON CLUSTER this cluster (a name in the servers'
   * remote_servers) behind Distributed tables (libs/store/SCHEMA.md "Cluster mode"). Needs CLICKHOUSE_URL.
   */
  CLICKHOUSE_CLUSTER: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a cluster name: letters, digits, _')
      .optional(),
  ),
  WEFT_DATA_DIR: z.string().default('./data'),
  /** `auto`: apply pending migrations at start. `wait`: wait for `weft migrate` to have applied them (several processes on one server). */
  WEFT_MIGRATE: z.enum(['auto', 'wait']).default('auto'),
  /** WEFT_MIGRATE=wait: how long to wait for the schema before failing the start (ms). */
  WEFT_MIGRATE_WAIT_MS: int(120_000, 0),

  /** `inprocess` (all-in-one) or `kafka` (distributed). */
  /** Days calls and their feedback are kept in projects that set no retention of their own (/project/ttl_settings); unset: forever. */
  WEFT_RETENTION_DAYS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).optional()),
  /** Time between two retention passes (ms), each removing what expired. */
  WEFT_RETENTION_INTERVAL_MS: int(3_600_000, 100),
  /** A project whose ack→queryable lag is over this (ms) is flagged by /project/delivery and the web UI's banner. */
  WEFT_DELIVERY_LAG_WARN_MS: int(30_000, 1),

  /** Query role: time between two passes building analytics facts (ms); 0: this process builds none (queries still read what exists). */
  WEFT_ANALYTICS_FACTS_INTERVAL_MS: int(15_000, 0),
  /** A call is built into analytics facts once it started this long ago (ms); later ones are read from the call tables. */
  WEFT_ANALYTICS_FACTS_SETTLE_MS: int(30_000, 0),

  /** Inference role: time between two looks for new calls to score by active Weave Monitors (ms); 0: this process scores none. */
  WEFT_MONITORS_INTERVAL_MS: int(5_000, 0),
  WEFT_EVALUATION_HEARTBEAT_MS: int(10_000, 100),
  /** Query role: time between two evaluations of every AlertSpec, each followed by a delivery pass (ms); 0: this process evaluates none. */
  WEFT_ALERTS_INTERVAL_MS: int(60_000, 0),
  /**
   * Alert channels: the addresses off the public Internet (loopback, link-local, private…) their
   * URLs may reach. Empty (default): none; `true`: all; else a comma-separated list of addresses,
   * CIDR ranges and host names (`10.0.0.0/8,hooks.internal`). Checked at create and at each delivery.
   */
  WEFT_ALERTS_ALLOW_PRIVATE_URLS: z
    .string()
    .trim()
    .default('')
    .refine(
      (s) =>
        s === '' ||
        s === 'true' ||
        s === 'false' ||
        s === '0' ||
        s === '1' ||
        s.split(',').every((x) => /^\s*([A-Za-z0-9.-]+|[0-9a-fA-F:.[\]]+)(\/\d{1,3})?\s*$/.test(x)),
      'a comma-separated list of addresses, CIDR ranges and host names, or true',
    ),
  /** Days alert events, their deliveries and delivery attempts are kept (never longer than the project keeps its calls). */
  WEFT_ALERTS_RETENTION_DAYS: int(90, 1),

  WEFT_BUS: z.enum(['inprocess', 'kafka']).default('inprocess'),
  ...kafkaVars,
  ...publishStageVars,
  ...writerVars,
  ...laneVars,

  /** Largest request body accepted, in bytes (413 above). */
  WEFT_BODY_LIMIT_BYTES: int(32 * 1024 * 1024, 1024),
  /**
   * All-in-one: when a call write is acknowledged. `log`: once appended to the local ingest log
   * under WEFT_DATA_DIR (then stored in large batches; reads wait for what was acknowledged
   * before them). `insert`: once inserted (each insert as large as the requests in flight).
   */
  WEFT_ACK_AFTER: z.enum(['log', 'insert']).default('log'),
  ...ingestLogVars,

  // --- Security: keys, tenancy, limits (docs/security.md) ---
  /** An API key made to exist (as an admin key) at start; for deployments and tests. */
  WEFT_BOOTSTRAP_API_KEY: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  /** How long a key lookup is cached in a process (ms); a revoke elsewhere is seen after at most this long. */
  WEFT_AUTH_CACHE_TTL_MS: int(5_000, 0),
  /** Requests per key per window (429 with Retry-After above); 0 turns rate limiting off. */
  WEFT_RATE_LIMIT_MAX: int(60_000, 0),
  /** The rate limit window (ms). */
  WEFT_RATE_LIMIT_WINDOW_MS: int(60_000, 1),
  /** Deepest JSON nesting accepted in a request body (400 above). */
  WEFT_MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(1000).default(64),
  /** Longest string anywhere in a request body, in characters (413 above). */
  WEFT_MAX_STRING_CHARS: int(8 * 1024 * 1024, 1),
  /** Most elements in any one array of a request body, e.g. items of a batch (413 above). */
  WEFT_MAX_ARRAY_ITEMS: int(100_000, 1),
  /** Largest `limit` of streaming queries (calls, threads, table rows) (400 above). */
  WEFT_MAX_STREAM_LIMIT: int(1_000_000, 1),
  /** Largest `limit` of paged queries (objects, tables, feedback, costs) (400 above). */
  WEFT_MAX_PAGE_LIMIT: int(100_000, 1),
  /** A call's input, output or attribute value (each member) larger than this, as JSON, is stored truncated with a marker; 0 = never. */
  WEFT_MAX_VALUE_BYTES: int(1024 * 1024, 0),
  /** Largest query expression (`query`), in bytes of JSON (413 above). */
  WEFT_MAX_QUERY_BYTES: int(64 * 1024, 16),
  /** Deepest query expression (`query.$expr`) nesting (400 above). */
  WEFT_MAX_QUERY_DEPTH: int(24, 2),
  /** Calls streaming: rows per ClickHouse query (keyset pages); 0 = one streamed query. Unset: 5000 embedded, 0 server. */
  WEFT_QUERY_PAGE_ROWS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).optional()),

  // --- Overload and timeouts (docs/operations.md) ---
  /** Bytes of request bodies (by Content-Length) admitted and not yet answered; beyond, 503 before the body is read. */
  WEFT_MAX_INFLIGHT_BODY_BYTES: int(32 * 1024 * 1024, 1024),
  /** Requests admitted and not yet answered (probes and /metrics aside); beyond, 503 at once. */
  WEFT_MAX_INFLIGHT_REQUESTS: int(1024, 1),
  /** Bytes of refused, unread request bodies read and discarded at once so clients can read the refusal; 0 = close unread. */
  WEFT_REFUSED_BODY_DRAIN_BYTES: int(64 * 1024 * 1024, 0),
  /** A refused body still arriving after this many ms has its connection closed. */
  WEFT_REFUSED_BODY_DRAIN_MS: int(10_000, 100),
  /** A request's headers must arrive within this many ms of its first byte (408 and close). */
  WEFT_HEADERS_TIMEOUT_MS: int(15_000, 100),
  /** A request body that sends nothing for this many ms is abandoned (408 and close). */
  WEFT_BODY_IDLE_TIMEOUT_MS: int(10_000, 100),
  /** Whole request: received within this many ms, and (non-streaming routes) answered within it too (503). */
  WEFT_REQUEST_TIMEOUT_MS: int(60_000, 100),
  /** /ready: how long each dependency's check may take before it counts as down. */
  WEFT_READY_TIMEOUT_MS: int(1_500, 100),

  /** Which programs `npm start` composes: all of them, or a subset (e.g. `writer,query`). */
  WEFT_ROLES: z
    .string()
    .default('gateway,writer,query,inference')
    .transform((s) =>
      s
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(['gateway', 'writer', 'query', 'inference'])).min(1)),

  /**
   * Gateway: the OTLP/gRPC receiver's port; `0` = any free port, `off` = no gRPC receiver. Unset:
   * the standard 4317 if it is free, else none (a Collector or Jaeger often holds it); set, a
   * taken port stops the start.
   */
  WEFT_OTLP_GRPC_PORT: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).optional()),

  /**
   * Gateway: worker threads for the ingest routes' request bodies (OTLP spans decoded and
   * converted, upsert batches parsed and checked; their rows encoded) off the serving thread;
   * `auto` = none below 4 cores, else the cores less two, at most 4; `0` = on the serving thread.
   */
  WEFT_INGEST_WORKERS: z.union([z.literal('auto'), z.coerce.number().int().min(0).max(64)]).default('auto'),

  /** Inference: JSON file listing the model servers (upstreams); unset = no models served. */
  WEFT_UPSTREAMS_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Inference: default upstream timeout (ms) when an upstream sets no `timeout_ms`. */
  WEFT_UPSTREAM_TIMEOUT_MS: int(300_000, 1),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Reads and validates the configuration; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const cfg = parsed.data;
  // The Kafka slice is validated on its own terms when the bus is Kafka (its brokers are required then).
  const kafka = cfg.WEFT_BUS === 'kafka' ? kafkaConfig.safeParse(cfg) : null;
  if (kafka && !kafka.success) {
    throw new ConfigError(`invalid configuration:\n  ${kafka.error.issues.map((i) => i.message).join('\n  ')}`);
  }
  if (cfg.CLICKHOUSE_CLUSTER && !cfg.CLICKHOUSE_URL) {
    // The embedded engine is one process: it has no cluster to create tables on.
    throw new ConfigError('invalid configuration:\n  CLICKHOUSE_CLUSTER: requires CLICKHOUSE_URL (a ClickHouse server of that cluster)');
  }
  return cfg;
}
