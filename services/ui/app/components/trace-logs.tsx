import { post } from '../api';
import { fmtTime } from '../format';
import type { Call } from '../types';
import { useAsync } from '../use-async';

/** Records shown under a trace (the newest first, as /otel/logs/query answers). */
const MAX_TRACE_LOGS = 200;

interface LogRecord {
  time: string;
  trace_id: string | null;
  span_id: string | null;
  severity_text: string | null;
  severity_number: number | null;
  event_name: string | null;
  body: unknown;
  body_truncated: boolean;
}

/**
 * The OTLP log records of an OpenTelemetry trace (GenAI events among them), under its
 * waterfall: time, severity, event, the span (a click selects its call) and the body. Only
 * OTLP trace ids (32 hex characters) can have records; a trace without any shows nothing.
 */
export function TraceLogs({
  projectId,
  traceId,
  calls,
  onSelect,
}: {
  projectId: string;
  traceId: string;
  calls: Call[];
  onSelect: (callId: string) => void;
}) {
  const otlp = /^[0-9a-f]{32}$/.test(traceId);
  const { data, error } = useAsync(
    (signal) =>
      otlp
        ? post<{ logs: LogRecord[] }>('/otel/logs/query', { project_id: projectId, trace_id: traceId, limit: MAX_TRACE_LOGS }, signal)
        : Promise.resolve({ logs: [] }),
    [projectId, traceId],
  );
  if (error) return <p class="muted trace-logs">Log records could not be read.</p>;
  const logs = data?.logs ?? [];
  if (logs.length === 0) return null;
  const callIds = new Set(calls.map((c) => c.id));
  return (
    <details class="trace-logs" open>
      <summary>
        Logs ({logs.length}
        {logs.length >= MAX_TRACE_LOGS ? '+' : ''})
      </summary>
      <table class="grid compact">
        <thead>
          <tr>
            <th>Time</th>
            <th>Severity</th>
            <th>Event</th>
            <th>Span</th>
            <th>Body</th>
          </tr>
        </thead>
        <tbody>
          {logs.map((l, i) => (
            <tr key={i} class="log-row">
              <td class="log-time">{fmtTime(l.time)}</td>
              <td>{l.severity_text ?? (l.severity_number ? String(l.severity_number) : '—')}</td>
              <td>
                <code>{l.event_name || '—'}</code>
              </td>
              <td>
                {l.span_id && callIds.has(l.span_id) ? (
                  <button type="button" class="link" onClick={() => onSelect(l.span_id!)}>
                    <code>{l.span_id}</code>
                  </button>
                ) : (
                  <code class="muted">{l.span_id ?? '—'}</code>
                )}
              </td>
              <td class="log-body" title={l.body_truncated ? 'stored cut at 1,000,000 characters' : undefined}>
                {typeof l.body === 'string' ? l.body : JSON.stringify(l.body)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
