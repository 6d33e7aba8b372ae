import { createBus } from '@weft/bus';
import { setupAuth } from '@weft/auth';
import { createHttpServer, requestLimitsFromConfig, runProgram } from '@weft/http';
import { migrate, openConfiguredStore, pingStore } from '@weft/store';
import { loadUpstreams } from './upstreams';
import { inferenceRoutes } from './routes';

/**
 * The inference service alone: chat completions, project completions, model records. It
 * traces the calls it makes through the bus (Kafka in the distributed mode) and keeps model
 * records in ClickHouse, hence both.
 */
runProgram('inference', async (config, log) => {
  const upstreams = loadUpstreams(config.WEFT_UPSTREAMS_FILE, { defaultTimeoutMs: config.WEFT_UPSTREAM_TIMEOUT_MS });
  const store = await openConfiguredStore(config, (c) => migrate(c, log));
  // A first admin key is the gateway's to make; this service only checks keys.
  const { auth } = await setupAuth(store, config, log, { createFirstKey: false });
  const bus = createBus(config, log);
  await bus.start();
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    limits: requestLimitsFromConfig(config),
    version: '0.1.0',
    readiness: { store: () => pingStore(store), bus: () => bus.health() },
  });
  await app.register(inferenceRoutes, { auth, bus, store, upstreams, log });
  return {
    app,
    describe: { bus: bus.kind, store: store.mode },
    async close() {
      await app.close();
      await bus.close();
      await store.close();
    },
  };
});
