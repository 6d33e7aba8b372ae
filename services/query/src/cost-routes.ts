import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import { createCosts, purgeCosts, queryCosts } from '@weft/query';
import type { Store } from '@weft/store';

export interface CostRouteDeps {
  store: Store;
  auth: Authenticator;
}

/** Prices: the interface's /cost/query, and the reference SDK's way to add and remove project prices. */
export async function costRoutes(app: FastifyInstance, deps: CostRouteDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'costQuery', async (body) => queryCosts(store, body));
  addRoute(app, auth, 'costCreate', async (body, { caller }) => createCosts(store, body, caller.userId));
  addRoute(app, auth, 'costPurge', async (body) => purgeCosts(store, body.project_id, body.query.$expr));
}
