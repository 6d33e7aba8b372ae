import type { FastifyInstance } from 'fastify';
import { addRoute, notYet, sendJsonl, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { countCalls, streamCalls } from './calls';

export interface QueryDeps {
  store: Store;
  auth: Authenticator;
}

/** The read side: every query endpoint, answered from ClickHouse. */
export async function queryRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  addRoute(app, deps.auth, 'callsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonl(reply, streamCalls(deps.store, body, abort.signal), () => abort.abort());
    return undefined;
  });
  addRoute(app, deps.auth, 'callsQueryStats', async (body) => countCalls(deps.store, body));

  addRoute(app, deps.auth, 'threadsStreamQuery', notYet('thread statistics (/threads/stream_query)'));
  addRoute(app, deps.auth, 'costQuery', notYet('cost queries (/cost/query)'));
  addRoute(app, deps.auth, 'objRead', notYet('objects (/obj/read)'));
  addRoute(app, deps.auth, 'objsQuery', notYet('objects (/objs/query)'));
  addRoute(app, deps.auth, 'tableQuery', notYet('tables (/table/query)'));
  addRoute(app, deps.auth, 'tableQueryStream', notYet('tables (/table/query_stream)'));
  addRoute(app, deps.auth, 'feedbackQuery', notYet('feedback (/feedback/query)'));
}
