import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { analyticsRoutes } from './analytics-routes';
import { annotationQueueRoutes } from './annotation-queue-routes';
import type { CallFacts } from './call-facts';
import { callReadRoutes } from './call-routes';
import { costRoutes } from './cost-routes';
import { exportRoutes } from './export-routes';
import { objectReadRoutes } from './objects';
import { projectRoutes, type UserNames } from './project-routes';
import { usageRoutes } from './usage-routes';
import { weave054ReadRoutes } from './weave054';

export interface QueryDeps {
  store: Store;
  auth: Authenticator;
  /** Users' names, for /users/read_batch (libs/auth's KeyStore). */
  keys: UserNames;
  /** Rows per ClickHouse query when streaming calls (see StreamOptions); default by store mode. */
  pageRows?: number;
  /** Days kept in projects with no retention of their own (WEFT_RETENTION_DAYS). */
  defaultRetentionDays?: number;
  /**
   * Resolves once the writes acknowledged so far are stored (the all-in-one's ingest log) — of
   * one project when given: every read waits on it for the project it reads.
   */
  caughtUp?: (projectId?: string) => Promise<void>;
  /** Analytics facts: which days /analytics/query may read from them. */
  facts?: CallFacts;
}

/**
 * Keyset pages in both modes: each page is a bounded query (the embedded connection buffers a
 * whole result; a server would hold a whole unpaged result to sort it), fetched one ahead.
 */
const DEFAULT_PAGE_ROWS = 5000;

/** The read side: every query endpoint, answered from ClickHouse; each route group a plugin of its own. */
export async function queryRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const { store, auth } = deps;
  const pageRows = deps.pageRows ?? DEFAULT_PAGE_ROWS;
  // Read-your-writes where writes are acknowledged before they are stored (the groups below inherit the hook).
  const caughtUp = deps.caughtUp;
  if (caughtUp) app.addHook('preHandler', async (request) => caughtUp(projectOf(request.body)));
  await app.register(callReadRoutes, { store, auth, pageRows });
  await app.register(costRoutes, { store, auth });
  await app.register(usageRoutes, { store, auth });
  await app.register(weave054ReadRoutes, { store, auth });
  await app.register(annotationQueueRoutes, { store, auth });
  await app.register(analyticsRoutes, { store, auth, ...(deps.facts ? { facts: deps.facts.keeper } : {}) });
  await app.register(exportRoutes, { store, auth, pageRows });
  await app.register(projectRoutes, {
    store,
    auth,
    keys: deps.keys,
    ...(deps.defaultRetentionDays !== undefined ? { defaultRetentionDays: deps.defaultRetentionDays } : {}),
  });
  await app.register(objectReadRoutes, { store, auth });
}

/** The project a read names (its body's project_id): it waits only for that project's writes; without one, for all. */
function projectOf(body: unknown): string | undefined {
  const p = (body as { project_id?: unknown } | null | undefined)?.project_id;
  return typeof p === 'string' ? p : undefined;
}
