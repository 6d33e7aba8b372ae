import type { FastifyInstance } from 'fastify';
import { addRoute, sendJsonl, type Authenticator } from '@weft/http';
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
import type { Store } from '@weft/store';

export interface AnnotationQueueRouteDeps {
  store: Store;
  auth: Authenticator;
}

/** Annotation queues (libs/objects annotation-queues.ts): the queues, their items, each annotator's progress. */
export async function annotationQueueRoutes(app: FastifyInstance, deps: AnnotationQueueRouteDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'annotationQueueCreate', async (body, { caller }) => createQueue(store, body, caller.userId));
  addRoute(app, auth, 'annotationQueueRead', async (body) => readQueue(store, body));
  addRoute(app, auth, 'annotationQueueUpdate', async (body) => updateQueue(store, body));
  addRoute(app, auth, 'annotationQueueDelete', async (body) => deleteQueue(store, body));
  addRoute(app, auth, 'annotationQueuesQuery', async (body, { reply, signal }) => {
    await sendJsonl(reply, toAsync(await queryQueues(store, body, signal)));
    return undefined;
  });
  addRoute(app, auth, 'annotationQueuesStats', async (body, { signal }) => queuesStats(store, body, signal));
  addRoute(app, auth, 'annotationQueueAddCalls', async (body, { caller }) => addCalls(store, body, caller.userId));
  addRoute(app, auth, 'annotationQueueItemsQuery', async (body, { signal }) => queryItems(store, body, signal));
  addRoute(app, auth, 'annotatorProgressUpdate', async (body, { caller }) => updateProgress(store, body, caller.userId));
}

async function* toAsync<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
