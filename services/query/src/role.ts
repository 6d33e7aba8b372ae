import { documentRoutes } from '@weft/http';
import { needs, type Role } from '@weft/runtime';
import { uiRoutes } from '@weft/svc-ui';
import { queryRoutes } from './routes';

/** Every read endpoint, answered from ClickHouse, and the web UI that talks to them. */
export const queryRole: Role = (config) => ({
  name: 'query',
  async routes(app, deps) {
    const bus = deps.bus;
    await app.register(queryRoutes, {
      store: deps.store,
      auth: needs(deps.auth, 'auth', 'query'),
      keys: needs(deps.keys, 'the key store', 'query'),
      pageRows: config.WEFT_QUERY_PAGE_ROWS,
      defaultRetentionDays: config.WEFT_RETENTION_DAYS,
      ...(bus?.caughtUp ? { caughtUp: () => bus.caughtUp!() } : {}),
    });
    // The UI's pages and files, whichever it serves, under the `ui` group of /docs.
    await app.register(async (scope) => {
      documentRoutes(scope, (url) => ({ tag: 'ui', summary: url === '/' ? 'The web UI' : `The web UI: ${url}`, auth: 'none' }));
      await scope.register(uiRoutes);
    });
  },
});
