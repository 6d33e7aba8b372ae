import { useState } from 'preact/hooks';
import { callsQueryBody, filterFromParams, type CallsFilter } from '../calls-filter';
import { opCondition } from '../op-filter';
import { FilterBar } from '../components/filter-bar';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import {
  chartQuery,
  DEFAULT_DASHBOARD_ID,
  DIMENSION_CHOICES,
  listDashboards,
  loadDashboard,
  METRIC_CHOICES,
  saveDashboard,
  type ChartKind,
  type ChartSpec,
  type Dashboard,
} from '../dashboard';
import { fmtCost, fmtInt, fmtMs } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type * as ChartViewModule from '../components/chart';
import { queryTotals } from '../metrics-batch';
import { useAsync } from '../use-async';
import { ChartCard } from './analytics-chart';

type ChartViewType = typeof ChartViewModule.ChartView;

const TOTALS = ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'total_tokens', 'cost'];

/**
 * The project's numbers: totals, then a dashboard of charts, every figure from /analytics/query
 * over the calls the filter matches (each LLM request counted once). The dashboard is the
 * project's saved one (`?dashboard=<object id>`, default `weft-dashboard`) or the built-in
 * default; charts are added, moved and removed here and saved as a new version of the object.
 */
export function AnalyticsView({ projectId, route }: { projectId: string; route: Route }) {
  const filter = filterFromParams(route.params);
  const dashboardParam = route.params.get('dashboard') ?? DEFAULT_DASHBOARD_ID;
  const apply = (f: CallsFilter) =>
    navigate(
      projectHref(projectId, ['analytics'], { ...f, dashboard: dashboardParam === DEFAULT_DASHBOARD_ID ? undefined : dashboardParam }),
    );
  let view: ReturnType<typeof callsQueryBody> | undefined;
  let filterError: Error | undefined;
  try {
    view = callsQueryBody(filter, projectId);
  } catch (e) {
    filterError = e as Error;
  }
  const stored = useAsync((signal) => loadDashboard(projectId, dashboardParam, signal), [projectId, dashboardParam]);
  const charts = useAsync(() => import('../components/chart'), []);
  // The totals are asked for in the turn the charts ask for theirs, so they come from a chart's
  // scan (metrics-batch.ts) rather than one of their own.
  const settled = (!stored.loading && !charts.loading) || !view;
  const totals = useAsync(
    (signal) =>
      !view
        ? Promise.reject(filterError!)
        : settled
          ? queryTotals({ project_id: projectId, metrics: TOTALS, ...view }, signal)
          : new Promise<never>(() => undefined),
    [projectId, route.params.toString(), settled],
  );
  const t = totals.data;
  return (
    <Layout projectId={projectId} tab="analytics">
      <FilterBar value={filter} onApply={apply} fields={['op', 'status', 'from', 'to', 'q', 'expr']} />
      {totals.loading ? <Loading what="totals" /> : null}
      {totals.error ? <ErrorBox error={totals.error} /> : null}
      {t && Number(t.count) === 0 ? (
        <Empty title="No calls in this range">
          <p>
            Widen the time range or the filter, or send calls (<code>POST /call/start</code>, <code>/call/upsert_batch</code>, OTLP).
          </p>
        </Empty>
      ) : null}
      {view && !(t && Number(t.count) === 0) ? (
        <div class="analytics">
          {t ? (
            <div class="totals" aria-label="Totals">
              <Stat name="Calls" value={fmtInt(Number(t.count))} raw={Number(t.count)} />
              <Stat
                name="Errors"
                value={fmtInt(Number(t.errors))}
                raw={Number(t.errors)}
                note={`${((100 * Number(t.errors)) / Number(t.count)).toFixed(1)} %`}
              />
              <Stat name="p50 latency" value={fmtMs(t.latency_p50_ms as number | null)} raw={(t.latency_p50_ms as number | null) ?? ''} />
              <Stat name="p99 latency" value={fmtMs(t.latency_p99_ms as number | null)} raw={(t.latency_p99_ms as number | null) ?? ''} />
              <Stat name="Tokens" value={fmtInt(Number(t.total_tokens))} raw={Number(t.total_tokens)} />
              <Stat name="Cost" value={fmtCost(Number(t.cost))} raw={Number(t.cost)} />
            </div>
          ) : null}
          {stored.error ? <ErrorBox error={stored.error} /> : null}
          {charts.error ? <ErrorBox error={charts.error} /> : null}
          {stored.data && charts.data && view ? (
            <DashboardEditor
              key={`${dashboardParam}:${stored.data.version ?? 'default'}`}
              projectId={projectId}
              initial={stored.data.dashboard}
              version={stored.data.version}
              view={view}
              ChartView={charts.data.ChartView}
              filterParams={filter}
            />
          ) : (
            <Loading what="dashboard" />
          )}
        </div>
      ) : null}
    </Layout>
  );
}

function DashboardEditor({
  projectId,
  initial,
  version,
  view,
  ChartView,
  filterParams,
}: {
  projectId: string;
  initial: Dashboard;
  version: number | null;
  view: ReturnType<typeof callsQueryBody>;
  ChartView: ChartViewType;
  filterParams: CallsFilter;
}) {
  const [charts, setCharts] = useState<ChartSpec[]>(initial.charts);
  const [name, setName] = useState(initial.name);
  const [saved, setSaved] = useState<string | undefined>(version === null ? undefined : `version ${version}`);
  const [saveError, setSaveError] = useState<Error | undefined>();
  const dirty = JSON.stringify(charts) !== JSON.stringify(initial.charts) || name !== initial.name;
  const move = (i: number, by: number) => {
    const next = [...charts];
    const [c] = next.splice(i, 1);
    next.splice(Math.max(0, Math.min(next.length, i + by)), 0, c!);
    setCharts(next);
  };
  const save = async () => {
    setSaveError(undefined);
    try {
      const r = await saveDashboard(projectId, { name, charts });
      setSaved(`version ${r.version}`);
      navigate(projectHref(projectId, ['analytics'], { ...filterParams, dashboard: r.id === DEFAULT_DASHBOARD_ID ? undefined : r.id }), {
        replace: true,
      });
    } catch (e) {
      setSaveError(e as Error);
    }
  };
  const list = useAsync((signal) => listDashboards(projectId, signal), [projectId, saved]);
  return (
    <section class="dashboard" aria-label="Dashboard">
      <div class="dashboard-bar">
        <label>
          Dashboard{' '}
          <select
            aria-label="Dashboard"
            value={initial.name === 'default' ? DEFAULT_DASHBOARD_ID : undefined}
            onChange={(e) => {
              const id = (e.target as HTMLSelectElement).value;
              navigate(projectHref(projectId, ['analytics'], { ...filterParams, dashboard: id === DEFAULT_DASHBOARD_ID ? undefined : id }));
            }}
          >
            {(list.data ?? [DEFAULT_DASHBOARD_ID]).map((id) => (
              <option key={id} value={id} selected={id.endsWith(name) || (name === 'default' && id === DEFAULT_DASHBOARD_ID)}>
                {id === DEFAULT_DASHBOARD_ID ? 'default' : id.slice(DEFAULT_DASHBOARD_ID.length + 1)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name{' '}
          <input
            aria-label="Dashboard name"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value.trim() || 'default')}
          />
        </label>
        <button type="button" onClick={() => void save()} disabled={!dirty && saved !== undefined}>
          Save dashboard
        </button>
        <span class="muted" data-testid="dashboard-state">
          {dirty ? 'unsaved changes' : saved ? `saved, ${saved}` : 'built-in default (not saved yet)'}
        </span>
        {saveError ? <ErrorBox error={saveError} /> : null}
      </div>
      <div class="chart-grid">
        {charts.map((spec, i) => (
          <ChartCard
            key={`${i}:${JSON.stringify(spec)}`}
            body={chartQuery(projectId, spec, view, (op) => opCondition(op, projectId))}
            spec={spec}
            ChartView={ChartView}
            onMove={(by) => move(i, by)}
            onRemove={() => setCharts(charts.filter((_, j) => j !== i))}
          />
        ))}
      </div>
      <ChartBuilder onAdd={(spec) => setCharts([...charts, spec])} />
    </section>
  );
}

/** The small form that adds a chart: what to show, by what, of which calls. */
function ChartBuilder({ onAdd }: { onAdd: (spec: ChartSpec) => void }) {
  const [title, setTitle] = useState('');
  const [kind, setKind] = useState<ChartKind>('line');
  const [dimension, setDimension] = useState('time');
  const [split, setSplit] = useState('');
  const [metrics, setMetrics] = useState('count');
  const [op, setOp] = useState('');
  const [range, setRange] = useState('');
  const submit = (e: Event) => {
    e.preventDefault();
    const ms = metrics
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    const dims = kind === 'number' ? [] : [dimension.trim(), split.trim()].filter(Boolean);
    onAdd({
      title: title.trim() || `${ms.join(', ')}${dims.length ? ` by ${dims.join(' and ')}` : ''}`,
      kind,
      dimensions: dims,
      metrics: ms,
      ...(op.trim() ? { op: op.trim() } : {}),
      ...(range ? { range } : {}),
      ...(dims[0] && dims[0] !== 'time' && kind !== 'table' ? { top: 12 } : {}),
    });
    setTitle('');
  };
  return (
    <form class="chart-builder" aria-label="Add a chart" onSubmit={submit}>
      <strong>Add a chart</strong>
      <label>
        Title <input aria-label="Chart title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Kind{' '}
        <select aria-label="Chart kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as ChartKind)}>
          {(['line', 'bar', 'stacked', 'table', 'number'] as const).map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      <label>
        By{' '}
        <input
          aria-label="Dimension"
          list="weft-dimensions"
          value={dimension}
          onInput={(e) => setDimension((e.target as HTMLInputElement).value)}
          placeholder="time, op, model, attributes.x…"
        />
      </label>
      <label>
        Split by{' '}
        <input aria-label="Split by" list="weft-dimensions" value={split} onInput={(e) => setSplit((e.target as HTMLInputElement).value)} />
      </label>
      <datalist id="weft-dimensions">
        {DIMENSION_CHOICES.map((d) => (
          <option key={d} value={d} />
        ))}
      </datalist>
      <label>
        Metrics{' '}
        <input
          aria-label="Metrics"
          list="weft-metrics"
          value={metrics}
          onInput={(e) => setMetrics((e.target as HTMLInputElement).value)}
          placeholder="count, cost, avg(output.score)…"
        />
      </label>
      <datalist id="weft-metrics">
        {METRIC_CHOICES.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      <label>
        Only{' '}
        <input
          aria-label="Chart filter"
          title="ops as the Op filter takes them; the view's filter when empty"
          value={op}
          onInput={(e) => setOp((e.target as HTMLInputElement).value)}
          placeholder="all ops"
        />
      </label>
      <label>
        Range{' '}
        <select aria-label="Chart range" value={range} onChange={(e) => setRange((e.target as HTMLSelectElement).value)}>
          <option value="">the view's</option>
          <option value="24h">last 24 h</option>
          <option value="7d">last 7 days</option>
          <option value="30d">last 30 days</option>
        </select>
      </label>
      <button type="submit">Add chart</button>
    </form>
  );
}

function Stat({ name, value, raw, note }: { name: string; value: string; raw: number | string; note?: string }) {
  return (
    <div class="stat" data-stat={name} data-value={String(raw)}>
      <div class="stat-name">{name}</div>
      <div class="stat-value">{value}</div>
      {note ? <div class="stat-note">{note}</div> : null}
    </div>
  );
}
