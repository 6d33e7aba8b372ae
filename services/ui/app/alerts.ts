import { post } from './api';

/**
 * Alerts over weft's /alerts API (docs/alerts.md): the project's AlertSpecs as weft evaluates
 * them, their events, the channels notifications go to. An alert made here is the same
 * AlertSpec object the Weave SDK publishes (`weave.publish(AlertSpec(...))`).
 */
export interface AlertSummary {
  alert: string;
  alert_ref: string;
  description: string | null;
  metric_path: string;
  aggregation: string;
  comparison_operator: string;
  threshold: number;
  window_size: number | null;
  window_duration: number | null;
  op_scope: string[] | null;
  monitor_ref: string | null;
  scorer_ref: string | null;
  status_match_value: string | null;
  invalid: string | null;
  state: 'ok' | 'firing' | 'resolved';
  value: number | null;
  recent: number[];
  calls: number;
  evaluated_at: string | null;
  muted_until: string | null;
}

export interface AlertChannel {
  id: string;
  name: string;
  url: string;
  format: 'json' | 'slack';
  has_secret: boolean;
  created_at: string;
}

export interface AlertEvent {
  id: string;
  alert: string;
  state: 'firing' | 'resolved';
  value: number;
  threshold: number;
  muted: boolean;
  created_at: string;
  deliveries: {
    channel_id: string;
    status: 'pending' | 'sent' | 'failed';
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
  }[];
}

export interface NewAlert {
  name: string;
  /** Op refs, comma-separated (`…:*` for every version); empty: every call. */
  op?: string;
  metric_path: string;
  aggregation: string;
  status_match_value?: string;
  comparison_operator: string;
  threshold: number;
  window_size?: number;
  window_duration?: number;
  /** On a Monitor's scores: the monitor and its scorer (refs). */
  monitor_ref?: string;
  scorer_ref?: string;
}

/** Aggregations of Weave's AlertSpec, then weft's extras (spec.weft_aggregation). */
export const AGGREGATIONS = ['mean', 'median', 'min', 'max', 'mode', 'percentage', 'count'];
export const WEFT_AGGREGATIONS = ['sum', 'p50', 'p90', 'p95', 'p99'];

export async function listAlerts(projectId: string, signal?: AbortSignal): Promise<AlertSummary[]> {
  return (await post<{ alerts: AlertSummary[] }>('/alerts/list', { project_id: projectId }, signal)).alerts;
}

export async function listChannels(projectId: string, signal?: AbortSignal): Promise<AlertChannel[]> {
  return (await post<{ channels: AlertChannel[] }>('/alerts/channels/list', { project_id: projectId }, signal)).channels;
}

export async function listEvents(projectId: string, signal?: AbortSignal): Promise<AlertEvent[]> {
  return (await post<{ events: AlertEvent[] }>('/alerts/events/query', { project_id: projectId, limit: 50 }, signal)).events;
}

export function createChannel(projectId: string, c: { name: string; url: string; format: string; secret?: string }): Promise<AlertChannel> {
  return post('/alerts/channels/create', { project_id: projectId, ...c, ...(c.secret ? {} : { secret: undefined }) });
}

export function deleteChannel(projectId: string, channelId: string): Promise<unknown> {
  return post('/alerts/channels/delete', { project_id: projectId, channel_id: channelId });
}

export function testChannel(
  projectId: string,
  channelId: string,
): Promise<{ ok: boolean; status_code: number | null; error: string | null }> {
  return post('/alerts/channels/test', { project_id: projectId, channel_id: channelId });
}

export function mute(projectId: string, alertRef: string, until: Date | null): Promise<unknown> {
  return until
    ? post('/alerts/mute', { project_id: projectId, alert_ref: alertRef, until: until.toISOString() })
    : post('/alerts/unmute', { project_id: projectId, alert_ref: alertRef });
}

/** The spec's fields the form sets (WeaveMetricThresholdSpec, and weft_aggregation for weft's extras). */
function specFields(a: NewAlert): Record<string, unknown> {
  const weft = WEFT_AGGREGATIONS.includes(a.aggregation);
  return {
    comparison_operator: a.comparison_operator,
    metric_path: a.metric_path,
    threshold: a.threshold,
    aggregation_function: weft ? 'mean' : a.aggregation,
    window_size: a.window_size ?? null,
    window_duration: a.window_duration ?? null,
    status_match_value: a.status_match_value || null,
    monitor_ref: a.monitor_ref || null,
    scorer_ref: a.scorer_ref || null,
  };
}

const opScopeOf = (op: string | undefined) => {
  const refs = (op ?? '')
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
  return refs.length ? refs : null;
};

/** Publishes an AlertSpec as the SDK stores one. */
export async function createAlert(projectId: string, a: NewAlert): Promise<void> {
  const weft = WEFT_AGGREGATIONS.includes(a.aggregation);
  const spec: Record<string, unknown> = {
    alert_condition: 'THRESHOLD',
    source_type: 'calls',
    ...specFields(a),
    ...(weft ? { weft_aggregation: a.aggregation } : {}),
  };
  const val = {
    _type: 'AlertSpec',
    name: a.name,
    description: null,
    op_scope: a.monitor_ref ? null : opScopeOf(a.op),
    spec,
    _class_name: 'AlertSpec',
    _bases: ['BaseObject', 'BaseModel'],
  };
  await post('/obj/create', { obj: { project_id: projectId, object_id: a.name, val } });
}

/**
 * Publishes a new version of an existing AlertSpec (as Weave versions any object: the same
 * object id, a new digest): its latest version's value with the form's fields in place — what
 * the form does not show (description, hysteresis, op_str, other extra keys) is kept.
 */
export async function updateAlert(projectId: string, name: string, a: NewAlert): Promise<string> {
  const latest = await post<{ obj: { val: Record<string, unknown> } }>('/obj/read', {
    project_id: projectId,
    object_id: name,
    digest: 'latest',
  });
  const val = { ...latest.obj.val };
  const spec: Record<string, unknown> = { ...((val.spec as Record<string, unknown> | undefined) ?? {}), ...specFields(a) };
  if (WEFT_AGGREGATIONS.includes(a.aggregation)) spec.weft_aggregation = a.aggregation;
  else delete spec.weft_aggregation;
  val.spec = spec;
  val.op_scope = a.monitor_ref ? (val.op_scope ?? null) : opScopeOf(a.op);
  const created = await post<{ digest: string }>('/obj/create', { obj: { project_id: projectId, object_id: name, val } });
  return created.digest;
}

/** The form's values of an alert as /alerts/list shows it (an edit starts from these). */
export function formOf(a: AlertSummary): NewAlert {
  return {
    name: a.alert,
    op: (a.op_scope ?? []).join(', '),
    metric_path: a.metric_path,
    aggregation: a.aggregation || 'mean',
    ...(a.status_match_value !== null ? { status_match_value: a.status_match_value } : {}),
    comparison_operator: a.comparison_operator || 'GREATER_THAN',
    threshold: a.threshold,
    ...(a.window_size !== null ? { window_size: a.window_size } : {}),
    ...(a.window_duration !== null ? { window_duration: a.window_duration } : {}),
    ...(a.monitor_ref ? { monitor_ref: a.monitor_ref } : {}),
    ...(a.scorer_ref ? { scorer_ref: a.scorer_ref } : {}),
  };
}

/**
 * The path of a scorer's result an alert on it would watch: its output itself when a number or a
 * boolean, else its first numeric or boolean member (`output.json_valid`), else `output.score`.
 */
export function scorePathOf(outputs: unknown[]): string {
  for (const o of outputs) {
    if (typeof o === 'number' || typeof o === 'boolean') return 'output';
    if (o && typeof o === 'object' && !Array.isArray(o)) {
      const k = Object.entries(o).find(([, v]) => typeof v === 'number' || typeof v === 'boolean')?.[0];
      if (k) return `output.${k}`;
    }
  }
  return 'output.score';
}

/**
 * The alert an analytics chart's metric suggests (its "Alert me" link): the per-call figure or
 * path it reads and the aggregation over a window; null for metrics no alert can watch
 * (distinct users, traces).
 */
export function alertPrefillOf(metric: string): { metric: string; aggregation: string; comparison: string } | null {
  const above = (m: string, aggregation: string) => ({ metric: m, aggregation, comparison: 'GREATER_THAN' });
  const latency = /^latency_(min|avg|max|p50|p90|p95|p99)_ms$/.exec(metric);
  if (latency) return above('latency', latency[1] === 'avg' ? 'mean' : latency[1]!);
  const path = /^(sum|avg|min|max|p50|p90|p95|p99)\((.+)\)$/.exec(metric);
  if (path) return { metric: path[2]!, aggregation: path[1] === 'avg' ? 'mean' : path[1]!, comparison: 'LESS_THAN' };
  switch (metric) {
    case 'error_rate':
      return above('error', 'percentage');
    case 'errors':
      return above('error', 'count');
    case 'count':
      return above('status', 'count');
    case 'cost':
      return above('cost', 'sum');
    case 'total_tokens':
      return above('tokens', 'sum');
  }
  return null;
}
