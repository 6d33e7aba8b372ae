import { createRequire } from 'node:module';
import { OtlpRequestError } from './errors';
import type { Loose } from './values';

/**
 * OTLP protobuf through the OpenTelemetry JS project's own generated protobufjs code
 * (`@opentelemetry/otlp-transformer` 0.217, the last release that ships it as
 * `build/src/generated/root`): no decoder of ours. Its published typings only say `Root`,
 * so the two messages used here are typed below.
 */
interface MessageType {
  decode(buf: Uint8Array): Loose;
  encode(msg: Loose): { finish(): Uint8Array };
  fromObject(obj: Loose): Loose;
}
interface GeneratedRoot {
  opentelemetry: {
    proto: {
      collector: { trace: { v1: { ExportTraceServiceRequest: MessageType; ExportTraceServiceResponse: MessageType } } };
    };
  };
}

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root') as GeneratedRoot;
const traceV1 = root.opentelemetry.proto.collector.trace.v1;

/** Decodes an ExportTraceServiceRequest; a malformed body is an OtlpRequestError (→ 400). */
export function decodeExportTraceServiceRequest(body: Uint8Array): Loose {
  // protobufjs reads strings with Node's native UTF-8 decoder only from a Buffer; a plain
  // Uint8Array (what a worker thread receives) goes through its JavaScript decoder, ~3× slower.
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  try {
    return traceV1.ExportTraceServiceRequest.decode(bytes);
  } catch (e) {
    throw new OtlpRequestError(`invalid protobuf ExportTraceServiceRequest: ${(e as Error).message}`, 'body');
  }
}

/** Encodes an ExportTraceServiceResponse (`partial_success` only when something was rejected). */
export function encodeExportTraceServiceResponse(partial: { rejected_spans: number; error_message: string } | null): Uint8Array {
  const msg = partial
    ? traceV1.ExportTraceServiceResponse.fromObject({
        partialSuccess: { rejectedSpans: partial.rejected_spans, errorMessage: partial.error_message },
      })
    : traceV1.ExportTraceServiceResponse.fromObject({});
  return traceV1.ExportTraceServiceResponse.encode(msg).finish();
}

/** For tests and benchmarks: an ExportTraceServiceRequest from its JSON-ish object form. */
export function encodeExportTraceServiceRequest(obj: Loose): Uint8Array {
  return traceV1.ExportTraceServiceRequest.encode(traceV1.ExportTraceServiceRequest.fromObject(obj)).finish();
}

/** For tests: reads an ExportTraceServiceResponse as a client would. */
export function decodeExportTraceServiceResponse(body: Uint8Array): { rejectedSpans: number; errorMessage: string } | null {
  const msg = traceV1.ExportTraceServiceResponse.decode(body) as {
    partialSuccess?: { rejectedSpans?: unknown; errorMessage?: string } | null;
  };
  const p = msg.partialSuccess;
  if (!p) return null;
  return { rejectedSpans: Number(String(p.rejectedSpans ?? 0)), errorMessage: p.errorMessage ?? '' };
}
