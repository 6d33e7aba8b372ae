/**
 * What /analytics/query answers: every metric and dimension, as data — its name, its SQL over the
 * matched calls and over their fact rows (libs/query analytics/facts.ts), whether it adds up, its
 * unit and what it means. The contract's enums (libs/api, so /openapi.json lists them), the
 * planner (libs/query analytics/planner.ts) and the web UI (names, units, `additive`) read this
 * one table: adding a metric is adding its row here.
 *
 * SQL is written over two kinds of rows, one per matched call (or, grouped by `model`, one per
 * model of its own usage): the call tables' columns (`started_at`, `ended_at`, `exception`,
 * `usage`…) or a fact row's (the same columns, and derived ones kept computed: `latency_ms`,
 * `errored`, `op_base`, `own_*`). `reads` names the columns a term needs; the few pieces whose SQL
 * belongs to the calls' model (latency, an op's base name, prices) come from the planner (`SqlContext`).
 */

/** How a metric's values read. */
export type Unit = 'calls' | 'ratio' | 'ms' | 'requests' | 'tokens' | 'usd' | 'users' | 'traces';

/** What the planner hands a term's SQL. */
export interface SqlContext {
  /** The rows are a call's own usage entries, one per model (the `model` dimension), not calls. */
  readonly byModel: boolean;
  /** The usage array a row's token and cost figures read: a call's own (`usage`), or its row's one entry (`[own_u]`). */
  readonly usage: string;
  /** A call's latency in ms (Int64, from started_at and ended_at; NULL-free only for ended calls). */
  readonly latency: string;
  /** The summed cost (USD) of a usage array's priced entries; NULL when none has a price. */
  cost(usage: string): string;
  /** An op's name without its ref's prefix and version (`weave:///e/p/op/<name>:v` → `<name>`). */
  opBase(column: string): string;
  /** The start of a call's `time` bucket, as the request sets its width (a DateTime). */
  timeBucket(): string;
}

/** SQL over one kind of rows, and the columns of those rows it reads. */
export interface Term {
  sql: string;
  reads?: readonly string[];
}

/** A term, or one that depends on the query (model rows, the bucket, prices). */
export type TermOf = Term | ((x: SqlContext) => Term);

export interface MetricRow {
  readonly name: string;
  readonly unit: Unit;
  /** Its value over a group is the sum of its values over the group's parts (never NULL): answers can be folded. */
  readonly additive: boolean;
  readonly description: string;
  /** An aggregate over the matched calls' rows. */
  readonly calls: TermOf;
  /** The same over fact rows; absent: `calls` reads the same there. */
  readonly facts?: TermOf;
  /** Read from the calls' own usage (requests, tokens, cost): 0, not NULL, where no call has usage. */
  readonly usage?: boolean;
}

/** How a dimension's values come out: text, a bucket's start (ISO 8601), true/false, or a JSON value. */
export type DimensionKind = 'string' | 'time' | 'bool' | 'json';

export interface DimensionRow {
  readonly name: string;
  readonly kind: DimensionKind;
  readonly description: string;
  /** A value per matched call's row. */
  readonly calls: TermOf;
  readonly facts?: TermOf;
  /** Its rows are a call's own usage entries, one per model. */
  readonly byModel?: boolean;
  /** Reads the parent call's op (`po.parent_op_name`, joined by the planner). */
  readonly parentOp?: boolean;
}

/** A usage entry's figures (`u`, a tuple of the `usage` column), by the fact column summing them over a call's own usage. */
export const USAGE_ENTRY_FIGURES = {
  own_requests: 'u.2',
  own_prompt_tokens: 'u.3',
  own_completion_tokens: 'u.4',
  // An entry's total_tokens, or its prompt + completion counts when it has none (as the UI's Tokens column).
  own_total_tokens: 'if(u.5 > 0, u.5, u.3 + u.4)',
} as const;

/** The levels every latency quantile reads from one aggregate (the engine computes an identical one once per query). */
export const LATENCY_QUANTILES = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

const ENDED = 'ended_at IS NOT NULL';
/** An aggregate of ended calls' latencies (`agg(value, condition)`), NULL when none ended: over calls, and over facts' latency_ms. */
const latency =
  (agg: (value: string, cond: string) => string) =>
  (name: string, description: string): MetricRow => ({
    name,
    unit: 'ms',
    additive: false,
    description,
    calls: (x) => ({ sql: `if(countIf(${ENDED}) = 0, NULL, ${agg(`toFloat64(${x.latency})`, ENDED)})`, reads: ['ended_at'] }),
    facts: {
      sql: `if(count(latency_ms) = 0, NULL, ${agg('ifNull(latency_ms, 0)', 'latency_ms IS NOT NULL')})`,
      reads: ['latency_ms'],
    },
  });
const quantile = (level: keyof typeof LATENCY_QUANTILES) => {
  const levels = Object.values(LATENCY_QUANTILES);
  return latency((v, c) => `quantilesExactInclusiveIf(${levels.join(', ')})(${v}, ${c})[${levels.indexOf(LATENCY_QUANTILES[level]) + 1}]`);
};

/** A figure of the calls' own usage entries, summed; over facts, the column summing it per call (over model rows, the entries'). */
const usageFigure = (name: string, column: keyof typeof USAGE_ENTRY_FIGURES, unit: Unit, description: string): MetricRow => {
  const calls = (x: SqlContext) => ({ sql: `toInt64(sum(arraySum(u -> ${USAGE_ENTRY_FIGURES[column]}, ${x.usage})))` });
  return {
    name,
    unit,
    additive: true,
    description,
    usage: true,
    calls,
    facts: (x) => (x.byModel ? calls(x) : { sql: `toInt64(sum(${column}))`, reads: [column] }),
  };
};

/** Calls that raised, over calls (`exception`) and facts (`errored`). */
const errored = (agg: (cond: string) => string) => ({
  calls: { sql: agg('exception IS NOT NULL'), reads: ['exception'] },
  facts: { sql: agg('errored'), reads: ['errored'] },
});

/** The metrics, in the order the UI offers them. */
export const METRICS = [
  { name: 'count', unit: 'calls', additive: true, description: 'Calls matched.', calls: { sql: 'count()' } },
  { name: 'errors', unit: 'calls', additive: true, description: 'Calls that raised an exception.', ...errored((c) => `countIf(${c})`) },
  {
    name: 'error_rate',
    unit: 'ratio',
    additive: false,
    description: 'Share of calls that raised an exception (0 to 1).',
    ...errored((c) => `if(count() = 0, 0, countIf(${c}) / count())`),
  },
  {
    name: 'running',
    unit: 'calls',
    additive: true,
    description: 'Calls without an end yet (running, or never ended).',
    calls: { sql: 'countIf(ended_at IS NULL)', reads: ['ended_at'] },
    facts: { sql: 'countIf(latency_ms IS NULL)', reads: ['latency_ms'] },
  },
  latency((v, c) => `minIf(${v}, ${c})`)('latency_min_ms', 'Shortest latency of the calls that ended.'),
  latency((v, c) => `avgIf(${v}, ${c})`)('latency_avg_ms', 'Mean latency of the calls that ended.'),
  quantile('p50')('latency_p50_ms', 'Median latency of the calls that ended (exact).'),
  quantile('p90')('latency_p90_ms', '90th percentile latency of the calls that ended (exact).'),
  quantile('p95')('latency_p95_ms', '95th percentile latency of the calls that ended (exact).'),
  quantile('p99')('latency_p99_ms', '99th percentile latency of the calls that ended (exact).'),
  latency((v, c) => `maxIf(${v}, ${c})`)('latency_max_ms', 'Longest latency of the calls that ended.'),
  usageFigure('requests', 'own_requests', 'requests', "Model requests of the calls' own usage (a parent's less its children's)."),
  usageFigure('prompt_tokens', 'own_prompt_tokens', 'tokens', "Prompt tokens of the calls' own usage."),
  usageFigure('completion_tokens', 'own_completion_tokens', 'tokens', "Completion tokens of the calls' own usage."),
  usageFigure(
    'total_tokens',
    'own_total_tokens',
    'tokens',
    "Total tokens of the calls' own usage (prompt + completion where none is given).",
  ),
  {
    name: 'cost',
    unit: 'usd',
    additive: true,
    description: "USD of the calls' own usage, at the price in force at each call's start (unpriced models count 0).",
    usage: true,
    calls: (x) => ({ sql: `ifNull(sum(${x.cost(x.usage)}), 0)` }),
    // Priced per usage entry when the facts were built: equal to pricing the entries here.
    facts: (x) =>
      x.byModel ? { sql: 'ifNull(sum(own_cost), 0)', reads: ['usage_cost'] } : { sql: 'sum(own_cost_total)', reads: ['own_cost_total'] },
  },
  {
    name: 'distinct_users',
    unit: 'users',
    additive: false,
    description: 'Users (svc_user_id) with calls matched.',
    calls: { sql: 'uniqExact(svc_user_id)', reads: ['svc_user_id'] },
  },
  {
    name: 'distinct_traces',
    unit: 'traces',
    additive: false,
    description: 'Traces with calls matched.',
    calls: { sql: 'uniqExact(trace_id)', reads: ['trace_id'] },
  },
] as const satisfies readonly MetricRow[];

export type MetricName = (typeof METRICS)[number]['name'];
export const METRIC_NAMES: readonly MetricName[] = METRICS.map((m) => m.name);

/** A column of the calls as it is: the same name, SQL and reads over calls and facts. */
const column = (name: string, description: string): DimensionRow => ({
  name,
  kind: 'string',
  description,
  calls: { sql: name, reads: [name] },
});

/** The dimensions, in the order the UI offers them. */
export const DIMENSIONS = [
  {
    name: 'time',
    kind: 'time',
    description: 'The start of the time bucket a call started in (`bucket` or `bucket_seconds` sets the width; default a day).',
    calls: (x) => ({ sql: `toUnixTimestamp(${x.timeBucket()})` }),
  },
  {
    name: 'op',
    kind: 'string',
    description: "The op's name without its ref's prefix and version.",
    calls: (x) => ({ sql: x.opBase('op_name'), reads: ['op_name'] }),
    facts: { sql: 'op_base', reads: ['op_base'] },
  },
  {
    name: 'status',
    kind: 'string',
    description: 'success, error, descendant_error, or running.',
    calls: { sql: `if(status = '', 'running', status)`, reads: ['status'] },
  },
  {
    name: 'model',
    kind: 'string',
    description: "A model of the call's own usage (a row per model; NULL for calls without usage).",
    byModel: true,
    calls: { sql: `nullIf(own_u.1, '')` },
    facts: { sql: `nullIf(own_u.1, '')`, reads: ['usage'] },
  },
  column('svc_user_id', 'The user who made the call.'),
  column('thread_id', 'The thread (conversation) of the call.'),
  {
    name: 'is_root',
    kind: 'bool',
    description: 'Whether the call is the root of its trace.',
    calls: { sql: 'parent_id IS NULL', reads: ['parent_id'] },
  },
  {
    name: 'parent_op',
    kind: 'string',
    description: "The parent call's op (its base name); NULL for root calls.",
    parentOp: true,
    calls: (x) => ({ sql: `if(parent_id IS NULL, NULL, ${x.opBase('po.parent_op_name')})`, reads: ['parent_id'] }),
  },
  column('op_name', "The op's full name (a ref, with its version)."),
  column('trace_id', 'The trace of the call.'),
] as const satisfies readonly DimensionRow[];

export type DimensionName = (typeof DIMENSIONS)[number]['name'];
export const DIMENSION_NAMES: readonly DimensionName[] = DIMENSIONS.map((d) => d.name);

/** The JSON a dimension or a path metric can read a dotted path of (`inputs.question`, `summary.weave.status`). */
export const JSON_PATH_ROOTS = ['attributes', 'inputs', 'output', 'summary'] as const;

/** Aggregates over a JSON path's numbers (`avg(output.score)`): the value `v` is NULL where the path holds no number. */
export const PATH_AGGREGATES: Record<string, (v: string) => string> = {
  sum: (v) => `sum(${v})`,
  avg: (v) => `avg(${v})`,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  ...Object.fromEntries(
    Object.entries(LATENCY_QUANTILES).map(([k, level]) => [k, (v: string) => `quantileExactInclusive(${level})(${v})`]),
  ),
};

/** A metric over a JSON path: `<aggregate>(<path>)`. */
export const PATH_METRIC = new RegExp(`^(${Object.keys(PATH_AGGREGATES).join('|')})\\((.+)\\)$`);
/** A dimension over a JSON path: `<root>.<path>`. */
export const PATH_DIMENSION = new RegExp(`^(?:${JSON_PATH_ROOTS.join('|')})\\.`);

/** The value a `top` dimension takes for the calls outside its top n. */
export const OTHER_VALUE = '__other__';

const metricsByName: ReadonlyMap<string, MetricRow> = new Map(METRICS.map((m) => [m.name, m]));
const dimensionsByName: ReadonlyMap<string, DimensionRow> = new Map(DIMENSIONS.map((d) => [d.name, d]));

export const metricRow = (name: string): MetricRow | undefined => metricsByName.get(name);
export const dimensionRow = (name: string): DimensionRow | undefined => dimensionsByName.get(name);

/** A metric's unit; undefined for a path metric (its values are the path's). */
export const unitOf = (name: string): Unit | undefined => metricsByName.get(name)?.unit;

/** Whether a metric adds up over a group's parts (path metrics never count as adding up: a part may be NULL). */
export const isAdditive = (name: string): boolean => metricsByName.get(name)?.additive ?? false;

/** Whether a name is a metric: one of the catalogue's, or an aggregate of a JSON path. */
export const isMetricName = (name: string): boolean => metricsByName.has(name) || PATH_METRIC.test(name);

/** Whether a name is a dimension: one of the catalogue's, or a JSON path (its segments are checked by the planner). */
export const isDimensionName = (name: string): boolean => dimensionsByName.has(name) || PATH_DIMENSION.test(name);

/** What an unknown metric's refusal lists. */
export const METRIC_CHOICES_TEXT = `${METRIC_NAMES.join(', ')}, or ${Object.keys(PATH_AGGREGATES).join('|')}(<path>)`;
/** What an unknown dimension's refusal lists. */
export const DIMENSION_CHOICES_TEXT = `${DIMENSION_NAMES.join(', ')}, or ${JSON_PATH_ROOTS.map((r) => `${r}.…`).join(' ')}`;

/** The term of a row for a query: over facts when it reads them (and the row has a facts term), else over calls. */
export function termOf(row: { calls: TermOf; facts?: TermOf }, x: SqlContext, overFacts: boolean): Term {
  const t = overFacts && row.facts ? row.facts : row.calls;
  return typeof t === 'function' ? t(x) : t;
}
