import type { OtelLogRecord, OtelLogsQueryReq } from '@weft/api';
import { queryLogRecords } from '@weft/query';
import type { Store } from '@weft/store';

/** A project's stored OTLP log records, newest first (the ingest side: services/gateway otel-logs.ts). */
export async function queryOtelLogs(store: Store, req: OtelLogsQueryReq): Promise<{ logs: OtelLogRecord[] }> {
  const rows = await queryLogRecords(store, {
    projectId: req.project_id,
    traceId: req.trace_id,
    spanId: req.span_id,
    eventName: req.event_name,
    limit: req.limit,
    offset: req.offset,
  });
  return {
    logs: rows.map((r) => ({
      time: isoOf(r.time),
      observed_time: isoOf(r.observed_time),
      trace_id: r.trace_id,
      span_id: r.span_id,
      severity_number: Number(r.severity_number),
      severity_text: r.severity_text,
      event_name: r.event_name,
      body: JSON.parse(r.body_dump),
      body_truncated: Number(r.body_truncated) === 1,
      attributes: JSON.parse(r.attributes_dump),
      resource: JSON.parse(r.resource_dump),
      scope: { name: r.scope_name, version: r.scope_version },
    })),
  };
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss.ffffff` (UTC) as ISO 8601. */
const isoOf = (t: string) => `${t.replace(' ', 'T')}Z`;
