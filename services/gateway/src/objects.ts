import type { FastifyInstance } from 'fastify';
import { addRoute, sendJsonText, useLosslessJsonBodies, type Authenticator } from '@weft/http';
import {
  createFeedback,
  createObject,
  createTable,
  deleteObjectVersions,
  purgeFeedback,
  replaceFeedback,
  updateTable,
} from '@weft/objects';
import type { Store } from '@weft/store';

export interface ObjectWriteDeps {
  store: Store;
  auth: Authenticator;
}

/**
 * Objects, tables and feedback: written straight to ClickHouse (read-your-writes), with bodies
 * parsed losslessly so digests match the reference's for the same JSON.
 */
export async function objectWriteRoutes(app: FastifyInstance, deps: ObjectWriteDeps): Promise<void> {
  useLosslessJsonBodies(app);
  const { store, auth } = deps;
  addRoute(app, auth, 'objCreate', async (body, { caller, reply }) =>
    sendJsonText(reply, await createObject(store, body.obj, caller.userId)),
  );
  addRoute(app, auth, 'tableUpdate', async (body, { reply }) =>
    sendJsonText(reply, await updateTable(store, body.project_id, body.base_digest, body.updates)),
  );
  addRoute(app, auth, 'tableCreate', async (body, { reply }) =>
    sendJsonText(reply, await createTable(store, body.table.project_id, body.table.rows, body.table.expected_digest)),
  );
  addRoute(app, auth, 'feedbackReplace', async (body, { caller, reply }) =>
    sendJsonText(reply, await replaceFeedback(store, body, caller.userId)),
  );

  // Beyond the 20: what the reference's SDK calls (libs/api: objectRouteSpecs, tableRouteSpecs, feedbackRouteSpecs).
  addRoute(app, auth, 'objDelete', async (body) => deleteObjectVersions(store, body.project_id, body.object_id, body.digests));
  addRoute(app, auth, 'feedbackCreate', async (body, { caller, reply }) =>
    sendJsonText(reply, (await createFeedback(store, [body], caller.userId))[0]),
  );
  addRoute(app, auth, 'feedbackBatchCreate', async (body, { caller, reply }) =>
    sendJsonText(reply, { res: await createFeedback(store, body.batch, caller.userId) }),
  );
  addRoute(app, auth, 'feedbackPurge', async (body) => purgeFeedback(store, body.project_id, body.query.$expr));
}
