import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import { filesStats } from '@weft/objects';
import type { Store } from '@weft/store';
import { callStats } from './call-stats';
import { projectStats } from './project-stats';
import { callsUsage, traceUsage } from './usage';

export interface UsageRouteDeps {
  store: Store;
  auth: Authenticator;
}

/** Usage: tokens and cost of traces and root calls, metrics per time bucket, the bytes a project stores. */
export async function usageRoutes(app: FastifyInstance, deps: UsageRouteDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'filesStats', async (body) => filesStats(store, body.project_id));
  addRoute(app, auth, 'traceUsage', async (body, { signal }) => traceUsage(store, body, signal));
  addRoute(app, auth, 'callsUsage', async (body, { signal }) => callsUsage(store, body, signal));
  addRoute(app, auth, 'callStats', async (body, { signal }) => callStats(store, body, signal));
  addRoute(app, auth, 'projectStats', async (body, { signal }) => projectStats(store, body, signal));
}
