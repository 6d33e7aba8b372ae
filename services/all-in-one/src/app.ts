import type { FastifyInstance } from 'fastify';
import { InProcessBus, type CallPartEnvelope } from '@weft/bus';
import type { Config, Logger } from '@weft/core';
import { createHttpServer, permissiveAuthenticator, type Authenticator } from '@weft/http';
import { migrate, openStore, type Store } from '@weft/store';
import { gatewayRoutes } from '@weft/svc-gateway';
import { queryRoutes } from '@weft/svc-query';
import { inferenceRoutes } from '@weft/svc-inference';
import { CallPartsWriter } from '@weft/svc-writer';

export const VERSION = '0.1.0';

export interface Weft {
  app: FastifyInstance;
  store: Store;
  /** Stops taking requests, lets the writer finish what was acknowledged, closes the store. */
  close(): Promise<void>;
}

/**
 * The all-in-one composition: gateway, writer, query and inference in one process, on the
 * in-process bus and (unless CLICKHOUSE_URL is set) the embedded store.
 */
export async function createWeft(config: Config, log: Logger): Promise<Weft> {
  const store = openStore({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    dataDir: config.WEFT_DATA_DIR,
  });
  await migrate(store.client, log);

  const bus = new InProcessBus<CallPartEnvelope>({
    maxBatch: config.WEFT_WRITER_BATCH_ROWS,
    lingerMs: config.WEFT_WRITER_FLUSH_MS,
    maxPending: config.WEFT_BUS_MAX_PENDING,
    publishTimeoutMs: config.WEFT_PUBLISH_TIMEOUT_MS,
  });
  const writer = new CallPartsWriter(store, log);
  const subscription = await writer.subscribe(bus);

  const auth: Authenticator = permissiveAuthenticator;
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    version: VERSION,
    healthCheck: async () => {
      await store.client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json());
      return { store: store.mode, bus: 'inprocess' };
    },
  });
  await app.register(gatewayRoutes, { bus, store, auth });
  await app.register(queryRoutes, { store, auth, pageRows: config.WEFT_QUERY_PAGE_ROWS });
  await app.register(inferenceRoutes, { auth });

  return {
    app,
    store,
    async close() {
      await app.close();
      await bus.close();
      await subscription.stop();
      await store.close();
    },
  };
}
