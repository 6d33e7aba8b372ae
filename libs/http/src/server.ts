import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { buildOpenApiDocument } from '@weft/api';
import { metrics, metricsRegistry, type Logger } from '@weft/core';
import { installErrorHandler } from './errors';

export interface HttpServerOptions {
  log: Logger;
  bodyLimitBytes: number;
  version: string;
  /** Extra readiness check for /health (e.g. a ClickHouse ping). */
  healthCheck?: () => Promise<Record<string, unknown>>;
}

/**
 * The HTTP shell every service shares: JSON body parsing with a size limit, the one error
 * handler, /health, /metrics, /openapi.json and /docs. Services add their routes as plugins.
 */
export async function createHttpServer(opts: HttpServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimitBytes,
    requestTimeout: 0,
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
  });
  installErrorHandler(app, opts.log);

  const document = buildOpenApiDocument({ version: opts.version });
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', async () => document);

  app.get('/health', async (_req, reply) => {
    try {
      const extra = opts.healthCheck ? await opts.healthCheck() : {};
      return { status: 'ok', ...extra };
    } catch (e) {
      return reply.code(503).send({ status: 503, reason: `unhealthy: ${(e as Error).message}` });
    }
  });
  // The reference's SDK asks this at init.
  app.get('/server_info', async () => ({ min_required_weave_python_version: '0.0.1', trace_server_version: opts.version }));

  // Prometheus text format: every service exposes its own process's metrics.
  app.get('/metrics', async (_req, reply) => {
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
    opts.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
  return app;
}
