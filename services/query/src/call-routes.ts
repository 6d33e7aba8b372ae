import type { FastifyInstance } from 'fastify';
import { addRoute, sendJsonl, sendJsonlText, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { countCalls, needsEnrichment, readCall, streamCallLines, streamCalls, withExpandedRefsAndFeedback } from './calls';
import { fillFromGenAiEvents, projectHasGenAiEvents, withGenAiEvents } from './genai-events';
import { queryOtelLogs } from './otel-logs';
import { streamThreads } from './threads';

export interface CallReadDeps {
  store: Store;
  auth: Authenticator;
  /** Rows per ClickHouse query when streaming calls (see StreamOptions). */
  pageRows: number;
}

/** Reads of calls: the stream, its count, one call, threads, and the OTLP log records beside them. */
export async function callReadRoutes(app: FastifyInstance, deps: CallReadDeps): Promise<void> {
  const { store, auth, pageRows } = deps;
  addRoute(app, auth, 'callsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    const joinEvents = await projectHasGenAiEvents(store, body.project_id);
    if (!needsEnrichment(body) && !joinEvents) {
      // The lines ClickHouse builds go to the socket as they are.
      await sendJsonlText(reply, streamCallLines(store, body, abort.signal, { pageRows }), () => abort.abort());
      return undefined;
    }
    let calls = streamCalls(store, body, abort.signal, { pageRows });
    if (joinEvents) calls = withGenAiEvents(store, body.project_id, calls);
    await sendJsonl(reply, withExpandedRefsAndFeedback(store, body, calls), () => abort.abort());
    return undefined;
  });
  addRoute(app, auth, 'callsQueryStats', async (body) => countCalls(store, body));
  addRoute(app, auth, 'callRead', async (body) => {
    const read = await readCall(store, body);
    if (read.call) await fillFromGenAiEvents(store, body.project_id, [read.call]);
    return read;
  });

  addRoute(app, auth, 'threadsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonl(reply, streamThreads(store, body, abort.signal), () => abort.abort());
    return undefined;
  });
  addRoute(app, auth, 'otelLogsQuery', async (body) => queryOtelLogs(store, body));
}
