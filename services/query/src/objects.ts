import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '@weft/core';
import { parseLosslessJson } from '@weft/digest';
import { addRoute, sendJsonArrayObject, sendJsonText, sendJsonl, type Authenticator } from '@weft/http';
import {
  aliasDigest,
  diffTables,
  labelsOf,
  queryFeedback,
  queryObjects,
  queryTableRows,
  readFile,
  readObject,
  resolveRefs,
  tableStats,
  type ObjectVersionOut,
} from '@weft/objects';
import type { Store } from '@weft/store';
import { toJsonText } from '@weft/digest';

export interface ObjectReadDeps {
  store: Store;
  auth: Authenticator;
}

/** Reads of objects, tables, feedback and refs. Stored values are emitted verbatim (`1.0` stays `1.0`). */
export async function objectReadRoutes(app: FastifyInstance, deps: ObjectReadDeps): Promise<void> {
  const { store, auth } = deps;
  // With include_tags_and_aliases (Weave 0.54), each version's tags and aliases (libs/objects object-labels.ts).
  const withLabels = async (projectId: string, objs: ObjectVersionOut[]) => {
    const labels = await labelsOf(
      store,
      projectId,
      objs.map((o) => o.object_id),
    );
    return objs.map((o) => ({
      ...o,
      tags: labels.get(`${o.object_id}:${o.digest}`)?.tags ?? [],
      aliases: labels.get(`${o.object_id}:${o.digest}`)?.aliases ?? [],
    }));
  };
  addRoute(app, auth, 'objRead', async (body, { reply }) => {
    let obj: ObjectVersionOut;
    try {
      obj = await readObject(store, body);
    } catch (e) {
      // A digest that names no version may be an alias.
      const target =
        e instanceof ApiError && e.status === 404 ? await aliasDigest(store, body.project_id, body.object_id, body.digest) : undefined;
      if (!target) throw e;
      obj = await readObject(store, { ...body, digest: target });
    }
    return sendJsonText(reply, { obj: body.include_tags_and_aliases ? (await withLabels(body.project_id, [obj]))[0]! : obj });
  });
  addRoute(app, auth, 'objsQuery', async (body, { reply }) => {
    const objs = await queryObjects(store, body);
    return sendJsonText(reply, { objs: body.include_tags_and_aliases ? await withLabels(body.project_id, objs) : objs });
  });

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
