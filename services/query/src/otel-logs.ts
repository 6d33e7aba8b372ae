import type { OtelLogRecord, OtelLogsQueryReq } from '@weft/api';
import type { LogRecordRow } from '@weft/otlp';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';

/** A stored record as read back: the row libs/otlp writes, less its project. */
type LogRow = Omit<LogRecordRow, 'project_id'>;

/** A project's stored OTLP log records, newest first (the ingest side: services/gateway otel-logs.ts). */
export async function queryOtelLogs(store: Store, req: OtelLogsQueryReq): Promise<{ logs: OtelLogRecord[] }> {
  const p = new Params();
  const where = [`project_id = ${p.str(req.project_id)}`];
  if (req.trace_id) where.push(`trace_id = ${p.str(req.trace_id)}`);
  if (req.span_id) where.push(`span_id = ${p.str(req.span_id)}`);
  if (req.event_name) where.push(`event_name = ${p.str(req.event_name)}`);
  const rows = await store.rows<LogRow>(
    `SELECT time, observed_time, trace_id, span_id, severity_number, severity_text, event_name, body_dump,
        body_truncated, attributes_dump, resource_dump, scope_name, scope_version
      FROM otel_logs WHERE ${where.join(' AND ')}
      ORDER BY time DESC LIMIT ${Number(req.limit)} OFFSET ${Number(req.offset)}`,
    p.values,
    { name: 'otel-logs.queryOtelLogs' },
  );
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
