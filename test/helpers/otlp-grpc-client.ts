import { Client as GrpcClient, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { decodeExportLogsServiceResponse, decodeExportTraceServiceResponse } from '@weft/otlp';

/** What one `Export` call came back with: OK and its partial success (rejected spans or log records), or the gRPC error. */
export type ExportOutcome =
  { ok: true; partial: { rejectedSpans: number; errorMessage: string } | null } | { ok: false; code: number; details: string };
export type LogsExportOutcome =
  { ok: true; partial: { rejectedLogRecords: number; errorMessage: string } | null } | { ok: false; code: number; details: string };

/** A bare gRPC client for `TraceService/Export` (raw protobuf bytes in), for the error paths stock SDKs cannot produce. */
export function grpcExport(port: number, body: Uint8Array, metadata: Record<string, string>): Promise<ExportOutcome> {
  return unaryExport(port, '/opentelemetry.proto.collector.trace.v1.TraceService/Export', body, metadata, decodeExportTraceServiceResponse);
}

/** The same for `LogsService/Export`. */
export function grpcExportLogs(port: number, body: Uint8Array, metadata: Record<string, string>): Promise<LogsExportOutcome> {
  return unaryExport(port, '/opentelemetry.proto.collector.logs.v1.LogsService/Export', body, metadata, decodeExportLogsServiceResponse);
}

async function unaryExport<Partial>(
  port: number,
  path: string,
  body: Uint8Array,
  metadata: Record<string, string>,
  decode: (b: Uint8Array) => Partial,
): Promise<{ ok: true; partial: Partial } | { ok: false; code: number; details: string }> {
  const client = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  try {
    return await new Promise((resolve) => {
      client.makeUnaryRequest(
        path,
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        body,
        md,
        { deadline: Date.now() + 30_000 },
        (err: ServiceError | null, res?: Buffer) =>
          resolve(err ? { ok: false, code: err.code, details: err.details } : { ok: true, partial: decode(new Uint8Array(res!)) }),
      );
    });
  } finally {
    client.close();
  }
}
