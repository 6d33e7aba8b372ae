import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import rateLimit from '@fastify/rate-limit';
import { metrics, metricsRegistry, VERSION, type Logger } from '@weft/core';
import { installErrorHandler } from './errors';
import { parseJsonBody } from './json-body';
import { mayHoldRefs } from './tenancy';
import { defaultRequestLimits, type RequestLimits } from './limits';
import { installAdmission } from './admission';
import { HeavyTurns } from './heavy-turns';
import { installDeliveryCounts } from './delivery-counts';
import { installRefusedBodies } from './refused-body';
import { whenHeavyBodyTurn } from './turns';
import { installRequestTimeouts, serverTimeoutOptions } from './timeouts';
import { readinessRoute, type ReadinessChecks } from './readiness';
import { KeyRateLimiter } from './rate-limit';
import { collectRoutes, documentWhenReady } from './route-docs';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request limits every route of this server enforces (see addRoute). */
    weftLimits: RequestLimits;
    /** Turns for heavy requests, per project and per key (heavy-turns.ts). */
    weftHeavyTurns: HeavyTurns;
  }
}

export interface HttpServerOptions {
  log: Logger;
  bodyLimitBytes: number;
  /** Reported by /health, /server_info and the OpenAPI document; weft's VERSION when absent. */
  version?: string;
  /** Facts /health adds to its answer (roles, store mode, bus kind): known at start, no I/O. */
  describe?: Record<string, unknown>;
  /** The dependencies /ready checks, by name (e.g. `store`, `bus`), each under WEFT_READY_TIMEOUT_MS. */
  readiness?: ReadinessChecks;
  /** Body, batch, string, depth, `limit`, query and rate limits; the configuration's defaults when absent. */
  limits?: RequestLimits;
}

/** `/traces/<path>` → `/<path>` (the reference SDK's default trace-server URL under WANDB_BASE_URL). */
export function stripTracesPrefix(url: string): string {
  return url.startsWith('/traces/') ? url.slice('/traces'.length) : url;
}

/**
 * The HTTP shell every service shares: JSON body parsing with a size limit, the one error
 * handler, /health, /metrics, /openapi.json and /docs. Services add their routes as plugins.
 */
export async function createHttpServer(opts: HttpServerOptions): Promise<FastifyInstance> {
  const limits = opts.limits ?? defaultRequestLimits;
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimitBytes,
    // Headers and whole-request receipt deadlines (Node's own, checked every second).
    ...serverTimeoutOptions(limits),
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    // The Weave SDK given only WANDB_BASE_URL=<weft> calls the trace API at <weft>/traces/…:
    // the same routes answer there.
    rewriteUrl: (req) => stripTracesPrefix(req.url ?? '/'),
  });
  installErrorHandler(app, opts.log);
  const routes = collectRoutes(app);

  app.decorate('weftLimits', limits);
  app.decorate('weftHeavyTurns', new HeavyTurns(limits));
  // First hooks of every request: a body over the limit by its Content-Length (413), then
  // admission refuse what cannot be served before reading it; then the body-inactivity and
  // whole-request deadlines. What a refusal leaves unread is drained (refused-body.ts).
  installRefusedBodies(app, limits);
  installAdmission(app, limits);
  installRequestTimeouts(app, limits, opts.log);
  installDeliveryCounts(app);
  // A body sent without any Content-Type is read as JSON, as the reference does (Weave SDKs
  // before 0.52 send none); a Content-Type other than JSON is still 415.
  // The other way round, a DELETE with a JSON Content-Type and no bytes (the Weave SDK 0.54's
  // client sends its DELETEs so) has no body, not an empty JSON body (400).
  app.addHook('onRequest', async (request) => {
    const h = request.headers;
    const hasBytes = (h['content-length'] !== undefined && h['content-length'] !== '0') || h['transfer-encoding'] !== undefined;
    if (h['content-type'] === undefined && hasBytes) h['content-type'] = 'application/json';
    else if (!hasBytes && request.method === 'DELETE') delete h['content-type'];
  });
  // JSON only (anything else is 415), through our own parser: strict UTF-8, depth/size/number
  // checks, errors naming the field.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) =>
    whenHeavyBodyTurn((raw as Buffer).length, () => {
      try {
        const value = parseJsonBody(raw as Buffer, limits);
        req.bodyMayHoldRefs = mayHoldRefs(raw as Buffer);
        done(null, value);
      } catch (e) {
        done(e as Error, undefined);
      }
    }),
  );
  // The per-key rate limit: one counter per API key across every authenticated entrance
  // (see KeyRateLimiter). The plugin supplies the limiter; no route uses its per-route counters.
  await app.register(rateLimit, { global: false });
  app.decorate('weftRateLimit', new KeyRateLimiter(app, limits.rateLimitMax, limits.rateLimitWindowMs));

  const version = opts.version ?? VERSION;
  // Filled once every route is registered (the roles add theirs after this shell is built).
  const document: Record<string, unknown> = {};
  documentWhenReady(app, document, version, routes);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(
    '/openapi.json',
    { config: { doc: { tag: 'server', summary: 'This OpenAPI document (browsable at /docs)', auth: 'none' } } },
    async () => document,
  );

  // Liveness: the process serves HTTP. Answers at once, whatever the dependencies do (a restart
  // would not fix one): its version and what it runs (roles, store mode, bus kind).
  const liveness = { tag: 'server', summary: 'Liveness: version, roles, store mode, bus kind', auth: 'none' } as const;
  app.get('/health', { config: { probe: true, doc: liveness } }, async () => ({ status: 'ok', version, ...opts.describe }));
  readinessRoute(app, opts.readiness ?? {}, limits.readyTimeoutMs);
  // The reference's SDK asks this at init.
  const serverInfo = { tag: 'server', summary: "The trace server's version (the Weave SDK asks it at init)", auth: 'none' } as const;
  app.get('/server_info', { config: { doc: serverInfo } }, async () => ({
    min_required_weave_python_version: '0.0.1',
    trace_server_version: version,
  }));

  // Prometheus text format: every service exposes its own process's metrics.
  const metricsDoc = { tag: 'server', summary: 'Prometheus metrics of this process', auth: 'none' } as const;
  app.get('/metrics', { config: { probe: true, doc: metricsDoc } }, async (_req, reply) => {
    reply.header('content-type', metricsRegistry.contentType);
    return metricsRegistry.metrics();
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ route, status: String(reply.statusCode) });
    const inBytes = Number(request.headers['content-length'] ?? 0);
    if (inBytes > 0) metrics.httpRequestBytes.inc({ route }, inBytes);
    const outBytes = Number(reply.getHeader('content-length') ?? 0);
    if (outBytes > 0) metrics.httpResponseBytes.inc({ route }, outBytes);
    opts.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  return app;
}
