import {
  type Component,
  type Config,
  ENGINE_THREAD_POOL_SIZE,
  type HealthProbe,
  laneConfig,
  type Logger,
  threadPoolSize,
} from '@weft/core';
import { embeddedSessionCount, keepOutdatedParts, migrate, openStore, waitForMigrations, type Store } from '@weft/store';

/** The part of the configuration the store component reads. */
export type StoreConfig = Pick<
  Config,
  | 'CLICKHOUSE_URL'
  | 'CLICKHOUSE_USER'
  | 'CLICKHOUSE_PASSWORD'
  | 'CLICKHOUSE_DATABASE'
  | 'CLICKHOUSE_CLUSTER'
  | 'WEFT_DATA_DIR'
  | 'WEFT_MIGRATE'
  | 'WEFT_MIGRATE_WAIT_MS'
> &
  Partial<
    Pick<
      Config,
      | 'WEFT_LANE_CONNECTIONS'
      | 'WEFT_LANE_THREADS'
      | 'WEFT_LANE_NICE'
      | 'WEFT_LANE_MAX_SECONDS'
      | 'WEFT_LANE_MAX_MEMORY_MB'
      | 'WEFT_LANE_MAX_ROWS'
      | 'WEFT_LANE_QUEUE_MS'
    >
  >;

/** The longest a stop waits for the engine's running statements (a statement's own time cap is 30–300 s; a stop is not a query). */
const STORE_CLOSE_MAX_MS = 20_000;

/**
 * ClickHouse (a server at CLICKHOUSE_URL, or embedded under WEFT_DATA_DIR; the cluster form of
 * the schema when CLICKHOUSE_CLUSTER is set). Start opens it and brings the schema up to date: applies the migrations (WEFT_MIGRATE=auto) or waits until
 * `weft migrate` has (WEFT_MIGRATE=wait, for several processes on one server).
 */
export class StoreComponent implements Component {
  readonly name = 'store';
  private opened: Store | null = null;

  constructor(
    private readonly config: StoreConfig,
    private readonly log: Logger,
  ) {}

  /** The open store; only after start. */
  get store(): Store {
    if (!this.opened) throw new Error('store used before start');
    return this.opened;
  }

  async start(): Promise<void> {
    const lanes = laneConfig.parse(this.config);
    if (!this.config.CLICKHOUSE_URL) this.checkThreadPool(embeddedSessionCount(lanes));
    const store = openStore({
      url: this.config.CLICKHOUSE_URL,
      username: this.config.CLICKHOUSE_USER,
      password: this.config.CLICKHOUSE_PASSWORD,
      database: this.config.CLICKHOUSE_DATABASE,
      dataDir: this.config.WEFT_DATA_DIR,
      cluster: this.config.CLICKHOUSE_CLUSTER,
      lanes,
    });
    try {
      if (this.config.WEFT_MIGRATE === 'wait') await waitForMigrations(store, this.config.WEFT_MIGRATE_WAIT_MS, this.log);
      else await migrate(store, this.log, { cluster: this.config.CLICKHOUSE_CLUSTER });
      await keepOutdatedParts(store);
    } catch (e) {
      await store.close();
      throw e;
    }
    this.opened = store;
  }

  async stop(): Promise<void> {
    const store = this.opened;
    if (!store) return;
    this.opened = null;
    // The close waits for what the engine still runs; one that does not end is named, and not waited for past the bound.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STORE_CLOSE_MAX_MS)));
    try {
      if ((await Promise.race([store.close(), late])) === 'late')
        this.log.error(
          { running: store.running(), waitedMs: STORE_CLOSE_MAX_MS },
          'store: the engine still runs statements at close; not waiting for them',
        );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Embedded, every lane's connection (and the control and conversion sessions) runs its
   * statements on a thread of Node's pool: with fewer threads, a statement waits for one whatever
   * its lane (libs/core thread-pool.ts).
   */
  private checkThreadPool(needed: number): void {
    const size = threadPoolSize();
    if (size < needed)
      this.log.warn(
        { UV_THREADPOOL_SIZE: size, engineConnections: needed },
        `Node's thread pool (UV_THREADPOOL_SIZE=${size}) is smaller than the engine's ${needed} connections: statements may wait for a thread whatever their lane; start with UV_THREADPOOL_SIZE=${Math.max(needed + 4, ENGINE_THREAD_POOL_SIZE)} (npm start and the image do)`,
      );
  }

  health: HealthProbe = (signal) => storeProbe(this.store)(signal);
}

/** Readiness of a store: a `SELECT 1` answered (abandoned when the probe's deadline passes). */
export function storeProbe(store: Store): HealthProbe {
  return async (signal) => {
    await store.rows('SELECT 1', undefined, { name: 'store.probe', signal });
    return { mode: store.mode };
  };
}
