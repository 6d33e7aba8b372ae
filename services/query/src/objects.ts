import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '@weft/core';
import { parseLosslessJson } from '@weft/digest';
import { addRoute, sendJsonArrayObject, sendJsonText, sendJsonl, type Authenticator } from '@weft/http';
import { diffTables, queryFeedback, queryObjects, queryTableRows, readFile, readObject, resolveRefs, tableStats } from '@weft/objects';
import type { Store } from '@weft/store';
import { toJsonText } from '@weft/digest';

export interface ObjectReadDeps {
  store: Store;
  auth: Authenticator;
}

/** Reads of objects, tables, feedback and refs. Stored values are emitted verbatim (`1.0` stays `1.0`). */
export async function objectReadRoutes(app: FastifyInstance, deps: ObjectReadDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'objRead', async (body, { reply }) => sendJsonText(reply, { obj: await readObject(store, body) }));
  addRoute(app, auth, 'objsQuery', async (body, { reply }) => sendJsonText(reply, { objs: await queryObjects(store, body) }));

  addRoute(app, auth, 'tableQuery', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonArrayObject(reply, 'rows', queryTableRows(store, body, abort.signal), () => abort.abort());
    return undefined;
  });
  addRoute(app, auth, 'tableQueryStream', async (body, { reply }) => {
    const abort = new AbortController();
    await sendJsonl(reply, queryTableRows(store, body, abort.signal), () => abort.abort(), toJsonText);
    return undefined;
  });

  addRoute(app, auth, 'tableQueryStats', async (body) => {
    const [stats] = await tableStats(store, body.project_id, [body.digest], false);
    return { count: stats?.count ?? 0 };
  });
  addRoute(app, auth, 'tableQueryStatsBatch', async (body) => ({
    tables: await tableStats(store, body.project_id, body.digests, body.include_storage_size),
  }));
  addRoute(app, auth, 'tableDiff', async (body, { reply }) => sendJsonText(reply, await diffTables(store, body)));
  addRoute(app, auth, 'fileContent', async (body, { reply }) => {
    const bytes = await readFile(store, body.project_id, body.digest);
    reply.type('application/octet-stream');
    return bytes;
  });

  // The Weave SDK gets the reference's spellings only (its Feedback model forbids ours).
  addRoute(app, auth, 'feedbackQuery', async (body, { reply, dialect }) =>
    sendJsonText(reply, { result: await queryFeedback(store, body, dialect) }),
  );

  addRoute(app, auth, 'refsReadBatch', async (body, { reply }) => {
    const resolved = await resolveRefs(store, body.refs, parseLosslessJson);
    const missing: string[] = [];
    const vals = resolved.map((r, i) => {
      switch (r.status) {
        case 'ok':
          return r.value;
        case 'deleted':
          return null;
        case 'missing':
          missing.push(r.digest);
          return null;
        case 'invalid':
          throw badRequest(`refs[${i}]: ${r.reason}`, `refs[${i}]`);
      }
    });
    if (missing.length > 0) {
      throw new ApiError(404, `Ref objects not found: ${missing.join(', ')}`, { extra: { missing_object_digests: missing } });
    }
    return sendJsonText(reply, { vals });
  });
}
