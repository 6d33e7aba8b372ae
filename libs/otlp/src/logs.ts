import { microsToClickHouse } from '@weft/core';
import { expandAttributes } from './attributes';
import { OtlpRequestError, SpanConversionError } from './errors';
import { idForMessage, optionalSpanIdHex, optionalTraceIdHex } from './ids';
import { inputMessages, messageFromGenAiEvent, outputChoices, type ChatChoice, type ChatMessage } from './messages';
import { toBigInt, unixNanosToMicros } from './time';
import { anyValueToJson, isObject, keyValuesToRecord, member } from './values';

/** One stored log record: a row of `otel_logs`. */
export interface LogRecordRow {
  project_id: string;
  time: string;
  observed_time: string;
  trace_id: string | null;
  span_id: string | null;
  severity_number: number;
  severity_text: string;
  event_name: string;
  body_dump: string;
  /** 1 when the body was over MAX_BODY_CHARS and is stored cut (the marker readers see). */
  body_truncated: number;
  attributes_dump: string;
  resource_dump: string;
  scope_name: string;
  scope_version: string;
}

export interface LogRejection {
  project: string | null;
  traceId: string;
  spanId: string;
  reason: string;
  message: string;
}

export interface LogsConversion {
  rows: LogRecordRow[];
  rejectedLogRecords: number;
  errors: string[];
  rejections: LogRejection[];
}

export interface LogsPartialSuccess {
  rejected_log_records: number;
  error_message: string;
}

/** A body longer than this (as JSON) is stored cut, with body_truncated = 1. */
export const MAX_LOG_BODY_CHARS = 1_000_000;
const MAX_MESSAGES = 20;

/**
 * An OTLP ExportLogsServiceRequest (protobuf-decoded or OTLP/JSON) → rows. A record that cannot
 * be stored (not an object, malformed ids or times) is rejected alone and reported; throws
 * OtlpRequestError only for a request unusable as a whole (or with no project at all).
 */
export function convertExportLogsRequest(req: unknown, opts: { projectId: string | null; acceptedAtMicros: number }): LogsConversion {
  if (!isObject(req)) throw new OtlpRequestError('logs must be an ExportLogsServiceRequest object', 'logs');
  const resourceLogs = member(req, 'resourceLogs', 'resource_logs') ?? [];
  if (!Array.isArray(resourceLogs)) throw new OtlpRequestError('resourceLogs must be a list', 'resourceLogs');
  const out: LogsConversion = { rows: [], rejectedLogRecords: 0, errors: [], rejections: [] };
  let projectless = 0;
  const reject = (record: unknown, project: string | null, reason: string, message: string) => {
    const r = isObject(record) ? record : {};
    const traceId = idForMessage(member(r, 'traceId', 'trace_id'));
    const spanId = idForMessage(member(r, 'spanId', 'span_id'));
    out.rejectedLogRecords++;
    out.errors.push(`Rejected log record (trace_id='${traceId}' span_id='${spanId}'): ${message}`);
    out.rejections.push({ project, traceId, spanId, reason, message });
  };
  resourceLogs.forEach((rl, i) => {
    if (!isObject(rl)) throw new OtlpRequestError('each resourceLogs entry must be an object', `resourceLogs.${i}`);
    const resource = isObject(rl.resource) ? rl.resource : {};
    const resourceAttributes = keyValuesToRecord(resource.attributes);
    const project = opts.projectId ?? projectFromResource(resourceAttributes);
    const resourceDump = JSON.stringify(resourceAttributes);
    const scopeLogs = member(rl, 'scopeLogs', 'scope_logs') ?? [];
    if (!Array.isArray(scopeLogs)) throw new OtlpRequestError('scopeLogs must be a list', `resourceLogs.${i}.scopeLogs`);
    scopeLogs.forEach((sl, j) => {
      if (!isObject(sl)) throw new OtlpRequestError('each scopeLogs entry must be an object', `resourceLogs.${i}.scopeLogs.${j}`);
      const scope = isObject(sl.scope) ? sl.scope : {};
      const records = member(sl, 'logRecords', 'log_records') ?? [];
      if (!Array.isArray(records)) throw new OtlpRequestError('logRecords must be a list', `resourceLogs.${i}.scopeLogs.${j}.logRecords`);
      for (const record of records) {
        if (project === null) {
          projectless++;
          reject(
            record,
            null,
            'no_project',
            'no project: send the project_id header or the resource attributes wandb.entity and wandb.project',
          );
          continue;
        }
        try {
          out.rows.push(convertLogRecord(record, project, resourceDump, scope, opts.acceptedAtMicros));
        } catch (e) {
          if (e instanceof SpanConversionError)
            reject(record, project, e.reason === 'invalid_span' ? 'invalid_log_record' : e.reason, e.message);
          else throw e;
        }
      }
    });
  });
  if (projectless > 0 && out.rows.length === 0 && projectless === out.rejectedLogRecords) {
    throw new OtlpRequestError(
      'no project: send the project_id header (<entity>/<project>) or the resource attributes wandb.entity and wandb.project',
      'project_id',
    );
  }
  return out;
}

export function logsPartialSuccessOf(c: Pick<LogsConversion, 'rejectedLogRecords' | 'errors'>): LogsPartialSuccess | null {
  if (c.rejectedLogRecords === 0) return null;
  let error_message = c.errors.slice(0, MAX_MESSAGES).join('; ');
  if (c.errors.length > MAX_MESSAGES) error_message += '; ...';
  return { rejected_log_records: c.rejectedLogRecords, error_message };
}

function projectFromResource(attrs: Record<string, unknown>): string | null {
  const entity = attrs['wandb.entity'];
  const project = attrs['wandb.project'];
  return typeof entity === 'string' && typeof project === 'string' && /^[^/\s]+\/[^/\s]+$/.test(`${entity}/${project}`)
    ? `${entity}/${project}`
    : null;
}

/** A time that may be absent (0 or unset: OTLP's "unknown"); malformed is an error. */
function optionalMicros(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  const n = toBigInt(v);
  if (n === 0n) return null;
  return unixNanosToMicros(v, field);
}

function convertLogRecord(
  record: unknown,
  project: string,
  resourceDump: string,
  scope: Record<string, unknown>,
  acceptedAtMicros: number,
): LogRecordRow {
  if (!isObject(record)) throw new SpanConversionError('log record is not an object', 'invalid_log_record');
  const traceId = optionalTraceIdHex(member(record, 'traceId', 'trace_id'));
  const spanId = optionalSpanIdHex(member(record, 'spanId', 'span_id'));
  const observed = optionalMicros(member(record, 'observedTimeUnixNano', 'observed_time_unix_nano'), 'observed_time_unix_nano');
  const time = optionalMicros(member(record, 'timeUnixNano', 'time_unix_nano'), 'time_unix_nano') ?? observed ?? acceptedAtMicros;
  const attributes = keyValuesToRecord(record.attributes);
  const severity = Number(member(record, 'severityNumber', 'severity_number') ?? 0);
  const bodyValue = isObject(record.body) ? anyValueToJson(record.body) : null;
  let body = JSON.stringify(bodyValue ?? null);
  let truncated = 0;
  if (body.length > MAX_LOG_BODY_CHARS) {
    body = JSON.stringify(body.slice(0, MAX_LOG_BODY_CHARS));
    truncated = 1;
  }
  const eventName = member(record, 'eventName', 'event_name');
  return {
    project_id: project,
    time: microsToClickHouse(time),
    observed_time: microsToClickHouse(observed ?? acceptedAtMicros),
    trace_id: traceId,
    span_id: spanId,
    severity_number: Number.isInteger(severity) && severity >= 0 && severity <= 255 ? severity : 0,
    severity_text:
      typeof record.severityText === 'string' ? record.severityText : typeof record.severity_text === 'string' ? record.severity_text : '',
    // Older SDKs name the event in the `event.name` attribute.
    event_name:
      typeof eventName === 'string' && eventName !== ''
        ? eventName
        : typeof attributes['event.name'] === 'string'
          ? attributes['event.name']
          : '',
    body_dump: body,
    body_truncated: truncated,
    attributes_dump: JSON.stringify(attributes),
    resource_dump: resourceDump,
    scope_name: typeof scope.name === 'string' ? scope.name : '',
    scope_version: typeof scope.version === 'string' ? scope.version : '',
  };
}

/** The GenAI events that carry a call's conversation (semconv events, and util-genai's one-record form). */
export const GENAI_MESSAGE_EVENTS = new Set([
  'gen_ai.system.message',
  'gen_ai.user.message',
  'gen_ai.assistant.message',
  'gen_ai.tool.message',
  'gen_ai.choice',
  'gen_ai.client.inference.operation.details',
]);

/**
 * A span's conversation from its GenAI event records, in time order: input messages and output
 * choices as OpenAI chat (the reading spans get, messages.ts). Null when the records carry none.
 */
export function conversationFromEvents(
  records: Pick<LogRecordRow, 'event_name' | 'body_dump' | 'attributes_dump'>[],
): { messages: ChatMessage[] | null; choices: ChatChoice[] | null } | null {
  const messages: ChatMessage[] = [];
  const choices: ChatChoice[] = [];
  let details: { messages: ChatMessage[] | null; choices: ChatChoice[] | null } | null = null;
  for (const r of records) {
    if (!GENAI_MESSAGE_EVENTS.has(r.event_name)) continue;
    if (r.event_name === 'gen_ai.client.inference.operation.details') {
      const tree = expandAttributes(JSON.parse(r.attributes_dump) as Record<string, unknown>);
      details = { messages: inputMessages(tree), choices: outputChoices(tree) };
      continue;
    }
    const m = messageFromGenAiEvent(r.event_name, JSON.parse(r.body_dump));
    if (m?.input) messages.push(m.input);
    if (m?.choice) choices.push(m.choice);
  }
  if (details) return details;
  if (messages.length === 0 && choices.length === 0) return null;
  return { messages: messages.length ? messages : null, choices: choices.length ? choices : null };
}
