import { DIMENSION_NAMES, METRIC_NAMES, type DimensionName } from '@weft/analytics';
import type { AnalyticsQueryRes } from '@weft/api';
import type { OpCondition } from './op-filter';
import { ApiError, post } from './api';

/**
 * A dashboard: charts, each one /analytics/query, saved in the project as a versioned object
 * (`WeftDashboard`, object id `weft-dashboard` for the project's default, `weft-dashboard-<name>`
 * for others), so it is shared by URL, versioned like any object and readable through /obj/read.
 */
export type ChartKind = 'line' | 'bar' | 'stacked' | 'table' | 'number';

export interface ChartSpec {
  title: string;
  kind: ChartKind;
  /** The x axis first (e.g. `time`, `op`); a second dimension splits the first metric into series. */
  dimensions: string[];
  metrics: string[];
  /** Ops as the Op filter takes them, for this chart only (else the view's filter). */
  op?: string;
  /** Only calls of the last `24h`, `7d` or `30d` (else the view's range). */
  range?: string;
  /** Keep the first dimension's n values with the most calls, the rest as "other". */
  top?: number;
}

export interface Dashboard {
  name: string;
  charts: ChartSpec[];
}

export const DEFAULT_DASHBOARD_ID = 'weft-dashboard';

export const dashboardId = (name: string) =>
  name === 'default' ? DEFAULT_DASHBOARD_ID : `${DEFAULT_DASHBOARD_ID}-${name.toLowerCase().replace(/[^a-z0-9_-]+/g, '-')}`;

/** What a project shows before anyone saved a dashboard: the six charts of calls, latency, tokens and cost, and the ops table. */
export const DEFAULT_DASHBOARD: Dashboard = {
  name: 'default',
  charts: [
    { title: 'Calls and errors', kind: 'stacked', dimensions: ['time', 'status'], metrics: ['count'] },
    { title: 'Latency p50 / p99', kind: 'line', dimensions: ['time'], metrics: ['latency_p50_ms', 'latency_p99_ms'] },
    { title: 'Tokens per model', kind: 'stacked', dimensions: ['model'], metrics: ['prompt_tokens', 'completion_tokens'] },
    { title: 'Cost per model', kind: 'bar', dimensions: ['model'], metrics: ['cost'] },
    { title: 'Calls per op', kind: 'stacked', dimensions: ['op', 'status'], metrics: ['count'], top: 12 },
    { title: 'Cost per op', kind: 'bar', dimensions: ['op'], metrics: ['cost'], top: 12 },
    {
      title: 'Ops',
      kind: 'table',
      dimensions: ['op'],
      metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'total_tokens', 'cost'],
    },
  ],
};

interface StoredVersion {
  obj: { val: { name?: string; charts?: ChartSpec[] }; digest: string; version_index: number };
}

/**
 * The saved dashboard `id` (latest version), or the default one when none was saved under the
 * default id. Looked up with /objs/query (an empty answer when there is none), not /obj/read,
 * whose 404 the browser logs as an error on every visit until a dashboard is saved.
 */
export async function loadDashboard(
  projectId: string,
  id: string,
  signal: AbortSignal,
): Promise<{ dashboard: Dashboard; version: number | null }> {
  const r = await post<{ objs: StoredVersion['obj'][] }>(
    '/objs/query',
    { project_id: projectId, filter: { object_ids: [id], latest_only: true } },
    signal,
  );
  const obj = r.objs[0];
  if (obj) return { dashboard: { name: obj.val.name ?? id, charts: obj.val.charts ?? [] }, version: obj.version_index };
  if (id === DEFAULT_DASHBOARD_ID) return { dashboard: DEFAULT_DASHBOARD, version: null };
  throw new ApiError(404, `object_id: no dashboard "${id}"`);
}

/** Saves a new version; answers the object id and version number. */
export async function saveDashboard(projectId: string, d: Dashboard): Promise<{ id: string; version: number }> {
  const id = dashboardId(d.name);
  const val = { _type: 'WeftDashboard', _class_name: 'WeftDashboard', _bases: ['Object', 'BaseModel'], name: d.name, charts: d.charts };
  const created = await post<{ digest: string }>('/obj/create', { obj: { project_id: projectId, object_id: id, val } });
  const read = await post<StoredVersion>('/obj/read', { project_id: projectId, object_id: id, digest: created.digest });
  return { id, version: read.obj.version_index };
}

/** The saved dashboards of a project (their object ids), the default first. */
export async function listDashboards(projectId: string, signal: AbortSignal): Promise<string[]> {
  const r = await post<{ objs: { object_id: string }[] }>(
    '/objs/query',
    { project_id: projectId, filter: { latest_only: true }, metadata_only: true },
    signal,
  );
  const ids = r.objs.map((o) => o.object_id).filter((id) => id === DEFAULT_DASHBOARD_ID || id.startsWith(`${DEFAULT_DASHBOARD_ID}-`));
  return [DEFAULT_DASHBOARD_ID, ...ids.filter((id) => id !== DEFAULT_DASHBOARD_ID).sort()];
}

/** An /analytics/query body as the UI sends it. */
export type MetricsQueryBody = Record<string, unknown> & {
  metrics: string[];
  dimensions?: string[];
  top?: { dimension: string; n: number };
};

/** An /analytics/query answer (the contract's). */
export type MetricsAnswer = AnalyticsQueryRes;

const RANGES: Record<string, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** One chart's /analytics/query body: the view's filter and query, then the chart's own op and range. */
export function chartQuery(
  projectId: string,
  spec: ChartSpec,
  view: { filter?: Record<string, unknown>; query?: { $expr: Record<string, unknown> } },
  opFilter: (op: string) => OpCondition,
): MetricsQueryBody {
  const filter = { ...view.filter };
  let query = view.query;
  // The chart's own op narrows the view's (names and prefixes as in the calls filter).
  if (spec.op) {
    const op = opFilter(spec.op);
    if (op.op_names) filter.op_names = op.op_names;
    if (op.expr) query = { $expr: query ? { $and: [query.$expr, op.expr] } : op.expr };
  }
  const body: MetricsQueryBody = {
    project_id: projectId,
    dimensions: spec.dimensions,
    metrics: spec.metrics,
    filter,
    query,
    limit: 2000,
  };
  if (spec.dimensions.includes('time')) body.bucket = 'auto';
  if (spec.range && RANGES[spec.range]) body.from = new Date(Date.now() - RANGES[spec.range]!).toISOString();
  if (spec.top && spec.dimensions[0] && spec.dimensions[0] !== 'time') body.top = { dimension: spec.dimensions[0], n: spec.top };
  return body;
}

/** The metrics the builder offers: the analytics catalogue's (@weft/analytics), in its order. */
export const METRIC_CHOICES: readonly string[] = METRIC_NAMES;
/** The dimensions it offers: the catalogue's but the per-call ones (`op_name`, `trace_id`: `op` and the traces view read better). */
const NOT_OFFERED: readonly DimensionName[] = ['op_name', 'trace_id'];
export const DIMENSION_CHOICES: readonly DimensionName[] = DIMENSION_NAMES.filter((d) => !NOT_OFFERED.includes(d));
