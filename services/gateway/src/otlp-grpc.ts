import {
  Server,
  ServerCredentials,
  setLogger as setGrpcLogger,
  type Metadata,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceError,
} from '@grpc/grpc-js';
import { projectId as projectIdSchema } from '@weft/api';
import type { Bus } from '@weft/bus';
import { badRequest, delivery, deliveryProjectOf, StartupError, type ApiError, type Config, type Logger } from '@weft/core';
import { refusalReason, toApiError, type Authenticator, type KeyRateLimiter } from '@weft/http';
import {
  encodeExportLogsServiceResponse,
  encodeExportTraceServiceResponse,
  grpcCodeForHttpStatus,
  type LogsPartialSuccess,
  type PartialSuccess,
} from '@weft/otlp';
import { CallIngest, convertersFor, type CallPartEnvelope, type IngestSettings, type IngestWorkers } from '@weft/ingest';
import type { Store } from '@weft/store';
import { OtelIngest } from './otel';
import { OtelLogsIngest } from './otel-logs';

/**
 * The OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export`, the
 * default protocol of most OpenTelemetry SDKs and of the Collector, and
 * `opentelemetry.proto.collector.logs.v1.LogsService/Export` (GenAI events and other records,
 * stored as OTLP/HTTP's logs are). @grpc/grpc-js serves it;
 * messages are encoded and decoded with the same OpenTelemetry-generated protobuf code as
 * OTLP/HTTP (no .proto files to load, one codec for both entrances). Same auth (metadata
 * `authorization`, Basic or Bearer), project rule (`project_id` metadata or resource
 * attributes), per-key rate limit, size limit and durability (an OK answer means the calls
 * are stored / acknowledged by Kafka) as OTLP/HTTP.
 */
export interface OtlpGrpcOptions {
  ingest: OtelIngest;
  logs: OtelLogsIngest;
  auth: Authenticator;
  rateLimit: KeyRateLimiter;
  log: Logger;
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Largest message accepted, after decompression (gzip/deflate). */
  maxMessageBytes: number;
}

export interface OtlpGrpcReceiver {
  port: number;
  /** Stops taking calls; calls in progress finish (bounded wait), then the server stops. */
  close(): Promise<void>;
}

/** A unary `Export` method whose request stays bytes until the handler decodes it, so a malformed one is an INVALID_ARGUMENT naming the problem. */
function exportService<Answer>(path: string, encode: (answer: Answer) => Uint8Array) {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (answer: Answer) => Buffer.from(encode(answer)),
      responseDeserialize: (b: Buffer) => b,
    },
  };
}

const traceService = exportService<PartialSuccess | null>(
  '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  encodeExportTraceServiceResponse,
);
const logsService = exportService<LogsPartialSuccess | null>(
  '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  encodeExportLogsServiceResponse,
);

/** The service's implementation: `run` answers one request, its failures become gRPC statuses. */
function unary<Answer>(
  log: Logger,
  run: (call: ServerUnaryCall<Buffer, Answer>) => Promise<Answer>,
  refused?: (e: unknown, call: ServerUnaryCall<Buffer, Answer>) => void,
) {
  return {
    Export: (call: ServerUnaryCall<Buffer, Answer>, callback: sendUnaryData<Answer>) => {
      run(call).then(
        (answer) => callback(null, answer),
        (e) => {
          refused?.(e, call);
          callback(grpcError(e, log));
        },
      );
    },
  };
}

export async function startOtlpGrpc(opts: OtlpGrpcOptions): Promise<OtlpGrpcReceiver> {
  setGrpcLogger(grpcLogger(opts.log));
  const server = new Server({
    'grpc.max_receive_message_length': opts.maxMessageBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  server.addService(
    traceService,
    unary(
      opts.log,
      async (call) => {
        const { caller, projectId } = await admit(call, opts);
        return opts.ingest.ingest({ protobuf: call.request }, { projectId, transport: 'grpc' }, caller);
      },
      // A refused export of spans counts in the project's delivery (delivery-counts.ts does it for HTTP).
      (e, call) => {
        const api = toApiError(e);
        const project = deliveryProjectOf(e) ?? metadataValue(call.metadata, 'project_id') ?? null;
        delivery.refused(project || null, 'otlp_grpc', refusalReason(api.status, api.label));
      },
    ),
  );
  server.addService(
    logsService,
    unary(opts.log, async (call) => {
      const { caller, projectId } = await admit(call, opts);
      return opts.logs.ingest({ protobuf: call.request }, { projectId, transport: 'grpc' }, caller);
    }),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`,
      ServerCredentials.createInsecure(),
      (err, bound) => (err ? reject(new Error(bindFailure(opts.host, opts.port, err.message))) : resolve(bound)),
    ),
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/**
 * grpc-js's own log lines (written raw to stderr by default) as weft's JSON lines. Its bind
 * failure summary is dropped: the receiver reports that failure itself, naming the variable.
 */
function grpcLogger(log: Logger): Partial<Console> {
  const line = (args: unknown[]) => args.map(String).join(' ');
  return {
    error: (...args: unknown[]) => {
      const message = line(args);
      if (message.startsWith('No address added')) log.debug({ grpc: message }, 'grpc-js');
      else log.warn({ grpc: message }, 'grpc-js');
    },
    info: (...args: unknown[]) => log.info({ grpc: line(args) }, 'grpc-js'),
    debug: (...args: unknown[]) => log.debug({ grpc: line(args) }, 'grpc-js'),
  };
}

/** Why the receiver could not listen, in words (grpc-js wraps the socket's error in a list). */
function bindFailure(host: string, port: number, message: string): string {
  if (message.includes('EADDRINUSE')) return `port ${port} is already in use (on ${host})`;
  if (message.includes('EACCES')) return `no permission to listen on port ${port} (on ${host})`;
  return `cannot listen on ${host}:${port}: ${message}`;
}

/** The standard OTLP/gRPC port, used when WEFT_OTLP_GRPC_PORT is unset and it is free. */
export const OTLP_GRPC_DEFAULT_PORT = 4317;

/**
 * The receiver as the configuration says (`WEFT_OTLP_GRPC_PORT`, on HOST, the body limit as
 * message limit), or null when it is `off`. Unset, the standard port is taken only if free:
 * another OTLP receiver holding it is common on a developer's machine, and OTLP/HTTP still
 * works, so weft starts without gRPC and says so in one line. Set, failing to bind stops the start.
 */
export async function otlpGrpcFromConfig(
  config: Config,
  deps: {
    bus: Bus<CallPartEnvelope>;
    store: Store;
    auth: Authenticator;
    rateLimit: KeyRateLimiter;
    log: Logger;
    workers?: IngestWorkers | null;
    settings: IngestSettings;
  },
): Promise<OtlpGrpcReceiver | null> {
  const configured = config.WEFT_OTLP_GRPC_PORT;
  if (configured === 'off') return null;
  const port = configured ?? OTLP_GRPC_DEFAULT_PORT;
  let receiver: OtlpGrpcReceiver;
  try {
    receiver = await startOtlpGrpc({
      ingest: new OtelIngest(
        new CallIngest(deps.bus, { maxValueBytes: config.WEFT_MAX_VALUE_BYTES, entrance: 'otlp_grpc', settings: deps.settings }),
        deps.log,
        convertersFor(deps.workers).spans,
      ),
      logs: new OtelLogsIngest(deps.store, deps.log),
      auth: deps.auth,
      rateLimit: deps.rateLimit,
      log: deps.log,
      host: config.HOST,
      port,
      maxMessageBytes: config.WEFT_BODY_LIMIT_BYTES,
    });
  } catch (e) {
    const why = (e as Error).message;
    if (configured !== undefined) {
      throw new StartupError(`WEFT_OTLP_GRPC_PORT=${configured}: the OTLP/gRPC ${why}. Choose a free port, 0 (any free port) or off`);
    }
    deps.log.warn(
      { otlpGrpcPort: port, reason: why },
      `OTLP/gRPC receiver not started: ${why}; OTLP/HTTP works as before. Set WEFT_OTLP_GRPC_PORT to a free port (or off) to choose`,
    );
    return null;
  }
  deps.log.info({ otlpGrpcPort: receiver.port }, 'OTLP/gRPC listening');
  return receiver;
}

/** The caller (metadata `authorization`, within its rate limit) and the `project_id` metadata, if given. */
async function admit(call: ServerUnaryCall<Buffer, unknown>, opts: OtlpGrpcOptions) {
  const authorization = metadataValue(call.metadata, 'authorization');
  const caller = await opts.auth.authenticate(authorization, authorization && /^bearer\s/i.test(authorization) ? 'bearer' : 'basic');
  await opts.rateLimit.check(caller);
  const project = metadataValue(call.metadata, 'project_id');
  let projectId: string | null = null;
  if (project !== undefined && project !== '') {
    const parsed = projectIdSchema.safeParse(project.trim());
    if (!parsed.success) throw badRequest('project_id metadata: must be <entity>/<project>', 'project_id');
    projectId = parsed.data;
  }
  return { caller, projectId };
}

function metadataValue(md: Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : typeof v === 'string' ? v : v.toString('utf8');
}

/** Every failure as a gRPC status, mapped from the one ApiError mapping (401 → UNAUTHENTICATED, 503 → UNAVAILABLE, ...). */
function grpcError(e: unknown, log: Logger): Partial<ServiceError> {
  const api: ApiError = toApiError(e);
  if (api.status >= 500 && api.status !== 503) log.error({ err: e }, 'OTLP/gRPC export failed');
  const details = api.field && !api.reason.startsWith(api.field) ? `${api.field}: ${api.reason}` : api.reason;
  return { code: grpcCodeForHttpStatus(api.status), details };
}
