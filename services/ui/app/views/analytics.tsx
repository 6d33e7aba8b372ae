import { post } from '../api';
import { callsQueryBody, filterFromParams, type CallsFilter } from '../calls-filter';
import { PALETTE } from '../components/palette';
import { FilterBar } from '../components/filter-bar';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtCost, fmtInt, fmtMs, opLabel } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { Aggregate } from '../types';
import type * as ChartViewModule from '../components/chart';

type ChartViewType = typeof ChartViewModule.ChartView;
import { useAsync } from '../use-async';

/** A bucket start as an axis label: time of day when all buckets are within one day, else the date too. */
function bucketLabels(starts: string[], bucketSeconds: number): string[] {
  const p = (n: number) => String(n).padStart(2, '0');
  return starts.map((s) => {
    const d = new Date(s);
    const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
    const time = `${p(d.getHours())}:${p(d.getMinutes())}${bucketSeconds < 60 ? `:${p(d.getSeconds())}` : ''}`;
    if (bucketSeconds >= 86_400) return day;
    const oneDay = starts.length > 0 && new Date(starts[0]!).toDateString() === new Date(starts[starts.length - 1]!).toDateString();
    return oneDay ? time : `${day.slice(5)} ${time}`;
  });
}

const bucketName = (s: number) => (s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : s < 86_400 ? `${s / 3600} h` : `${s / 86_400} d`);

/** Calls, errors, latency, tokens and cost for a time range, from /calls/aggregate (computed in ClickHouse). */
export function AnalyticsView({ projectId, route }: { projectId: string; route: Route }) {
  const filter = filterFromParams(route.params);
  const apply = (f: CallsFilter) => navigate(projectHref(projectId, ['analytics'], { ...f }));
  const { data, error, loading } = useAsync(
    (signal) => {
      const body = callsQueryBody(filter, projectId);
      return post<Aggregate>('/calls/aggregate', { project_id: projectId, ...body }, signal);
    },
    [projectId, route.params.toString()],
  );
  return (
    <Layout projectId={projectId} tab="analytics">
      <FilterBar value={filter} onApply={apply} fields={['op', 'status', 'from', 'to', 'q', 'expr']} />
      {loading ? <Loading what="aggregates" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.totals.calls === 0 ? (
        <Empty title="No calls in this range">
          <p>
            Widen the time range or the filter, or send calls (<code>POST /call/start</code>, <code>/call/upsert_batch</code>, OTLP).
          </p>
        </Empty>
      ) : null}
      {data && data.totals.calls > 0 ? <Charts data={data} /> : null}
    </Layout>
  );
}

/** Chart.js is a chunk of its own, loaded by this view only (the calls view never waits for it). */
const loadCharts = () => import('../components/chart');

function Charts({ data }: { data: Aggregate }) {
  const charts = useAsync(() => loadCharts(), []);
  const t = data.totals;
  const labels = bucketLabels(
    data.series.map((s) => s.start),
    data.bucket_seconds,
  );
  return (
    <div class="analytics">
      <div class="totals" aria-label="Totals">
        <Stat name="Calls" value={fmtInt(t.calls)} raw={t.calls} />
        <Stat name="Errors" value={fmtInt(t.errors)} raw={t.errors} note={t.calls ? `${((100 * t.errors) / t.calls).toFixed(1)} %` : ''} />
        <Stat name="p50 latency" value={fmtMs(t.p50_latency_ms)} raw={t.p50_latency_ms ?? ''} />
        <Stat name="p99 latency" value={fmtMs(t.p99_latency_ms)} raw={t.p99_latency_ms ?? ''} />
        <Stat name="Tokens" value={fmtInt(t.total_tokens)} raw={t.total_tokens} />
        <Stat name="Cost" value={fmtCost(t.cost)} raw={t.cost} />
      </div>
      <p class="muted bucket-note">Buckets of {bucketName(data.bucket_seconds)}.</p>
      {charts.error ? <ErrorBox error={charts.error} /> : null}
      {charts.data ? <ChartGrid ChartView={charts.data.ChartView} data={data} labels={labels} /> : <Loading what="charts" />}
      <table class="grid compact by-op">
        <thead>
          <tr>
            <th>Op</th>
            <th class="num">Calls</th>
            <th class="num">Errors</th>
            <th class="num">p50</th>
            <th class="num">p99</th>
            <th class="num">Tokens</th>
            <th class="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {data.by_op.map((o) => (
            <tr key={o.op_name}>
              <td title={o.op_name}>
                <code>{opLabel(o.op_name)}</code>
              </td>
              <td class="num">{fmtInt(o.calls)}</td>
              <td class="num">{fmtInt(o.errors)}</td>
              <td class="num">{fmtMs(o.p50_latency_ms)}</td>
              <td class="num">{fmtMs(o.p99_latency_ms)}</td>
              <td class="num">{fmtInt(o.total_tokens)}</td>
              <td class="num">{fmtCost(o.cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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

function ChartGrid({ ChartView, data, labels }: { ChartView: ChartViewType; data: Aggregate; labels: string[] }) {
  const ops = data.by_op.slice(0, 12);
  const models = data.by_model;
  return (
    <div class="chart-grid">
      <ChartView
        title="Calls and errors"
        type="bar"
        labels={labels}
        series={[
          { label: 'calls', data: data.series.map((s) => s.calls - s.errors), color: PALETTE[0] },
          { label: 'errors', data: data.series.map((s) => s.errors), color: PALETTE[1] },
        ]}
        stacked
      />
      <ChartView
        title="Latency p50 / p99"
        type="line"
        labels={labels}
        series={[
          { label: 'p50', data: data.series.map((s) => s.p50_latency_ms) },
          { label: 'p99', data: data.series.map((s) => s.p99_latency_ms), color: PALETTE[3] },
        ]}
        format={(v) => fmtMs(v)}
      />
      {models.length ? (
        <ChartView
          title="Tokens per model"
          type="bar"
          labels={models.map((m) => m.model)}
          series={[
            { label: 'prompt', data: models.map((m) => m.prompt_tokens) },
            { label: 'completion', data: models.map((m) => m.completion_tokens), color: PALETTE[2] },
          ]}
          stacked
        />
      ) : null}
      {models.length ? (
        <ChartView
          title="Cost per model"
          type="bar"
          labels={models.map((m) => m.model)}
          series={[{ label: 'cost (USD)', data: models.map((m) => m.cost), color: PALETTE[4] }]}
          format={fmtCost}
        />
      ) : null}
      <ChartView
        title="Calls per op"
        type="bar"
        labels={ops.map((o) => opLabel(o.op_name))}
        series={[
          { label: 'calls', data: ops.map((o) => o.calls - o.errors) },
          { label: 'errors', data: ops.map((o) => o.errors), color: PALETTE[1] },
        ]}
        stacked
      />
      <ChartView
        title="Cost per op"
        type="bar"
        labels={ops.map((o) => opLabel(o.op_name))}
        series={[{ label: 'cost (USD)', data: ops.map((o) => o.cost), color: PALETTE[5] }]}
        format={fmtCost}
      />
    </div>
  );
}
