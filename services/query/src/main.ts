import { createHttpServer, permissiveAuthenticator, runProgram } from '@weft/http';
import { migrate, openConfiguredStore } from '@weft/store';
import { queryRoutes } from './routes';

/** The query service alone: every read endpoint, answered from ClickHouse. */
runProgram('query', async (config, log) => {
  const store = await openConfiguredStore(config, (c) => migrate(c, log));
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    version: '0.1.0',
    healthCheck: async () => {
      await store.client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json());
      return { store: store.mode };
    },
  });
  await app.register(queryRoutes, { store, auth: permissiveAuthenticator, pageRows: config.WEFT_QUERY_PAGE_ROWS });
  return {
    app,
    describe: { store: store.mode },
    async close() {
      await app.close();
      await store.close();
    },
  };
});
