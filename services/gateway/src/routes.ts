import type { FastifyInstance } from 'fastify';
import type { Bus, ReadYourWrites } from '@weft/bus';
import { delivery, type Logger } from '@weft/core';
import { defaultRequestLimits, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest, convertersFor, ingestSettingsFor, type CallPartEnvelope, type IngestSettings, type IngestWorkers } from '@weft/ingest';
import { CallMutations } from './call-mutations';
import { callWriteRoutes } from './call-routes';
import { deletionRoutes } from './deletion-routes';
import { deadLetterRoutes } from './dead-letter-routes';
import { deliveryRoutes } from './delivery-routes';
import { ingestSettingsRoutes } from './ingest-settings-routes';
import { fileWriteRoutes } from './files';
import { OtelIngest } from './otel';
import { OtelLogsIngest } from './otel-logs';
import { otelTraceRoutes, otlpHttpRoutes } from './otlp-http';
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

/**
 * The write side: call parts through the bus; objects, tables and feedback straight to ClickHouse.
 * What the groups share (the entrances' ingest, the converters, the mutations) is built here;
 * each route group is a plugin of its own, registered with what it needs.
 */
export async function gatewayRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { auth, store } = deps;
  const limits = app.weftLimits ?? defaultRequestLimits;
  // Redaction and sampling as each project set them (read before the first call is taken).
  const settings = deps.settings ?? ingestSettingsFor(store, app.log as Logger);
  await settings.ready();
  // Its refresh reads the store: it stops with the server, before the store closes.
  app.addHook('onClose', async () => settings.stop());
  const ingest = new CallIngest(deps.bus, { maxValueBytes: limits.maxValueBytes, entrance: 'calls', settings });
  // Call writes are refused before their body is read while the bus is full or down.
  app.weftAdmission?.watchBus(deps.bus);
  delivery.countsAccepted();
  const converters = convertersFor(deps.workers);
  const reads = deps.readYourWrites;
  const caughtUp = reads ? () => reads.caughtUp() : undefined;
  const mutations = new CallMutations(ingest, store, caughtUp);
  const afterWrites = caughtUp ? { caughtUp } : {};
  // A deletion includes every write acknowledged before it, however long storing them takes.
  const allStored = reads ? { caughtUp: () => reads.stored() } : {};

  await app.register(callWriteRoutes, { auth, ingest, callBatches: converters.callBatches, mutations });
  // Weave's V2 evaluation APIs: runs, predictions and scores are calls (v2-evaluation-runs.ts).
  await app.register(v2EvaluationRunRoutes, { store, auth, ingest, mutations, ...afterWrites });
  await app.register(deletionRoutes, { auth, store, ...allStored });
  await app.register(deadLetterRoutes, { auth, bus: deps.bus, store });
  await app.register(deliveryRoutes, { auth });
  await app.register(ingestSettingsRoutes, { auth, store, settings });

  const otlpIngest = new CallIngest(deps.bus, { maxValueBytes: limits.maxValueBytes, entrance: 'otlp_http', settings });
  const otel = new OtelIngest(otlpIngest, app.log as Logger, converters.spans);
  await app.register(otelTraceRoutes, { auth, ingest: otel });
  // Standard OTLP/HTTP (protobuf or JSON, gzip) for stock exporters, in its own encapsulated scope.
  await app.register(otlpHttpRoutes, {
    ingest: otel,
    logs: new OtelLogsIngest(store, app.log as Logger),
    auth,
    bodyLimitBytes: deps.bodyLimitBytes ?? app.initialConfig.bodyLimit ?? 32 * 1024 * 1024,
  });
  await app.register(objectWriteRoutes, { store, auth });
  await app.register(weave054WriteRoutes, { store, auth });
  await app.register(fileWriteRoutes, { store, auth });
  await app.register(v2ObjectRoutes, { store, auth });
}
