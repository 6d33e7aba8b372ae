import type { LogRecordRow } from '@weft/otlp';
import type { Store } from '@weft/store';
import { Params } from '../params';

/**
 * The OTLP log records' statements (otel_logs): stored as the gateway converts them (libs/otlp
 * logs.ts), read back by /otel/logs/query and as GenAI events that fill calls' conversations.
 */

/** A stored record as read back: the row libs/otlp writes, less its project. */
export type StoredLogRecord = Omit<LogRecordRow, 'project_id'>;

/** A GenAI event as a call's conversation is rebuilt from it. */
export interface LogEventRow {
  trace_id: string | null;
  span_id: string;
  event_name: string;
  body_dump: string;
  attributes_dump: string;
}

/** Stores converted log records (one INSERT). */
export async function insertLogRecords(store: Store, rows: readonly LogRecordRow[]): Promise<void> {
  await store.insertRows('otel_logs', rows, { name: 'otel-logs.ingest' });
}

/** A project's records, newest first, narrowed by the ids and event name given. */
export async function queryLogRecords(
  store: Store,
  q: { projectId: string; traceId?: string; spanId?: string; eventName?: string; limit: number; offset: number },
): Promise<StoredLogRecord[]> {
  const p = new Params();
  const where = [`project_id = ${p.str(q.projectId)}`];
  if (q.traceId) where.push(`trace_id = ${p.str(q.traceId)}`);
  if (q.spanId) where.push(`span_id = ${p.str(q.spanId)}`);
  if (q.eventName) where.push(`event_name = ${p.str(q.eventName)}`);
  return store.rows<StoredLogRecord>(
    `SELECT time, observed_time, trace_id, span_id, severity_number, severity_text, event_name, body_dump,
        body_truncated, attributes_dump, resource_dump, scope_name, scope_version
      FROM otel_logs WHERE ${where.join(' AND ')}
      ORDER BY time DESC LIMIT ${Number(q.limit)} OFFSET ${Number(q.offset)}`,
    p.values,
    { name: 'otel-logs.queryOtelLogs' },
  );
}

/** Whether the project has any event named in `events` on a span. One indexed `LIMIT 1` read. */
export async function projectHasSpanEvents(store: Store, projectId: string, events: readonly string[]): Promise<boolean> {
  const p = new Params();
  const hit = await store.row(
    `SELECT 1 FROM otel_logs WHERE project_id = ${p.str(projectId)} AND event_name IN ${p.strArray(events)}
      AND span_id IS NOT NULL LIMIT 1`,
    p.values,
    { name: 'genai-events.projectHasGenAiEvents' },
  );
  return hit !== undefined;
}

/** The events named in `events` of the given spans, oldest first. */
export async function spanEvents(store: Store, projectId: string, spanIds: string[], events: readonly string[]): Promise<LogEventRow[]> {
  const p = new Params();
  return store.rows<LogEventRow>(
    `SELECT trace_id, span_id, event_name, body_dump, attributes_dump FROM otel_logs
      WHERE project_id = ${p.str(projectId)} AND span_id IN ${p.strArray(spanIds)}
        AND event_name IN ${p.strArray(events)}
      ORDER BY time`,
    p.values,
    { name: 'genai-events.fillFromGenAiEvents' },
  );
}
