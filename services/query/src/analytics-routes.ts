import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type { FactsKeeper } from '@weft/query';
import type { Store } from '@weft/store';
import { aggregateCalls, listProjects, queryMetrics, queryMetricsBatch } from './analytics';

export interface AnalyticsRouteDeps {
  store: Store;
  auth: Authenticator;
  /** Analytics facts: which days /analytics/query may read from them (none: the call tables). */
  facts?: FactsKeeper;
}

/** The web UI's overview and dashboards: the projects list, aggregates, metrics queries (one or a dashboard's batch). */
export async function analyticsRoutes(app: FastifyInstance, deps: AnalyticsRouteDeps): Promise<void> {
  const { store, auth, facts } = deps;
  addRoute(app, auth, 'projectsList', async (body, { caller }) => listProjects(store, caller, body));
  addRoute(app, auth, 'callsAggregate', async (body, { signal }) => aggregateCalls(store, body, signal));
  addRoute(app, auth, 'analyticsQuery', async (body, { signal }) => queryMetrics(store, body, signal, facts));
  addRoute(app, auth, 'analyticsBatch', async (body, { signal }) => queryMetricsBatch(store, body, signal, facts));
}
