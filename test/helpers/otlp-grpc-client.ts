import { Client as GrpcClient, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { decodeExportTraceServiceResponse } from '@weft/otlp';

/** What one TraceService/Export call came back with: OK and its partial success, or the gRPC error. */
export type ExportOutcome =
  { ok: true; partial: { rejectedSpans: number; errorMessage: string } | null } | { ok: false; code: number; details: string };

/** A bare gRPC client for `TraceService/Export` (raw protobuf bytes in), for the error paths stock SDKs cannot produce. */
export async function grpcExport(port: number, body: Uint8Array, metadata: Record<string, string>): Promise<ExportOutcome> {
  const client = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  try {
    return await new Promise<ExportOutcome>((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Uint8Array) => Buffer.from(b),
        (b: Buffer) => b,
        body,
        md,
        { deadline: Date.now() + 30_000 },
        (err: ServiceError | null, res?: Buffer) =>
          resolve(
            err
              ? { ok: false, code: err.code, details: err.details }
              : { ok: true, partial: decodeExportTraceServiceResponse(new Uint8Array(res!)) },
          ),
      );
    });
  } finally {
    client.close();
  }
}
