import { promisify } from 'node:util';
import { gunzip, inflate, type ZlibOptions } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectId as projectIdSchema } from '@weft/api';
import { ApiError, badRequest, payloadTooLarge, type AuthScheme, type Caller } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import { encodeExportLogsServiceResponse, encodeExportTraceServiceResponse, encodeRpcStatus, grpcCodeForHttpStatus } from '@weft/otlp';
import type { OtelIngest } from './otel';
import type { OtelLogsIngest } from './otel-logs';

export interface OtlpHttpDeps {
  ingest: OtelIngest;
  logs: OtelLogsIngest;
  auth: Authenticator;
  bodyLimitBytes: number;
}

/** The path stock OTLP/HTTP exporters post to (`<endpoint>/v1/traces`); outside the 20-endpoint contract. */
export const OTLP_TRACES_PATH = '/otel/v1/traces';
/**
 * The OpenTelemetry Collector's path: exporters given only a base URL
 * (OTEL_EXPORTER_OTLP_ENDPOINT=http://host:6345) post to `<base>/v1/traces`. Under the /v1 of
 * the OpenAI-compatible routes, but served here, by the gateway.
 */
export const COLLECTOR_OTLP_TRACES_PATH = '/v1/traces';
/** Where the Weave SDK's own OTel exporter posts (`<trace server>/agents/otel/v1/traces`): the same route. */
export const SDK_OTLP_TRACES_PATH = '/agents/otel/v1/traces';
/** OTLP/HTTP logs (GenAI events among them), at the standard and the Collector's paths. */
export const OTLP_LOGS_PATH = '/otel/v1/logs';
export const COLLECTOR_OTLP_LOGS_PATH = '/v1/logs';

const PROTOBUF_TYPES = ['application/x-protobuf', 'application/protobuf'];
const gunzipAsync = promisify<Buffer, ZlibOptions, Buffer>(gunzip);
const inflateAsync = promisify<Buffer, ZlibOptions, Buffer>(inflate);

/**
 * Standard OTLP/HTTP trace ingestion: protobuf or JSON, optionally gzip (or deflate)
 * compressed, project from the `project_id` header or the resource attributes
 * `wandb.entity`/`wandb.project`, Basic (`api:<key>`) or Bearer auth. Registered as its own
 * plugin so its raw-body parsers stay scoped to this route: every other route keeps strict JSON.
 */
export async function otlpHttpRoutes(app: FastifyInstance, deps: OtlpHttpDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  // The body arrives raw (maybe compressed); the limit applies to the compressed bytes here
  // and to the decompressed bytes in `decompress`.
  app.addContentTypeParser(
    [...PROTOBUF_TYPES, 'application/json'],
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_req, body, done) => done(null, body),
  );
  // Anything else is refused before the body is read, saying what is taken.
  app.addContentTypeParser('*', (request, _payload, done) => {
    const type = request.headers['content-type'];
    done(
      new ApiError(415, `unsupported Content-Type '${type ?? ''}': OTLP/HTTP takes application/x-protobuf or application/json`),
      undefined,
    );
  });

  // Authenticated before the body is read: no credentials, no upload.
  const callers = new WeakMap<FastifyRequest, Caller>();
  const authenticate = async (request: FastifyRequest) => {
    const authorization = request.headers.authorization;
    const caller = await deps.auth.authenticate(authorization, schemeOf(authorization));
    await app.weftRateLimit.check(caller);
    callers.set(request, caller);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callers.get(request)!;
    const protobuf = PROTOBUF_TYPES.includes(mediaType(request));
    const raw = await decompress(request.body as Buffer, request.headers['content-encoding'], deps.bodyLimitBytes);

    const payload = protobuf ? { protobuf: raw } : { json: raw.toString('utf8') };
    const partial = await deps.ingest.ingest(payload, { projectId: projectHeader(request), transport: 'http' }, caller);
    if (protobuf) {
      return reply.type('application/x-protobuf').send(Buffer.from(encodeExportTraceServiceResponse(partial)));
    }
    // OTLP/JSON field names; an empty object means everything was accepted.
    return partial ? { partialSuccess: { rejectedSpans: partial.rejected_spans, errorMessage: partial.error_message } } : {};
  };
  const summaries: Record<string, string> = {
    [OTLP_TRACES_PATH]: 'OTLP/HTTP trace export (ExportTraceServiceRequest; project from the project_id header or resource attributes)',
    [COLLECTOR_OTLP_TRACES_PATH]: "OTLP/HTTP trace export at the Collector's path (OTEL_EXPORTER_OTLP_ENDPOINT=<weft>)",
    [SDK_OTLP_TRACES_PATH]: "OTLP/HTTP trace export where the Weave SDK's own OTel exporter posts",
  };
  for (const path of [OTLP_TRACES_PATH, COLLECTOR_OTLP_TRACES_PATH, SDK_OTLP_TRACES_PATH]) {
    const doc = { tag: 'otlp', summary: summaries[path]!, bodyTypes: [...PROTOBUF_TYPES, 'application/json'] } as const;
    app.post(path, { onRequest: authenticate, config: { mapError: otlpError, publishes: true, entrance: 'otlp_http', doc } }, handler);
  }

  const logsHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callers.get(request)!;
    const protobuf = PROTOBUF_TYPES.includes(mediaType(request));
    const raw = await decompress(request.body as Buffer, request.headers['content-encoding'], deps.bodyLimitBytes);
    const payload = protobuf ? { protobuf: raw } : { json: raw.toString('utf8') };
    const partial = await deps.logs.ingest(payload, { projectId: projectHeader(request), transport: 'http' }, caller);
    if (protobuf) return reply.type('application/x-protobuf').send(Buffer.from(encodeExportLogsServiceResponse(partial)));
    return partial ? { partialSuccess: { rejectedLogRecords: partial.rejected_log_records, errorMessage: partial.error_message } } : {};
  };
  for (const path of [OTLP_LOGS_PATH, COLLECTOR_OTLP_LOGS_PATH]) {
    const summary = 'OTLP/HTTP log export (ExportLogsServiceRequest; GenAI events and other records, stored per project)';
    const doc = { tag: 'otlp', summary, bodyTypes: [...PROTOBUF_TYPES, 'application/json'] } as const;
    app.post(path, { onRequest: authenticate, config: { mapError: otlpError, doc } }, logsHandler);
  }
}

export interface OtelTraceDeps {
  auth: Authenticator;
  /** The OTLP entrance's ingest (its own CallIngest: refusals counted as otlp_http). */
  ingest: OtelIngest;
}

/** The interface's /otel/v1/trace: an OTLP ExportTraceServiceRequest in its JSON mapping, inside a JSON body. */
export async function otelTraceRoutes(app: FastifyInstance, deps: OtelTraceDeps): Promise<void> {
  addRoute(
    app,
    deps.auth,
    'otelTrace',
    async (body, { caller }) => ({
      partial_success: await deps.ingest.ingest(
        { decoded: body.traces },
        { projectId: body.project_id, runId: body.svc_run_id, fieldPrefix: 'traces.', transport: 'trace_endpoint' },
        caller,
      ),
    }),
    { publishes: true, entrance: 'otlp_http' },
  );
}

/**
 * Errors as OTLP/HTTP says: a protobuf request gets a protobuf `google.rpc.Status` (its gRPC
 * code from the HTTP status); a JSON request gets weft's JSON error with the Status members
 * `code` and `message` added, which is Status's JSON mapping too.
 */
function otlpError(e: ApiError, request: FastifyRequest): ApiError {
  const code = grpcCodeForHttpStatus(e.status);
  const message = e.field && !e.reason.startsWith(e.field) ? `${e.field}: ${e.reason}` : e.reason;
  if (PROTOBUF_TYPES.includes(mediaType(request))) {
    return new ApiError(e.status, e.reason, {
      headers: e.headers,
      payload: { contentType: 'application/x-protobuf', data: encodeRpcStatus(code, message) },
    });
  }
  return new ApiError(e.status, e.reason, { field: e.field, headers: e.headers, extra: { ...e.extra, code, message } });
}

/** Stock exporters often carry a token as Bearer; the reference's clients send Basic api:<key>. */
function schemeOf(authorization: string | undefined): AuthScheme {
  return authorization && /^bearer\s/i.test(authorization) ? 'bearer' : 'basic';
}

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function projectHeader(request: FastifyRequest): string | null {
  const raw = request.headers['project_id'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === '') return null;
  const parsed = projectIdSchema.safeParse(value.trim());
  if (!parsed.success) throw badRequest('project_id header: must be <entity>/<project>', 'project_id');
  return parsed.data;
}

/** Undoes Content-Encoding, never producing more than `limit` bytes (a small gzip can expand enormously). */
async function decompress(body: Buffer, encoding: string | string[] | undefined, limit: number): Promise<Buffer> {
  const enc = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase();
  if (enc === '' || enc === 'identity') return body;
  const inflateWith = enc === 'gzip' || enc === 'x-gzip' ? gunzipAsync : enc === 'deflate' ? inflateAsync : null;
  if (!inflateWith) throw new ApiError(415, `unsupported Content-Encoding '${enc}'; send gzip, deflate or identity`);
  try {
    return await inflateWith(body, { maxOutputLength: limit });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw payloadTooLarge(`request body too large after decompression (limit ${limit} bytes)`);
    }
    throw badRequest(`request body: invalid ${enc} data (${(e as Error).message})`);
  }
}
