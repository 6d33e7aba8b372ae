import type { FastifyInstance } from 'fastify';
import type { Bus, ReadYourWrites } from '@weft/bus';
import { badRequest, delivery, forbidden, nowMicros, withDeliveryProject, type Logger } from '@weft/core';
import {
  addRawBodyRoute,
  addRoute,
  defaultRequestLimits,
  noteProject,
  projectInJsonBytes,
  type Authenticator,
  type RouteContext,
} from '@weft/http';
import type { Store } from '@weft/store';
import {
  callBatchError,
  CallIngest,
  convertersFor,
  ingestSettingsFor,
  projectOfCallPartKey,
  type CallPartEnvelope,
  type IngestSettings,
  type IngestWorkers,
} from '@weft/ingest';
import { CallMutations } from './call-mutations';
import { DeletionJobs } from './deletion-jobs';
import { deadLetterRoutes } from './dead-letter-routes';
import { deliveryRoutes } from './delivery-routes';
import { ingestSettingsRoutes } from './ingest-settings-routes';
import { fileWriteRoutes } from './files';
import { OtelIngest } from './otel';
import { OtelLogsIngest } from './otel-logs';
import { otlpHttpRoutes } from './otlp-http';
import { objectWriteRoutes } from './objects';
import { weave054WriteRoutes } from './weave054';
import { v2ObjectRoutes } from './v2-objects';
import { v2EvaluationRunRoutes } from './v2-evaluation-runs';

export interface GatewayDeps {
  bus: Bus<CallPartEnvelope>;
  store: Store;
  auth: Authenticator;
  /** Largest body accepted, also after decompression on the OTLP/HTTP route. */
  bodyLimitBytes?: number;
  /** The ingest worker threads, where OTLP spans are converted and upsert batches parsed, checked and encoded (default: none, the serving thread). */
  workers?: IngestWorkers | null;
  /** The projects' ingest policies (default: the process's, for the store). */
  settings?: IngestSettings;
  /** Where the bus acknowledges before storing (the all-in-one's ingest log): what mutations and reads wait on to see the writes. */
  readYourWrites?: ReadYourWrites;
}

/** The write side: call parts through the bus; objects, tables and feedback straight to ClickHouse. */
export async function gatewayRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const limits = app.weftLimits ?? defaultRequestLimits;
  // Redaction and sampling as each project set them (read before the first call is taken).
  const settings = deps.settings ?? ingestSettingsFor(deps.store, app.log as Logger);
  await settings.ready();
  const ingest = new CallIngest(deps.bus, { maxValueBytes: limits.maxValueBytes, entrance: 'calls', settings });
  // Call writes are refused before their body is read while the bus is full or down.
  app.weftAdmission?.watchBus(deps.bus);
  const publishes = { publishes: true, entrance: 'calls' } as const;
  const calls = { entrance: 'calls' } as const;
  delivery.countsAccepted();

  addRoute(app, deps.auth, 'callStart', async (body, { caller }) => ingest.start(body.start, caller), publishes);
  addRoute(app, deps.auth, 'callEnd', async (body) => ingest.end(body.end), publishes);
  // The body stays bytes: the edge's checks, the rows and their encoding are one function
  // (encodeCallBatch), run here or on an ingest worker. One publish for the whole batch: all or
  // nothing is acknowledged. Returned, not awaited: the rows are not held while the bus acknowledges.
  const converters = convertersFor(deps.workers);
  addRawBodyRoute(
    app,
    deps.auth,
    'callUpsertBatch',
    async (body, { caller, request }) => {
      const task = { body, caller, acceptedAtMicros: nowMicros(), limits, redact: await ingest.redactedProjects() };
      const r = await converters.callBatches.convert(task);
      if (!r.ok) throw withDeliveryProject(callBatchError(r), projectInJsonBytes(body));
      if (r.keys.length > 0) noteProject(request, projectOfCallPartKey(r.keys[0]!));
      return ingest.publishEncoded(r).then(() => ({ res: r.res }));
    },
    publishes,
  );

  // The reference SDK's v2 call paths (its default write path since 0.52): the project is in the path too.
  addRoute(
    app,
    deps.auth,
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
    deps.auth,
    'callStartV2',
    async (body, ctx) => {
      sameProject(v2Project(ctx), body.start.project_id, 'start.project_id');
      return ingest.start(body.start, ctx.caller);
    },
    calls,
  );
  addRoute(
    app,
    deps.auth,
    'callEndV2',
    async (body, ctx) => {
      sameProject(v2Project(ctx), body.end.project_id, 'end.project_id');
      return ingest.end(body.end);
    },
    calls,
  );
  const reads = deps.readYourWrites;
  const caughtUp = reads ? () => reads.caughtUp() : undefined;
  const mutations = new CallMutations(ingest, deps.store, caughtUp);
  addRoute(app, deps.auth, 'callUpdate', async (body) => mutations.rename(body.project_id, body.call_id, body.display_name));
  addRoute(app, deps.auth, 'callsDelete', async (body) => mutations.delete(body.project_id, body.call_ids));
  // Weave's V2 evaluation APIs: runs, predictions and scores are calls (v2-evaluation-runs.ts).
  await app.register(v2EvaluationRunRoutes, {
    store: deps.store,
    auth: deps.auth,
    ingest,
    mutations,
    ...(caughtUp ? { caughtUp } : {}),
  });
  // Deletions that delete (deletion-jobs.ts). A project's: admins and members of its entity (the
  // tenancy check of addRoute); a data subject's calls span entities: admin keys only.
  const deletions = new DeletionJobs(deps.store, app.log as Logger, caughtUp);
  addRoute(app, deps.auth, 'projectDelete', async (body, { caller }) => deletions.create('project', body.project_id, caller));
  addRoute(app, deps.auth, 'userDataDelete', async (body, { caller }) => {
    if (!caller.isAdmin) throw forbidden("deleting a user's data needs an admin key");
    return deletions.create('user', body.svc_user_id, caller);
  });
  addRoute(app, deps.auth, 'deletionStatus', async (body, { caller }) => deletions.status(body.job_id, caller));
  deadLetterRoutes(app, deps.auth, deps.bus, deps.store);
  deliveryRoutes(app, deps.auth);
  ingestSettingsRoutes(app, deps.auth, deps.store, settings);

  const otlpIngest = new CallIngest(deps.bus, { maxValueBytes: limits.maxValueBytes, entrance: 'otlp_http', settings });
  const otel = new OtelIngest(otlpIngest, app.log as Logger, converters.spans);
  addRoute(
    app,
    deps.auth,
    'otelTrace',
    async (body, { caller }) => ({
      partial_success: await otel.ingest(
        { decoded: body.traces },
        { projectId: body.project_id, runId: body.svc_run_id, fieldPrefix: 'traces.', transport: 'trace_endpoint' },
        caller,
      ),
    }),
    { publishes: true, entrance: 'otlp_http' },
  );
  // Standard OTLP/HTTP (protobuf or JSON, gzip) for stock exporters, in its own encapsulated scope.
  await app.register(otlpHttpRoutes, {
    ingest: otel,
    logs: new OtelLogsIngest(deps.store, app.log as Logger),
    auth: deps.auth,
    bodyLimitBytes: deps.bodyLimitBytes ?? app.initialConfig.bodyLimit ?? 32 * 1024 * 1024,
  });
  await app.register(objectWriteRoutes, { store: deps.store, auth: deps.auth });
  await app.register(weave054WriteRoutes, { store: deps.store, auth: deps.auth });
  await app.register(fileWriteRoutes, { store: deps.store, auth: deps.auth });
  await app.register(v2ObjectRoutes, { store: deps.store, auth: deps.auth });
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
