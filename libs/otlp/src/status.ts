import protobuf from 'protobufjs';

/**
 * `google.rpc.Status`, the error body OTLP/HTTP wants for protobuf requests (and the detail
 * of a gRPC error): `code` (a gRPC status code) and `message`. Built with protobufjs, whose
 * generated OTLP code we use elsewhere; `details` is never sent, so it is not declared.
 */
const root = new protobuf.Root();
const Status = new protobuf.Type('Status').add(new protobuf.Field('code', 1, 'int32')).add(new protobuf.Field('message', 2, 'string'));
root.define('google.rpc').add(Status);

export function encodeRpcStatus(code: number, message: string): Uint8Array {
  return Status.encode(Status.create({ code, message })).finish();
}

/** For tests: reads a Status as an exporter would. */
export function decodeRpcStatus(body: Uint8Array): { code: number; message: string } {
  const s = Status.decode(body) as unknown as { code?: number; message?: string };
  return { code: s.code ?? 0, message: s.message ?? '' };
}

/** The gRPC status codes used here (grpc/status.proto). */
export const GrpcCode = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/**
 * The gRPC code for an HTTP status, as the OTLP exporters read them: 429 and 503 are the
 * retryable ones (RESOURCE_EXHAUSTED, UNAVAILABLE); a bad or too large request is
 * INVALID_ARGUMENT, never retried.
 */
export function grpcCodeForHttpStatus(status: number): number {
  switch (status) {
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.NOT_FOUND;
    case 409:
      return GrpcCode.ALREADY_EXISTS;
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case 501:
      return GrpcCode.UNIMPLEMENTED;
    case 503:
      return GrpcCode.UNAVAILABLE;
    case 504:
      return GrpcCode.DEADLINE_EXCEEDED;
  }
  return status >= 500 ? GrpcCode.INTERNAL : GrpcCode.INVALID_ARGUMENT;
}
