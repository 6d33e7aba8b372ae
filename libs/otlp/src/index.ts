/**
 * OTLP traces → calls. Decode (protobuf via the OpenTelemetry JS generated code, or the
 * OTLP/JSON mapping), convert each span into the start and end of a call as the reference
 * does, and report the spans that could not be converted.
 */
export { convertExportRequest, convertSpan, partialSuccessOf, shortenOpName } from './convert';
export type { ConvertOptions, ExportConversion, OtelCall, PartialSuccess, SpanRejection } from './convert';
export {
  decodeExportTraceServiceRequest,
  decodeExportTraceServiceResponse,
  encodeExportTraceServiceRequest,
  encodeExportTraceServiceResponse,
} from './protobuf';
export { parseOtlpJson } from './json';
export { OtlpRequestError, SpanConversionError } from './errors';
export { expandAttributes, getPath } from './attributes';
export { INPUT_KEYS, OUTPUT_KEYS, USAGE_KEYS, ATTRIBUTE_KEYS, THREAD_KEYS } from './semconv';
export { decodeRpcStatus, encodeRpcStatus, GrpcCode, grpcCodeForHttpStatus } from './status';
export {
  decodeExportLogsServiceRequest,
  decodeExportLogsServiceResponse,
  encodeExportLogsServiceRequest,
  encodeExportLogsServiceResponse,
} from './logs-protobuf';
export { convertExportLogsRequest, conversationFromEvents, logsPartialSuccessOf, GENAI_MESSAGE_EVENTS, MAX_LOG_BODY_CHARS } from './logs';
export type { LogRecordRow, LogRejection, LogsConversion, LogsPartialSuccess } from './logs';
export { isResponsesInput, isResponsesResponse, responsesChoices, responsesMessages } from './responses-items';
