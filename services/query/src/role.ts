import { needs, type Role } from '@weft/runtime';
import { queryRoutes } from './routes';

/** Every read endpoint, answered from ClickHouse. */
export const queryRole: Role = (config) => ({
  name: 'query',
  async routes(app, deps) {
    await app.register(queryRoutes, { store: deps.store, auth: needs(deps.auth, 'auth', 'query'), pageRows: config.WEFT_QUERY_PAGE_ROWS });
  },
});
