import { badRequest, forbidden, metrics, nowMicros, type Caller, type Logger } from '@weft/core';
import {
  convertExportLogsRequest,
  decodeExportLogsServiceRequest,
  logsPartialSuccessOf,
  OtlpRequestError,
  parseOtlpJson,
  type LogsPartialSuccess,
} from '@weft/otlp';
import { insertLogRecords } from '@weft/query';
import type { Store } from '@weft/store';
import type { OtlpPayload } from '@weft/ingest';

export type OtlpLogsTransport = 'http' | 'grpc';

const MAX_LOGGED_REJECTIONS = 20;

/**
 * OTLP log records into `otel_logs`, per project: decoded, converted (libs/otlp logs.ts), the
 * caller's access checked against every project they land in, and inserted before the answer,
 * so an acknowledged record is stored. A malformed record is refused alone: reported in
 * partial_success, logged at warn and counted in `weft_otlp_log_records_rejected_total{reason}`.
 */
export class OtelLogsIngest {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  async ingest(
    payload: OtlpPayload,
    opts: { projectId: string | null; transport: OtlpLogsTransport },
    caller: Caller,
  ): Promise<LogsPartialSuccess | null> {
    const { transport } = opts;
    let request: unknown;
    if ('protobuf' in payload) {
      try {
        request = decodeExportLogsServiceRequest(payload.protobuf);
      } catch (e) {
        if (e instanceof OtlpRequestError) throw badRequest(e.message, e.field);
        throw e;
      }
    } else if ('json' in payload) {
      try {
        request = parseOtlpJson(payload.json);
      } catch (e) {
        throw badRequest(`request body: invalid JSON (${(e as Error).message})`);
      }
    } else request = payload.decoded;

    let conversion;
    try {
      conversion = convertExportLogsRequest(request, { projectId: opts.projectId, acceptedAtMicros: nowMicros() });
    } catch (e) {
      if (!(e instanceof OtlpRequestError)) throw e;
      this.log.warn(
        {
          project: opts.projectId,
          reason: e.field === 'project_id' ? 'no_project' : 'invalid_request',
          error: e.message,
          key: caller.keyId,
          transport,
        },
        'OTLP logs request refused',
      );
      throw badRequest(e.message, e.field);
    }
    const projects = new Set(conversion.rows.map((r) => r.project_id));
    if (!caller.isAdmin) {
      for (const project of projects) {
        if (!caller.entities.includes(project.slice(0, project.indexOf('/')))) {
          this.log.warn({ project, reason: 'forbidden', key: caller.keyId, transport }, 'OTLP logs request refused');
          throw forbidden(`no access to project ${project}`);
        }
      }
    }
    if (conversion.rows.length > 0) await insertLogRecords(this.store, conversion.rows);
    metrics.otlpLogRecordsAccepted.inc({ transport }, conversion.rows.length);
    for (const r of conversion.rejections) metrics.otlpLogRecordsRejected.inc({ reason: r.reason, transport });
    for (const r of conversion.rejections.slice(0, MAX_LOGGED_REJECTIONS)) {
      this.log.warn(
        { project: r.project, traceId: r.traceId, spanId: r.spanId, reason: r.reason, error: r.message, key: caller.keyId, transport },
        'OTLP log record rejected',
      );
    }
    return logsPartialSuccessOf(conversion);
  }
}
