import type { FastifyInstance } from 'fastify';
import { badRequest, nowMicros, withDeliveryProject } from '@weft/core';
import {
  addRawBodyRoute,
  addRoute,
  defaultRequestLimits,
  noteProject,
  projectInJsonBytes,
  type Authenticator,
  type RouteContext,
} from '@weft/http';
import { callBatchError, projectOfCallPartKey, type CallBatchConverter, type CallIngest } from '@weft/ingest';
import type { CallMutations } from './call-mutations';

export interface CallWriteDeps {
  auth: Authenticator;
  /** The calls entrance's ingest (its policies, its delivery counts). */
  ingest: CallIngest;
  /** Where upsert batches are parsed, checked and encoded (inline or on the ingest workers). */
  callBatches: CallBatchConverter;
  /** Renames and deletions. */
  mutations: CallMutations;
}

/**
 * Call writes: the interface's start, end and upsert batch; the reference SDK's v2 call paths
 * (its default write path since 0.52: the project is in the path too); rename and delete.
 */
export async function callWriteRoutes(app: FastifyInstance, deps: CallWriteDeps): Promise<void> {
  const { auth, ingest, callBatches, mutations } = deps;
  const limits = app.weftLimits ?? defaultRequestLimits;
  const publishes = { publishes: true, entrance: 'calls' } as const;
  const calls = { entrance: 'calls' } as const;

  addRoute(app, auth, 'callStart', async (body, { caller }) => ingest.start(body.start, caller), publishes);
  addRoute(app, auth, 'callEnd', async (body) => ingest.end(body.end), publishes);
  // The body stays bytes: the edge's checks, the rows and their encoding are one function
  // (encodeCallBatch), run here or on an ingest worker. One publish for the whole batch: all or
  // nothing is acknowledged. Returned, not awaited: the rows are not held while the bus acknowledges.
  addRawBodyRoute(
    app,
    auth,
    'callUpsertBatch',
    async (body, { caller, request }) => {
      const task = { body, caller, acceptedAtMicros: nowMicros(), limits, redact: await ingest.redactedProjects() };
      const r = await callBatches.convert(task);
      if (!r.ok) throw withDeliveryProject(callBatchError(r), projectInJsonBytes(body));
      if (r.keys.length > 0) noteProject(request, projectOfCallPartKey(r.keys[0]!));
      return ingest.publishEncoded(r).then(() => ({ res: r.res }));
    },
    publishes,
  );

  // The reference SDK's v2 call paths: the project is in the path too.
  addRoute(
    app,
    auth,
    'callsComplete',
    async (body, ctx) => {
      const project = v2Project(ctx);
      body.batch.forEach((c, i) => sameProject(project, c.project_id, `batch[${i}].project_id`));
      return ingest.complete(body.batch, ctx.caller);
    },
    calls,
  );
  addRoute(
    app,
    auth,
    'callStartV2',
    async (body, ctx) => {
      sameProject(v2Project(ctx), body.start.project_id, 'start.project_id');
      return ingest.start(body.start, ctx.caller);
    },
    calls,
  );
  addRoute(
    app,
    auth,
    'callEndV2',
    async (body, ctx) => {
      sameProject(v2Project(ctx), body.end.project_id, 'end.project_id');
      return ingest.end(body.end);
    },
    calls,
  );
  addRoute(app, auth, 'callUpdate', async (body) => mutations.rename(body.project_id, body.call_id, body.display_name));
  addRoute(app, auth, 'callsDelete', async (body) => mutations.delete(body.project_id, body.call_ids));
}

/** `<entity>/<project>` of a /v2/{entity}/{project}/… path (the caller's entity: the tenancy check covers the body's project_ids, which must equal it). */
function v2Project(ctx: RouteContext): string {
  const { entity, project } = ctx.request.params as { entity: string; project: string };
  return `${entity}/${project}`;
}

function sameProject(pathProject: string, bodyProject: string, field: string): void {
  if (bodyProject !== pathProject)
    throw badRequest(`${field}: '${bodyProject}' differs from the project of the path, '${pathProject}'`, field);
}
