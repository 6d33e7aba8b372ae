import { setupAuth } from '@weft/auth';
import { createHttpServer, requestLimitsFromConfig, runProgram } from '@weft/http';
import { migrate, openConfiguredStore, pingStore } from '@weft/store';
import { uiRoutes } from '@weft/svc-ui';
import { queryRoutes } from './routes';

/** The query service alone: every read endpoint, answered from ClickHouse. */
runProgram('query', async (config, log) => {
  const store = await openConfiguredStore(config, (c) => migrate(c, log));
  // A first admin key is the gateway's to make; this service only checks keys.
  const { auth } = await setupAuth(store, config, log, { createFirstKey: false });
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    limits: requestLimitsFromConfig(config),
    version: '0.1.0',
    readiness: { store: () => pingStore(store) },
  });
  await app.register(queryRoutes, { store, auth, pageRows: config.WEFT_QUERY_PAGE_ROWS });
  await app.register(uiRoutes);
  return {
    app,
    describe: { store: store.mode },
    async close() {
      await app.close();
      await store.close();
    },
  };
});
