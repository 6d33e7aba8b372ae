import type { FastifyInstance } from 'fastify';
import { addRoute, notYet, sendJsonl, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { countCalls, streamCalls } from './calls';
import { enrichCalls } from './call-enrichment';
import { objectReadRoutes } from './objects';

export interface QueryDeps {
  store: Store;
  auth: Authenticator;
}

/** The read side: every query endpoint, answered from ClickHouse. */
export async function queryRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  addRoute(app, deps.auth, 'callsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonl(reply, enrichCalls(deps.store, body, streamCalls(deps.store, body, abort.signal)), () => abort.abort());
    return undefined;
  });
  addRoute(app, deps.auth, 'callsQueryStats', async (body) => countCalls(deps.store, body));

  addRoute(app, deps.auth, 'threadsStreamQuery', notYet('thread statistics (/threads/stream_query)'));
  addRoute(app, deps.auth, 'costQuery', notYet('cost queries (/cost/query)'));
  await app.register(objectReadRoutes, { store: deps.store, auth: deps.auth });
}
