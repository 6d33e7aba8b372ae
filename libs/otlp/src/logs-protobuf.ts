import { createRequire } from 'node:module';
import { OtlpRequestError } from './errors';
import type { Loose } from './values';

/**
 * OTLP logs protobuf. The generated code weft decodes traces with ships no logs messages, so
 * they are declared here (opentelemetry/proto/logs/v1 and collector/logs/v1, with the common
 * and resource messages they use) and read by the same protobufjs that code runs on.
 */
const require = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/otlp-transformer'));
const protobuf = require('protobufjs') as {
  Root: { fromJSON(json: unknown): { lookupType(name: string): MessageType } };
};

interface MessageType {
  decode(buf: Uint8Array): Loose;
  toObject(msg: Loose, opts: { longs: StringConstructor }): Loose;
  encode(msg: Loose): { finish(): Uint8Array };
  fromObject(obj: Loose): Loose;
}

const f = (type: string, id: number, rule?: 'repeated') => (rule ? { type, id, rule } : { type, id });
const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
          fields: {
            stringValue: f('string', 1),
            boolValue: f('bool', 2),
            intValue: f('int64', 3),
            doubleValue: f('double', 4),
            arrayValue: f('ArrayValue', 5),
            kvlistValue: f('KeyValueList', 6),
            bytesValue: f('bytes', 7),
          },
        },
        ArrayValue: { fields: { values: f('AnyValue', 1, 'repeated') } },
        KeyValueList: { fields: { values: f('KeyValue', 1, 'repeated') } },
        KeyValue: { fields: { key: f('string', 1), value: f('AnyValue', 2) } },
        InstrumentationScope: {
          fields: {
            name: f('string', 1),
            version: f('string', 2),
            attributes: f('KeyValue', 3, 'repeated'),
            droppedAttributesCount: f('uint32', 4),
          },
        },
        Resource: { fields: { attributes: f('KeyValue', 1, 'repeated'), droppedAttributesCount: f('uint32', 2) } },
        LogRecord: {
          fields: {
            timeUnixNano: f('fixed64', 1),
            observedTimeUnixNano: f('fixed64', 11),
            severityNumber: f('int32', 2),
            severityText: f('string', 3),
            body: f('AnyValue', 5),
            attributes: f('KeyValue', 6, 'repeated'),
            droppedAttributesCount: f('uint32', 7),
            flags: f('fixed32', 8),
            traceId: f('bytes', 9),
            spanId: f('bytes', 10),
            eventName: f('string', 12),
          },
        },
        ScopeLogs: {
          fields: { scope: f('InstrumentationScope', 1), logRecords: f('LogRecord', 2, 'repeated'), schemaUrl: f('string', 3) },
        },
        ResourceLogs: { fields: { resource: f('Resource', 1), scopeLogs: f('ScopeLogs', 2, 'repeated'), schemaUrl: f('string', 3) } },
        ExportLogsServiceRequest: { fields: { resourceLogs: f('ResourceLogs', 1, 'repeated') } },
        ExportLogsPartialSuccess: { fields: { rejectedLogRecords: f('int64', 1), errorMessage: f('string', 2) } },
        ExportLogsServiceResponse: { fields: { partialSuccess: f('ExportLogsPartialSuccess', 1) } },
      },
    },
  },
});
const Request = root.lookupType('otlp.ExportLogsServiceRequest');
const Response = root.lookupType('otlp.ExportLogsServiceResponse');

/** Decodes an ExportLogsServiceRequest; a malformed body is an OtlpRequestError (→ 400). */
export function decodeExportLogsServiceRequest(body: Uint8Array): Loose {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  try {
    // As a plain object: reflected messages carry unset members as prototype defaults ('' for
    // every string of a oneof), which would read as values; int64 as decimal strings.
    return Request.toObject(Request.decode(bytes), { longs: String });
  } catch (e) {
    throw new OtlpRequestError(`invalid protobuf ExportLogsServiceRequest: ${(e as Error).message}`, 'body');
  }
}

/** Encodes an ExportLogsServiceResponse (`partial_success` only when something was rejected). */
export function encodeExportLogsServiceResponse(partial: { rejected_log_records: number; error_message: string } | null): Uint8Array {
  const msg = Response.fromObject(
    partial ? { partialSuccess: { rejectedLogRecords: partial.rejected_log_records, errorMessage: partial.error_message } } : {},
  );
  return Response.encode(msg).finish();
}

/** For tests: an ExportLogsServiceRequest from its object form. */
export function encodeExportLogsServiceRequest(obj: Loose): Uint8Array {
  return Request.encode(Request.fromObject(obj)).finish();
}

/** For tests: reads an ExportLogsServiceResponse as a client would. */
export function decodeExportLogsServiceResponse(body: Uint8Array): { rejectedLogRecords: number; errorMessage: string } | null {
  const msg = Response.decode(body) as { partialSuccess?: { rejectedLogRecords?: unknown; errorMessage?: string } | null };
  const p = msg.partialSuccess;
  if (!p) return null;
  return { rejectedLogRecords: Number(String(p.rejectedLogRecords ?? 0)), errorMessage: p.errorMessage ?? '' };
}
