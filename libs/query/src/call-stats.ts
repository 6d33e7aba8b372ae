import type { CallFilter, CALL_METRICS, STAT_AGGREGATIONS, USAGE_METRICS } from '@weft/api';
import { CallsQueryPlan } from './calls';
import { modelPricesSql, pickedPriceSql } from './costs';
import { withOwnUsageSql } from './own-usage';
import type { BuiltQuery, Params } from './params';

/**
 * /calls/stats (the reference's call_stats): metrics over the calls a filter matches that
 * started in [start, end), per time bucket (every bucket of the range, empty ones too), usage
 * also per model. Usage is each call's own (own-usage.ts), so a request rolled up into its
 * parents' summaries by the Weave SDK counts once; a cost is a call's tokens priced at the
 * price in force at its start.
 */

type UsageMetric = (typeof USAGE_METRICS)[number];
type CallMetric = (typeof CALL_METRICS)[number];
type Aggregation = (typeof STAT_AGGREGATIONS)[number];
export interface MetricSpec<M> {
  metric: M;
  aggregations: Aggregation[];
  percentiles: number[];
}

export interface CallStatsInput {
  project_id: string;
  filter?: CallFilter;
  timezone: string;
  usage_metrics?: MetricSpec<UsageMetric>[];
  call_metrics?: MetricSpec<CallMetric>[];
}

/** The reference's cap on buckets: a finer granularity is widened to stay under it. */
const MAX_BUCKETS = 10_000;

/** The reference's default bucket width for a range. */
export function callStatsGranularity(rangeSeconds: number, asked?: number): number {
  let g = asked;
  if (g === undefined) {
    if (rangeSeconds <= 2 * 3600) g = 300;
    else if (rangeSeconds <= 12 * 3600) g = 3600;
    else if (rangeSeconds <= 3 * 86_400) g = 6 * 3600;
    else if (rangeSeconds <= 14 * 86_400) g = 12 * 3600;
    else g = 86_400;
  }
  if (rangeSeconds / g <= MAX_BUCKETS) return g;
  return Math.max(g, Math.floor(rangeSeconds / MAX_BUCKETS) + 1);
}

/** `<aggregation>_<metric>` and `p<percentile>_<metric>` columns of a spec, as the reference names them. */
function aggregateColumns(spec: MetricSpec<string>, value: string): { alias: string; sql: string; zeroWhenEmpty: boolean }[] {
  const fns: Record<Aggregation, string> = { sum: 'sumOrNull', avg: 'avgOrNull', min: 'minOrNull', max: 'maxOrNull', count: 'countOrNull' };
  const aggregations = spec.aggregations.length === 0 && spec.percentiles.length === 0 ? (['sum'] as Aggregation[]) : spec.aggregations;
  const out = aggregations.map((a) => ({
    alias: `${a}_${spec.metric}`,
    sql: `${fns[a]}(${value})`,
    zeroWhenEmpty: a !== 'min' && a !== 'max',
  }));
  for (const pct of spec.percentiles) {
    const q = Math.round((pct / 100) * 1e6) / 1e6;
    out.push({ alias: `p${pct}_${spec.metric}`, sql: `quantileOrNull(${q})(${value})`, zeroWhenEmpty: false });
  }
  return out;
}

/** A usage row's value of each metric; `price(i)`: the i-th member of the call's price for the model (0 when unpriced). */
const USAGE_VALUE: Record<UsageMetric, (price: (i: number) => string) => string> = {
  input_tokens: () => 'toFloat64(u.prompt_tokens)',
  output_tokens: () => 'toFloat64(u.completion_tokens)',
  total_tokens: () => 'toFloat64(if(u.total_tokens > 0, u.total_tokens, u.prompt_tokens + u.completion_tokens))',
  input_cost: (price) => `u.prompt_tokens * ${price(3)}`,
  output_cost: (price) => `u.completion_tokens * ${price(4)}`,
  total_cost: (price) => `u.prompt_tokens * ${price(3)} + u.completion_tokens * ${price(4)}`,
};
const COST_METRICS = new Set<UsageMetric>(['input_cost', 'output_cost', 'total_cost']);

const CALL_VALUE: Record<CallMetric, string> = {
  latency_ms: `if(ended_at IS NULL, NULL, toFloat64(dateDiff('millisecond', started_at, ended_at)))`,
  call_count: '1',
  error_count: `if(ifNull(exception, '') != '', 1, 0)`,
};

/** The columns of one kind of bucket: the specs' aggregates, each alias once. */
function columnsOf(specs: { spec: MetricSpec<string>; value: string }[]) {
  const seen = new Map<string, { alias: string; sql: string; zeroWhenEmpty: boolean }>();
  for (const { spec, value } of specs) for (const c of aggregateColumns(spec, value)) if (!seen.has(c.alias)) seen.set(c.alias, c);
  return [...seen.values()];
}

export class CallStatsPlan {
  private readonly plan: CallsQueryPlan;

  constructor(
    private readonly req: CallStatsInput,
    private readonly startMicros: number,
    private readonly endMicros: number,
    readonly granularity: number,
  ) {
    this.plan = new CallsQueryPlan({ project_id: req.project_id, filter: req.filter, sort_by: [] });
  }

  /** Bound range, zone and width; the bucket grid; a call's bucket; a bucket as ISO 8601 with its offset (as Python's isoformat). */
  private frame(p: Params) {
    const tz = p.str(this.req.timezone);
    const g = p.add(this.granularity, 'Int64');
    const start = `fromUnixTimestamp64Micro(${p.add(this.startMicros, 'Int64')})`;
    const end = `fromUnixTimestamp64Micro(${p.add(this.endMicros, 'Int64')})`;
    const first = `toStartOfInterval(toDateTime(${start}, ${tz}), toIntervalSecond(${g}), ${tz})`;
    const grid = `SELECT ${first} + toIntervalSecond(number * ${g}) AS bucket
      FROM numbers(toUInt64(ceil((toUnixTimestamp64Micro(${end}) / 1e6 - toUnixTimestamp(${first})) / ${g})))
      WHERE bucket < ${end}`;
    const bucketOf = `toStartOfInterval(toDateTime(started_at, ${tz}), toIntervalSecond(${g}), ${tz})`;
    const iso = `concat(formatDateTime(all_buckets.bucket, '%Y-%m-%dT%H:%i:%S', ${tz}), replaceRegexpOne(formatDateTime(all_buckets.bucket, '%z', ${tz}), '(\\\\d\\\\d)$', ':\\\\1'))`;
    const inRange = `started_at >= ${start} AND started_at < ${end}`;
    return { grid, bucketOf, iso, inRange };
  }

  /** Usage per bucket and model, for every bucket × every model seen; null when no usage metric is asked for. */
  usageQuery(): (BuiltQuery & { columns: string[] }) | null {
    const specs = this.req.usage_metrics ?? [];
    if (specs.length === 0) return null;
    const p = this.plan.params;
    const pid = this.plan.projectParam;
    const prices = modelPricesSql(pid);
    const price = (i: number) => `if(mapContains(${prices}, u.model), ${pickedPriceSql(prices, 'u.model')}.${i}, 0)`;
    // Costs are sums only (as the reference); they need the token sums beside them.
    const all: MetricSpec<UsageMetric>[] = specs.map((s) =>
      COST_METRICS.has(s.metric) ? { metric: s.metric, aggregations: ['sum'], percentiles: [] } : s,
    );
    const has = (m: UsageMetric) => all.some((s) => s.metric === m);
    if ((has('input_cost') || has('total_cost')) && !has('input_tokens'))
      all.push({ metric: 'input_tokens', aggregations: ['sum'], percentiles: [] });
    if ((has('output_cost') || has('total_cost')) && !has('output_tokens'))
      all.push({ metric: 'output_tokens', aggregations: ['sum'], percentiles: [] });
    const cols = columnsOf(all.map((spec) => ({ spec, value: `m_${spec.metric}` })));
    const metrics = [...new Set(all.map((s) => s.metric))];
    const { grid, bucketOf, iso, inRange } = this.frame(p);
    const callCols = ['started_at', 'usage'];
    const calls = withOwnUsageSql(this.plan.matchedCallsSql(p, callCols), callCols, pid);
    const rows = `SELECT ${bucketOf} AS bucket, u.model AS model, ${metrics.map((m) => `${USAGE_VALUE[m](price)} AS m_${m}`).join(', ')}
      FROM (${calls}) ARRAY JOIN usage AS u WHERE ${inRange}`;
    const aggregated = `SELECT bucket, model, ${cols.map((c) => `${c.sql} AS ${c.alias}`).join(', ')}, count() AS count FROM (${rows}) GROUP BY bucket, model`;
    const sql = `SELECT ${iso} AS timestamp, all_models.model AS model,
      ${cols.map((c) => (c.zeroWhenEmpty ? `ifNull(a.${c.alias}, 0) AS ${c.alias}` : `a.${c.alias} AS ${c.alias}`)).join(', ')}, a.count AS count
    FROM (${grid}) AS all_buckets
    CROSS JOIN (SELECT DISTINCT model FROM (${aggregated})) AS all_models
    LEFT JOIN (${aggregated}) AS a ON a.bucket = all_buckets.bucket AND a.model = all_models.model
    ORDER BY all_buckets.bucket, all_models.model`;
    return { sql, params: p.values, columns: ['timestamp', 'model', ...cols.map((c) => c.alias), 'count'] };
  }

  /** Call metrics per bucket, every bucket of the range; null when none is asked for. */
  callsQuery(): (BuiltQuery & { columns: string[] }) | null {
    const specs = this.req.call_metrics ?? [];
    if (specs.length === 0) return null;
    const p = this.plan.params;
    const cols = columnsOf(specs.map((spec) => ({ spec, value: `m_${spec.metric}` })));
    const metrics = [...new Set(specs.map((s) => s.metric))];
    const { grid, bucketOf, iso, inRange } = this.frame(p);
    const calls = this.plan.matchedCallsSql(p, ['started_at', 'ended_at', 'exception']);
    const rows = `SELECT ${bucketOf} AS bucket, ${metrics.map((m) => `${CALL_VALUE[m]} AS m_${m}`).join(', ')} FROM (${calls}) WHERE ${inRange}`;
    const sql = `SELECT ${iso} AS timestamp,
      ${cols.map((c) => (c.zeroWhenEmpty ? `ifNull(a.${c.alias}, 0) AS ${c.alias}` : `a.${c.alias} AS ${c.alias}`)).join(', ')}, a.count AS count
    FROM (${grid}) AS all_buckets
    LEFT JOIN (SELECT bucket, ${cols.map((c) => `${c.sql} AS ${c.alias}`).join(', ')}, count() AS count FROM (${rows}) GROUP BY bucket) AS a
      ON a.bucket = all_buckets.bucket
    ORDER BY all_buckets.bucket`;
    return { sql, params: p.values, columns: ['timestamp', ...cols.map((c) => c.alias), 'count'] };
  }
}
