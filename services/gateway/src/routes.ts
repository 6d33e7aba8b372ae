import type { FastifyInstance } from 'fastify';
import type { Bus, CallPartEnvelope } from '@weft/bus';
import { nowMicros } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest } from './calls';
import { OtelIngest } from './otel';
import { otlpHttpRoutes } from './otlp-http';
import { objectWriteRoutes } from './objects';

export interface GatewayDeps {
  bus: Bus<CallPartEnvelope>;
  store: Store;
  auth: Authenticator;
  /** Largest body accepted, also after decompression on the OTLP/HTTP route. */
  bodyLimitBytes?: number;
}

/** The write side: call parts through the bus; objects, tables and feedback straight to ClickHouse. */
export async function gatewayRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const ingest = new CallIngest(deps.bus);
  // Call writes are refused before their body is read while the bus is full or down.
  app.weftAdmission?.watchBus(deps.bus);
  const publishes = { publishes: true };

  addRoute(app, deps.auth, 'callStart', async (body, { caller }) => ingest.start(body.start, caller), [], publishes);
  addRoute(app, deps.auth, 'callEnd', async (body) => ingest.end(body.end), [], publishes);
  addRoute(app, deps.auth, 'callUpsertBatch', async (body, { caller }) => {
    // One publish for the whole batch: all or nothing is acknowledged.
    const at = nowMicros();
    const rows = [];
    const res = [];
    for (const item of body.batch) {
      if (item.mode === 'start') {
        const { row, id, trace_id } = ingest.prepareStart(item.req.start, caller, at);
        rows.push(row);
        res.push({ id, trace_id });
      } else {
        rows.push(ingest.prepareEnd(item.req.end, at));
        res.push({});
      }
    }
    await ingest.publish(rows);
    return { res };
  }, [], publishes);

  const otel = new OtelIngest(ingest);
  addRoute(app, deps.auth, 'otelTrace', async (body, { caller }) => ({
    partial_success: await otel.ingest(body.traces, { projectId: body.project_id, runId: body.svc_run_id, fieldPrefix: 'traces.' }, caller),
  }), [], publishes);
  // Standard OTLP/HTTP (protobuf or JSON, gzip) for stock exporters, in its own encapsulated scope.
  await app.register(otlpHttpRoutes, { ingest: otel, auth: deps.auth, bodyLimitBytes: deps.bodyLimitBytes ?? app.initialConfig.bodyLimit ?? 32 * 1024 * 1024 });
  await app.register(objectWriteRoutes, { store: deps.store, auth: deps.auth });
}
