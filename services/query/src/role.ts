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
      pageRows: config.WEFT_QUERY_PAGE_ROWS,
      ...(bus?.caughtUp ? { caughtUp: () => bus.caughtUp!() } : {}),
    });
    await app.register(uiRoutes);
  },
});
