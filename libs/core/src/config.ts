import { z } from 'zod';

/**
 * The whole configuration, read from the environment and validated once at start.
 * Defaults make the all-in-one mode (`npm start`) work with no variable set.
 * Every variable here is listed in the README's configuration table.
 */
const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

export const configSchema = z.object({
  PORT: int(6345, 0),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** Unset: embedded ClickHouse (chDB) under WEFT_DATA_DIR. Set: a ClickHouse server over HTTP. */
  CLICKHOUSE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  CLICKHOUSE_USER: z.string().default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('default'),
  WEFT_DATA_DIR: z.string().default('./data'),

  /** `inprocess` (all-in-one) or `kafka` (distributed). */
  WEFT_BUS: z.enum(['inprocess', 'kafka']).default('inprocess'),
  KAFKA_BROKERS: z.preprocess(emptyAsUndefined, z.string().optional()),

  /** Largest request body accepted, in bytes (413 above). */
  WEFT_BODY_LIMIT_BYTES: int(32 * 1024 * 1024, 1024),
  /** Writer: insert when this many call parts are buffered... */
  WEFT_WRITER_BATCH_ROWS: int(5000, 1),
  /** ...or when the oldest buffered part has waited this long (ms). */
  WEFT_WRITER_FLUSH_MS: int(2, 0),
  /** In-process bus: call parts waiting for the writer before publishers get 503. */
  WEFT_BUS_MAX_PENDING: int(200_000, 1),
  /** How long a write may wait for the bus to acknowledge before the request gets 503. */
  WEFT_PUBLISH_TIMEOUT_MS: int(15_000, 1),
  /** Calls streaming: rows per ClickHouse query (keyset pages); 0 = one streamed query. Unset: 5000 embedded, 0 server. */
  WEFT_QUERY_PAGE_ROWS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).optional()),
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
  if (cfg.WEFT_BUS === 'kafka' && !cfg.KAFKA_BROKERS) {
    throw new ConfigError('invalid configuration:\n  KAFKA_BROKERS: required when WEFT_BUS=kafka');
  }
  return cfg;
}
