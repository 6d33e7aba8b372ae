import { PATH_METRIC, unitOf } from '@weft/analytics';
import { alertPrefillOf } from '../alerts';
import { PALETTE } from '../components/palette';
import { projectHref } from '../route';
import { ErrorBox, Loading } from '../components/states';
import type { ChartSpec, MetricsAnswer, MetricsQueryBody } from '../dashboard';
import { queryMetrics } from '../metrics-batch';
import { fmtCost, fmtInt, fmtMs, opLabel } from '../format';
import type * as ChartViewModule from '../components/chart';
import { useAsync } from '../use-async';

type ChartViewType = typeof ChartViewModule.ChartView;

/** How a metric's values read, by its unit in the catalogue: money, milliseconds, a ratio, a count; a path's values as numbers. */
function formatterOf(metric: string): (v: number) => string {
  switch (unitOf(metric)) {
    case 'usd':
      return fmtCost;
    case 'ms':
      return (v) => fmtMs(v);
    case 'ratio':
      return (v) => `${(100 * v).toFixed(1)} %`;
    case undefined:
      return PATH_METRIC.test(metric) ? (v) => (Number.isInteger(v) ? fmtInt(v) : v.toPrecision(4)) : fmtInt;
    default:
      return fmtInt;
  }
}

/** A bucket start as an axis label: time of day when all buckets are within one day, else the date too. */
function bucketLabel(iso: string, bucketSeconds: number, oneDay: boolean): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const d = new Date(iso);
  const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
  const time = `${p(d.getHours())}:${p(d.getMinutes())}${bucketSeconds < 60 ? `:${p(d.getSeconds())}` : ''}`;
  if (bucketSeconds >= 86_400) return day;
  return oneDay ? time : `${day.slice(5)} ${time}`;
}

/** Series split by status keep one colour each: errors red whatever else is drawn. */
const STATUS_COLORS: Record<string, string | undefined> = {
  success: PALETTE[0],
  error: PALETTE[1],
  running: PALETTE[2],
  descendant_error: PALETTE[3],
};

const text = (v: unknown) => (v === null || v === undefined ? '(none)' : typeof v === 'object' ? JSON.stringify(v) : String(v));
/** What a reader sees for a dimension's value: ops by their short names (the full ref in a tooltip). */
const shown = (dimension: string, v: string) => (dimension === 'op' || dimension === 'parent_op' ? opLabel(v) : v);

/** One chart of a dashboard: its /analytics/query, drawn as its kind says, with buttons to move or remove it. */
export function ChartCard({
  body,
  spec,
  ChartView,
  onMove,
  onRemove,
}: {
  body: MetricsQueryBody;
  spec: ChartSpec;
  ChartView: ChartViewType;
  onMove: (by: number) => void;
  onRemove: () => void;
}) {
  const answer = useAsync((signal) => queryMetrics(body, signal), [JSON.stringify(body)]);
  // "Alert me when this goes…": the Alerts tab's form, filled in from the chart's first metric and op.
  const prefill = alertPrefillOf(spec.metrics[0] ?? '');
  const alertHref = prefill
    ? projectHref(String(body.project_id), ['alerts'], { ...prefill, op: spec.op?.startsWith('weave:///') ? spec.op : undefined })
    : null;
  const tools = (
    <div class="chart-tools">
      {alertHref ? (
        <a class="chart-alert" href={alertHref} title="Alert me when this crosses a line" aria-label={`Alert on ${spec.title}`}>
          🔔
        </a>
      ) : null}
      <button type="button" title="Move earlier" aria-label={`Move ${spec.title} earlier`} onClick={() => onMove(-1)}>
        ↑
      </button>
      <button type="button" title="Move later" aria-label={`Move ${spec.title} later`} onClick={() => onMove(1)}>
        ↓
      </button>
      <button type="button" title="Remove" aria-label={`Remove ${spec.title}`} onClick={onRemove}>
        ✕
      </button>
    </div>
  );
  let content;
  if (answer.error) content = <ErrorBox error={answer.error} />;
  else if (!answer.data) content = <Loading what={spec.title} />;
  else content = <ChartBody spec={spec} answer={answer.data} ChartView={ChartView} />;
  return (
    <div class={`chart-card kind-${spec.kind}`} data-card={spec.title}>
      {tools}
      {content}
    </div>
  );
}

function ChartBody({ spec, answer, ChartView }: { spec: ChartSpec; answer: MetricsAnswer; ChartView: ChartViewType }) {
  const [x, split] = spec.dimensions;
  const metric = spec.metrics[0]!;
  const format = formatterOf(metric);
  // A group with no value and nothing counted (e.g. calls without usage, by model) is left out of charts.
  const rows = answer.rows.filter((r) => !(x && r[x] === null && spec.metrics.every((m) => !Number(r[m]))));
  if (spec.kind === 'number' || !x) {
    const v = answer.rows[0]?.[metric];
    return (
      <figure class="chart number" data-chart={spec.title} data-total={String(v ?? '')}>
        <figcaption>{spec.title}</figcaption>
        <div class="stat-value">{v === null || v === undefined ? '—' : format(Number(v))}</div>
      </figure>
    );
  }
  if (spec.kind === 'table') {
    return (
      <figure class="chart table" data-chart={spec.title} data-total={String(rows.reduce((s, r) => s + Number(r[metric] ?? 0), 0))}>
        <figcaption>{spec.title}</figcaption>
        <table class="grid compact">
          <thead>
            <tr>
              {spec.dimensions.map((d) => (
                <th key={d}>{d}</th>
              ))}
              {spec.metrics.map((m) => (
                <th key={m} class="num">
                  {m}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                {spec.dimensions.map((d) => (
                  <td key={d} title={text(r[d])}>
                    <code>{shown(d, text(r[d]))}</code>
                  </td>
                ))}
                {spec.metrics.map((m) => (
                  <td key={m} class="num">
                    {r[m] === null ? '—' : formatterOf(m)(Number(r[m]))}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {answer.truncated ? <p class="muted">More groups than shown.</p> : null}
      </figure>
    );
  }
  const xs = [...new Set(rows.map((r) => text(r[x])))];
  if (x === 'time') xs.sort();
  const at = new Map(xs.map((v, i) => [v, i]));
  let series: { label: string; data: (number | null)[]; color?: string }[];
  if (split) {
    const keys = [...new Set(rows.map((r) => text(r[split])))];
    series = keys.map((k, i) => {
      const data: (number | null)[] = xs.map(() => null);
      for (const r of rows) if (text(r[split]) === k) data[at.get(text(r[x]))!] = r[metric] === null ? null : Number(r[metric]);
      return { label: shown(split, k), data, color: split === 'status' ? STATUS_COLORS[k] : PALETTE[i % PALETTE.length] };
    });
  } else {
    series = spec.metrics.map((m, i) => {
      const data: (number | null)[] = xs.map(() => null);
      for (const r of rows) data[at.get(text(r[x]))!] = r[m] === null ? null : Number(r[m]);
      return { label: m, data, color: PALETTE[i % PALETTE.length] };
    });
  }
  const bucket = answer.bucket_seconds ?? 86_400;
  const oneDay = xs.length > 0 && new Date(xs[0]!).toDateString() === new Date(xs[xs.length - 1]!).toDateString();
  const labels = x === 'time' ? xs.map((v) => bucketLabel(v, bucket, oneDay)) : xs.map((v) => shown(x, v));
  return (
    <ChartView
      title={spec.title}
      type={spec.kind === 'line' ? 'line' : 'bar'}
      labels={labels}
      series={series}
      stacked={spec.kind === 'stacked'}
      format={format}
    />
  );
}
