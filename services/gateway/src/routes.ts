import type { FastifyInstance } from 'fastify';
import type { Bus } from '@weft/bus';
import type { ResponseOf } from '@weft/api';
import { nowMicros } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest, type CallPartEnvelope } from '@weft/ingest';
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

  addRoute(app, deps.auth, 'callStart', async (body, { caller }) => ingest.start(body.start, caller));
  addRoute(app, deps.auth, 'callEnd', async (body) => ingest.end(body.end));
  addRoute(app, deps.auth, 'callUpsertBatch', async (body, { caller }) => {
    // One publish for the whole batch: all or nothing is acknowledged.
    const at = nowMicros();
    const rows = [];
    const res: ResponseOf<'callUpsertBatch'>['res'] = [];
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
  });

  const otel = new OtelIngest(ingest);
  addRoute(app, deps.auth, 'otelTrace', async (body, { caller }) => ({
    partial_success: await otel.ingest(body.traces, { projectId: body.project_id, runId: body.svc_run_id, fieldPrefix: 'traces.' }, caller),
  }));
  // Standard OTLP/HTTP (protobuf or JSON, gzip) for stock exporters, in its own encapsulated scope.
  await app.register(otlpHttpRoutes, { ingest: otel, auth: deps.auth, bodyLimitBytes: deps.bodyLimitBytes ?? app.initialConfig.bodyLimit ?? 32 * 1024 * 1024 });
  await app.register(objectWriteRoutes, { store: deps.store, auth: deps.auth });
}
