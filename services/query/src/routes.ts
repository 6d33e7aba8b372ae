import type { FastifyInstance } from 'fastify';
import { addRoute, sendJsonl, sendJsonlText, type Authenticator } from '@weft/http';
import { aggregateCalls, listProjects, queryMetrics, queryMetricsBatch } from './analytics';
import type { CallFacts } from './call-facts';
import { exportCalls } from './export';
import { exportTable } from './table-export';
import { exportEvaluations } from './evaluation-export';
import { readTtlSettings, updateTtlSettings } from './project-settings';
import type { Store } from '@weft/store';
import { countCalls, needsEnrichment, readCall, streamCallLines, streamCalls } from './calls';
import { fillFromGenAiEvents, projectHasGenAiEvents, withGenAiEvents } from './genai-events';
import { withExpandedRefsAndFeedback } from './call-enrichment';
import { objectReadRoutes } from './objects';
import { createCosts, purgeCosts, queryCosts } from '@weft/query';
import { filesStats } from '@weft/objects';
import { streamThreads } from './threads';
import { queryOtelLogs } from './otel-logs';
import { callsUsage, traceUsage } from './usage';
import { weave054ReadRoutes } from './weave054';
import { projectStats } from './project-stats';
import { callStats } from './call-stats';
import {
  addCalls,
  createQueue,
  deleteQueue,
  queryItems,
  queryQueues,
  queuesStats,
  readQueue,
  updateProgress,
  updateQueue,
} from '@weft/objects';

export interface QueryDeps {
  store: Store;
  auth: Authenticator;
  /** Users' names, for /users/read_batch (libs/auth's KeyStore). */
  keys: { userNamesIn(entity: string, userIds: string[], callerId: string): Promise<{ user_id: string; name: string }[]> };
  /** Rows per ClickHouse query when streaming calls (see StreamOptions); default by store mode. */
  pageRows?: number;
  /** Days kept in projects with no retention of their own (WEFT_RETENTION_DAYS). */
  defaultRetentionDays?: number;
  /** Resolves once the writes acknowledged so far are stored (the all-in-one's ingest log): every read waits on it. */
  caughtUp?: () => Promise<void>;
  /** Analytics facts: which days /analytics/query may read from them. */
  facts?: CallFacts;
}

/**
 * Keyset pages in both modes: each page is a bounded query (the embedded connection buffers a
 * whole result; a server would hold a whole unpaged result to sort it), fetched one ahead.
 */
const DEFAULT_PAGE_ROWS = 5000;
const EXPORT_PAGE_FACTOR = 4;

/** The read side: every query endpoint, answered from ClickHouse. */
export async function queryRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const pageRows = deps.pageRows ?? DEFAULT_PAGE_ROWS;
  // Read-your-writes where writes are acknowledged before they are stored.
  const caughtUp = deps.caughtUp;
  if (caughtUp) app.addHook('preHandler', async () => caughtUp());
  addRoute(app, deps.auth, 'callsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    const joinEvents = await projectHasGenAiEvents(deps.store, body.project_id);
    if (!needsEnrichment(body) && !joinEvents) {
      // The lines ClickHouse builds go to the socket as they are.
      await sendJsonlText(reply, streamCallLines(deps.store, body, abort.signal, { pageRows }), () => abort.abort());
      return undefined;
    }
    let calls = streamCalls(deps.store, body, abort.signal, { pageRows });
    if (joinEvents) calls = withGenAiEvents(deps.store, body.project_id, calls);
    await sendJsonl(reply, withExpandedRefsAndFeedback(deps.store, body, calls), () => abort.abort());
    return undefined;
  });
  addRoute(app, deps.auth, 'callsQueryStats', async (body) => countCalls(deps.store, body));
  addRoute(app, deps.auth, 'callRead', async (body) => {
    const read = await readCall(deps.store, body);
    if (read.call) await fillFromGenAiEvents(deps.store, body.project_id, [read.call]);
    return read;
  });

  addRoute(app, deps.auth, 'threadsStreamQuery', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonl(reply, streamThreads(deps.store, body, abort.signal), () => abort.abort());
    return undefined;
  });
  addRoute(app, deps.auth, 'costQuery', async (body) => queryCosts(deps.store, body));
  // Not one of the 20 endpoints of the interface: the reference SDK's way to add project prices.
  addRoute(app, deps.auth, 'costCreate', async (body, { caller }) => createCosts(deps.store, body, caller.userId));
  addRoute(app, deps.auth, 'costPurge', async (body) => purgeCosts(deps.store, body.project_id, body.query.$expr));
  addRoute(app, deps.auth, 'filesStats', async (body) => filesStats(deps.store, body.project_id));
  addRoute(app, deps.auth, 'otelLogsQuery', async (body) => queryOtelLogs(deps.store, body));
  addRoute(app, deps.auth, 'traceUsage', async (body, { signal }) => traceUsage(deps.store, body, signal));
  addRoute(app, deps.auth, 'callsUsage', async (body, { signal }) => callsUsage(deps.store, body, signal));
  addRoute(app, deps.auth, 'callStats', async (body, { signal }) => callStats(deps.store, body, signal));
  addRoute(app, deps.auth, 'projectStats', async (body, { signal }) => projectStats(deps.store, body, signal));
  await weave054ReadRoutes(app, { store: deps.store, auth: deps.auth });

  // For the web UI (extras, published in /openapi.json).
  addRoute(app, deps.auth, 'annotationQueueCreate', async (body, { caller }) => createQueue(deps.store, body, caller.userId));
  addRoute(app, deps.auth, 'annotationQueueRead', async (body) => readQueue(deps.store, body));
  addRoute(app, deps.auth, 'annotationQueueUpdate', async (body) => updateQueue(deps.store, body));
  addRoute(app, deps.auth, 'annotationQueueDelete', async (body) => deleteQueue(deps.store, body));
  addRoute(app, deps.auth, 'annotationQueuesQuery', async (body, { reply, signal }) => {
    await sendJsonl(reply, toAsync(await queryQueues(deps.store, body, signal)));
    return undefined;
  });
  addRoute(app, deps.auth, 'annotationQueuesStats', async (body, { signal }) => queuesStats(deps.store, body, signal));
  addRoute(app, deps.auth, 'annotationQueueAddCalls', async (body, { caller }) => addCalls(deps.store, body, caller.userId));
  addRoute(app, deps.auth, 'annotationQueueItemsQuery', async (body, { signal }) => queryItems(deps.store, body, signal));
  addRoute(app, deps.auth, 'annotatorProgressUpdate', async (body, { caller }) => updateProgress(deps.store, body, caller.userId));

  addRoute(app, deps.auth, 'projectsList', async (body, { caller }) => listProjects(deps.store, caller, body));
  addRoute(app, deps.auth, 'callsAggregate', async (body, { signal }) => aggregateCalls(deps.store, body, signal));
  addRoute(app, deps.auth, 'callsExport', async (body, { reply }) => {
    // A download is read to its end: pages four times as large, a quarter of the round trips.
    await exportCalls(deps.store, body, reply, { pageRows: pageRows * EXPORT_PAGE_FACTOR });
    return undefined;
  });
  addRoute(app, deps.auth, 'ttlSettingsRead', async (body) => readTtlSettings(deps.store, body.project_id, deps.defaultRetentionDays));
  addRoute(app, deps.auth, 'ttlSettingsUpdate', async (body, { caller }) => updateTtlSettings(deps.store, body, caller.userId));
  addRoute(app, deps.auth, 'tableExport', async (body, { reply }) => {
    await exportTable(deps.store, body, reply);
    return undefined;
  });
  addRoute(app, deps.auth, 'evaluationsExport', async (body, { caller, reply }) => {
    await exportEvaluations(deps.store, body, caller, reply, { pageRows });
    return undefined;
  });
  addRoute(app, deps.auth, 'usersReadBatch', async (body, { caller }) => ({
    users: await deps.keys.userNamesIn(body.project_id.split('/')[0]!, body.user_ids, caller.userId),
  }));
  addRoute(app, deps.auth, 'analyticsQuery', async (body, { signal }) => queryMetrics(deps.store, body, signal, deps.facts));
  addRoute(app, deps.auth, 'analyticsBatch', async (body, { signal }) => queryMetricsBatch(deps.store, body, signal, deps.facts));

  await app.register(objectReadRoutes, { store: deps.store, auth: deps.auth });
}

async function* toAsync<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
