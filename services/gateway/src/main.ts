import { createBus } from '@weft/bus';
import { adminRoutes, graphqlRoutes, setupAuth } from '@weft/auth';
import { createHttpServer, requestLimitsFromConfig, runProgram } from '@weft/http';
import { migrate, openConfiguredStore, pingStore } from '@weft/store';
import { otlpGrpcFromConfig } from './otlp-grpc';
import { gatewayRoutes } from './routes';

/**
 * The gateway alone: the write endpoints, call parts onto the bus (WEFT_BUS=kafka in the
 * distributed mode). Objects, tables and feedback go straight to ClickHouse, hence the store.
 */
runProgram('gateway', async (config, log) => {
  const store = await openConfiguredStore(config, (c) => migrate(c, log));
  const { keys, auth } = await setupAuth(store, config, log);
  const bus = createBus(config, log);
  await bus.start();
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    limits: requestLimitsFromConfig(config),
    version: '0.1.0',
    readiness: { store: () => pingStore(store), bus: () => bus.health() },
  });
  await app.register(gatewayRoutes, { bus, store, auth });
  await app.register(adminRoutes, { keys, auth });
  await app.register(graphqlRoutes, { auth });
  const grpc = await otlpGrpcFromConfig(config, { bus, auth, rateLimit: app.weftRateLimit, log });
  return {
    app,
    describe: { bus: bus.kind, store: store.mode },
    async close() {
      await Promise.all([app.close(), grpc?.close()]);
      await bus.close();
      await store.close();
    },
  };
});
