import type { FastifyInstance } from 'fastify';
import { createBus } from '@weft/bus';
import type { Config, Logger } from '@weft/core';
import { adminRoutes, graphqlRoutes, setupAuth } from '@weft/auth';
import { createHttpServer, requestLimitsFromConfig } from '@weft/http';
import { migrate, openConfiguredStore, pingStore, type Store } from '@weft/store';
import { gatewayRoutes, otlpGrpcFromConfig } from '@weft/svc-gateway';
import { queryRoutes } from '@weft/svc-query';
import { uiRoutes } from '@weft/svc-ui';
import { inferenceRoutes, loadUpstreams } from '@weft/svc-inference';
import { CallPartsWriter } from '@weft/svc-writer';

export const VERSION = '0.1.0';

export interface Weft {
  app: FastifyInstance;
  store: Store;
  /** Stops taking requests, lets the writer finish what was acknowledged, closes the store. */
  close(): Promise<void>;
}

/**
 * The all-in-one composition: gateway, writer, query and inference in one process (or the
 * subset WEFT_ROLES names), on the bus WEFT_BUS picks (in-process by default) and, unless
 * CLICKHOUSE_URL is set, the embedded store. The same code runs distributed: only the bus differs.
 */
export async function createWeft(config: Config, log: Logger): Promise<Weft> {
  const roles = new Set(config.WEFT_ROLES);
  // Read first: a bad upstreams file stops the start before anything is opened.
  const upstreams = loadUpstreams(config.WEFT_UPSTREAMS_FILE, { defaultTimeoutMs: config.WEFT_UPSTREAM_TIMEOUT_MS });
  const store = await openConfiguredStore(config, (c) => migrate(c, log));

  const bus = createBus(config, log);
  await bus.start();
  const writer = new CallPartsWriter(store, log);
  const subscription = roles.has('writer') ? await writer.subscribe(bus) : null;

  // A first admin key is made only where the gateway runs (one place in a distributed setup).
  const { keys, auth } = await setupAuth(store, config, log, { createFirstKey: roles.has('gateway') });
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    limits: requestLimitsFromConfig(config),
    version: VERSION,
    // The bus is a dependency only when it is Kafka's (the in-process bus is this process).
    readiness: { store: () => pingStore(store), ...(bus.kind === 'kafka' ? { bus: () => bus.health() } : {}) },
  });
  if (roles.has('gateway')) await app.register(gatewayRoutes, { bus, store, auth });
  if (roles.has('gateway')) await app.register(adminRoutes, { keys, auth });
  // weave.init's W&B GraphQL operations, so WANDB_BASE_URL=<weft> is enough for the SDK.
  if (roles.has('gateway')) await app.register(graphqlRoutes, { auth });
  if (roles.has('query')) await app.register(queryRoutes, { store, auth, pageRows: config.WEFT_QUERY_PAGE_ROWS });
  // The web UI goes with the read side it talks to.
  if (roles.has('query')) await app.register(uiRoutes);
  if (roles.has('inference')) await app.register(inferenceRoutes, { auth, bus, store, upstreams, log });
  // OTLP/gRPC beside the HTTP server, where the gateway runs.
  const grpc = roles.has('gateway') ? await otlpGrpcFromConfig(config, { bus, auth, rateLimit: app.weftRateLimit, log }) : null;

  return {
    app,
    store,
    async close() {
      await Promise.all([app.close(), grpc?.close()]);
      // In-process: publishers wait for the writer, so drain the bus first. Kafka: stop
      // consuming (commits what was inserted), then flush and close the producer.
      if (bus.kind === 'inprocess') {
        await bus.close();
        await subscription?.stop();
      } else {
        await subscription?.stop();
        await bus.close();
      }
      await store.close();
    },
  };
}
