import {
  DIMENSION_CHOICES_TEXT,
  dimensionRow,
  METRIC_CHOICES_TEXT,
  metricRow,
  OTHER_VALUE,
  PATH_AGGREGATES,
  PATH_METRIC,
  termOf,
  type DimensionKind,
  type SqlContext,
  type TermOf,
} from '@weft/analytics';
import type { AnalyticsQueryReq } from '@weft/api';
import { ApiError, roundFigure } from '@weft/core';
import { latencySql, opBaseNameSql } from '../call-json';
import { JSON_ROOTS } from '../call-fields';
import { CallsQueryPlan } from '../calls';
import { callTotalCostSql } from '../costs';
import { splitFieldPath } from '../expr';
import { withOwnUsageSql } from '../own-usage';
import type { BuiltQuery, Params } from '../params';
import { asFactRowsSql, callColumnsFor, FACT_COLUMNS, factRowsSql, factsSplit, readsFacts, type FactsCoverage } from './facts';

/**
 * /analytics/query: metrics over the calls a filter matches (the set /calls/query_stats counts),
 * grouped by dimensions. Two levels: the matched calls (one row each, replays folded, deleted
 * ones left out, with their own usage when a metric or dimension reads usage: own-usage.ts), then
 * one GROUP BY over them, with a model's usage rows (`model`) or the parent's op (`parent_op`)
 * joined in when asked for. What each metric and dimension is — its SQL over calls and over fact
 * rows — is a row of the catalogue (@weft/analytics); this plans the query around them. The
 * matched calls of segments with current facts (facts.ts) are read from those; the other start
 * ranges' from the call tables.
 */

interface Dimension {
  name: string;
  sql: string;
  kind: DimensionKind;
  /** The dimension over fact rows, when it reads a column facts keep computed. */
  factsSql?: string;
}

interface Metric {
  name: string;
  sql: string;
  /** Read from the calls' own usage (tokens, requests, cost). */
  usage?: boolean;
  /** The metric over fact rows (their derived columns, their usage's costs), when it differs. */
  factsSql?: string;
}

/** The usage array a row's token and cost metrics read: the call's own, or the one model's entry of its row. */
const CALL_USAGE = 'usage';
const MODEL_USAGE = '[own_u]';

const BUCKET_SQL: Record<string, string> = {
  minute: 'toStartOfMinute(started_at)',
  hour: 'toStartOfHour(started_at)',
  day: 'toStartOfDay(started_at)',
  week: "toDateTime(toStartOfWeek(started_at, 1), 'UTC')",
  month: "toDateTime(toStartOfMonth(started_at), 'UTC')",
};

export class MetricsQueryPlan {
  private readonly plan: CallsQueryPlan;
  private readonly p: Params;
  private readonly projectSql: string;
  /** Columns of the matched calls the dimensions and metrics read. */
  private readonly columns = new Set<string>(['started_at']);
  /** Columns of fact rows they read there (facts.ts: the calls' columns and derived ones). */
  private readonly factColumns = new Set<string>(['started_at']);
  private usesUsage = false;
  private modelRows = false;
  private parentOp = false;
  /** The filter and query over facts rows when this query reads facts; decided once every column is known. */
  private readonly factsConds: string[] | null;
  readonly dimensions: Dimension[];
  readonly metrics: Metric[];

  /** The calls' earliest and latest start (µs), for `bucket: 'auto'`: the query that gives them (from facts where it can). */
  static rangeQuery(req: AnalyticsQueryReq, facts?: FactsCoverage): BuiltQuery {
    const plan = new CallsQueryPlan({ project_id: req.project_id, filter: req.filter, query: withTimeRange(req), sort_by: [] });
    const p = plan.params;
    const conds = readsFacts(facts) ? plan.conditionsOver(FACT_COLUMNS) : null;
    let calls = plan.matchedCallsSql(p, ['started_at']);
    if (conds && facts) {
      // The first and the last fact row by day, then start: read in key order (project, day), so
      // only the first and the last day's starts are read, not every row's.
      const split = factsSplit(p, plan.projectParam, facts);
      const rows = factRowsSql(plan.projectParam, split.segments, ['day', 'started_at'], [...conds, ...split.factConds]);
      const end = (dir: string) => `(SELECT started_at FROM (${rows} ORDER BY project_id${dir}, day${dir}, started_at${dir} LIMIT 1))`;
      calls = `${end('')}\n  UNION ALL\n  ${end(' DESC')}`;
      if (split.calls) {
        const slice = { cond: split.calls.cond, small: true };
        calls += `\n  UNION ALL\n  SELECT started_at FROM (${plan.matchedCallsSql(p, ['started_at'], undefined, slice)})`;
      }
    }
    const sql = `SELECT toUnixTimestamp64Micro(min(started_at)) AS min_us, toUnixTimestamp64Micro(max(started_at)) AS max_us
    FROM (${calls})`;
    return { sql, params: p.values };
  }

  constructor(
    private readonly req: AnalyticsQueryReq,
    private readonly facts?: FactsCoverage,
  ) {
    this.plan = new CallsQueryPlan({ project_id: req.project_id, filter: req.filter, query: withTimeRange(req), sort_by: [] });
    this.p = this.plan.params;
    this.projectSql = this.plan.projectParam;
    this.dimensions = req.dimensions.map((d, i) => this.dimension(d, `dimensions[${i}]`));
    const names = new Set<string>();
    for (const d of this.dimensions) {
      if (names.has(d.name)) throw unknown(`dimensions: '${d.name}' given twice`, 'dimensions');
      names.add(d.name);
    }
    this.metrics = req.metrics.map((m, i) => this.metric(m, `metrics[${i}]`));
    for (const m of this.metrics) {
      if (names.has(m.name)) throw unknown(`metrics: '${m.name}' given twice`, 'metrics');
      names.add(m.name);
    }
    if (req.top) {
      const d = this.dimensions.find((x) => x.name === req.top!.dimension);
      if (!d) throw unknown(`top.dimension: '${req.top.dimension}' is not one of the dimensions`, 'top.dimension');
      if (d.kind === 'time' || d.kind === 'bool') throw unknown(`top.dimension: '${d.name}' has no top values to keep`, 'top.dimension');
    }
    (req.order_by ?? []).forEach((o, i) => {
      if (!names.has(o.field))
        throw unknown(`order_by[${i}].field: '${o.field}' is not a dimension or metric of the query`, `order_by[${i}].field`);
    });
    if (req.bucket && req.bucket_seconds) throw unknown('bucket: give bucket or bucket_seconds, not both', 'bucket');
    if (req.bucket === 'auto') throw unknown('bucket: auto is resolved to bucket_seconds before planning', 'bucket');
    this.factsConds = this.factsConditionsOf();
  }

  /** What the catalogue's terms are handed: this query's rows (a call's, or a model's of it), its bucket, the calls' model's SQL. */
  private readonly x: SqlContext = {
    byModel: false,
    usage: CALL_USAGE,
    latency: latencySql,
    cost: (usage) => callTotalCostSql(this.projectSql, usage),
    opBase: opBaseNameSql,
    timeBucket: () => {
      const b = this.req.bucket_seconds;
      return b ? `toStartOfInterval(started_at, toIntervalSecond(${this.p.add(b, 'UInt32')}))` : BUCKET_SQL[this.req.bucket ?? 'day']!;
    },
  };

  /** A catalogue row's SQL over calls and over fact rows, the columns each reads noted. */
  private terms(row: { calls: TermOf; facts?: TermOf }): { sql: string; factsSql?: string } {
    const calls = termOf(row, this.x, false);
    const facts = row.facts ? termOf(row, this.x, true) : calls;
    for (const c of calls.reads ?? []) this.columns.add(c);
    for (const c of facts.reads ?? []) this.factColumns.add(c);
    return row.facts ? { sql: calls.sql, factsSql: facts.sql } : { sql: calls.sql };
  }

  private dimension(name: string, field: string): Dimension {
    const row = dimensionRow(name);
    if (row) {
      if (row.byModel) {
        // Every token and cost figure then reads the row's one usage entry (a model's).
        this.usesUsage = true;
        this.modelRows = true;
        Object.assign(this.x, { byModel: true, usage: MODEL_USAGE });
      }
      if (row.parentOp) this.parentOp = true;
      return { name, kind: row.kind, ...this.terms(row) };
    }
    const raw = this.jsonRaw(name, field, 'dimension');
    if (raw) return { name, sql: `nullIf(nullIf(${raw}, ''), 'null')`, kind: 'json' };
    throw unknown(`${field}: unknown dimension '${name}' (${DIMENSION_CHOICES_TEXT})`, field);
  }

  /** The raw JSON text at a dotted path under a call's attributes, inputs, output or summary ('' when absent); null for other names. */
  private jsonRaw(path: string, field: string, what: string): string | null {
    const [root, ...rest] = splitFieldPath(path);
    if (!(JSON_ROOTS as readonly string[]).includes(root!) || !path.startsWith(`${root}.`)) return null;
    if (rest.length === 0 || rest.some((k) => k === '')) throw unknown(`${field}: ${what} path '${path}' has an empty segment`, field);
    const dump = `${root}_dump`;
    this.columns.add(dump);
    const keys = rest.map((k) => (/^\d+$/.test(k) && k.length < 10 ? this.p.add(Number(k) + 1, 'Int64') : this.p.str(k))).join(', ');
    return `JSONExtractRaw(ifNull(${dump}, ''), ${keys})`;
  }

  private metric(name: string, field: string): Metric {
    const row = metricRow(name);
    if (row) {
      if (row.usage) this.usesUsage = true;
      return { name, ...(row.usage ? { usage: true } : {}), ...this.terms(row) };
    }
    const agg = PATH_METRIC.exec(name);
    if (agg) {
      const raw = this.jsonRaw(agg[2]!, field, 'metric');
      if (!raw) throw unknown(`${field}: '${agg[2]}' is not a path under attributes., inputs., output. or summary.`, field);
      return { name, sql: PATH_AGGREGATES[agg[1]!]!(`toFloat64OrNull(${raw})`) };
    }
    throw unknown(`${field}: unknown metric '${name}' (${METRIC_CHOICES_TEXT})`, field);
  }

  /**
   * The rows a query groups, then the joins the dimensions need: `all`, the matched calls with
   * their own usage when read (and with `model`, a row per model of it); `calls`, the matched
   * calls without usage; `usage`, only the matched calls that have usage, with their own.
   */
  private fromSql(rows: 'all' | 'calls' | 'usage'): string {
    const conds = this.factsConds;
    let calls: string;
    if (conds && this.facts) {
      // Facts answer every metric in one pass over rows with their own usage (query()): `rows` is 'all'.
      const split = factsSplit(this.p, this.projectSql, this.facts);
      const factCols = [...this.factColumns];
      calls = factRowsSql(this.projectSql, split.segments, factCols, [...conds, ...split.factConds]);
      if (split.calls) {
        // The other ranges' matched calls (and the patched segments' touched ones), computed into the same columns.
        const slice = { cond: split.calls.cond, small: true };
        const cols = callColumnsFor(factCols);
        let rest = this.plan.matchedCallsSql(this.p, cols, undefined, slice);
        if (cols.includes('usage')) rest = withOwnUsageSql(rest, cols, this.projectSql, split.calls.of);
        calls = `${calls}\n  UNION ALL\n  ${asFactRowsSql(factCols, rest, this.projectSql)}`;
      }
    } else {
      const cols = [...this.columns, ...(rows === 'calls' || !this.usesUsage ? [] : ['usage'])];
      const endsOnly = rows === 'usage' ? 'notEmpty(usage)' : undefined;
      calls = this.plan.matchedCallsSql(this.p, cols, endsOnly);
      if (cols.includes('usage')) calls = withOwnUsageSql(calls, cols, this.projectSql);
    }
    let from = `(${calls}) AS c`;
    // A call's row per model of its own usage; a call without usage keeps one row (model NULL).
    if (this.modelRows)
      from +=
        conds && this.factColumns.has('usage_cost')
          ? ' LEFT ARRAY JOIN c.usage AS own_u, c.usage_cost AS own_cost'
          : ' LEFT ARRAY JOIN c.usage AS own_u';
    if (this.parentOp) {
      from += `\n  LEFT JOIN (SELECT id AS parent_call_id, any(op_name) AS parent_op_name FROM calls_starts
      WHERE project_id = ${this.projectSql} AND id IN (SELECT parent_id FROM calls_starts WHERE project_id = ${this.projectSql} AND parent_id IS NOT NULL)
      GROUP BY id) AS po ON po.parent_call_id = c.parent_id`;
    }
    return from;
  }

  /**
   * The conditions as they read facts rows, when facts answer for some segments (there are current
   * ones, and every column the query reads is one facts keep); else null.
   */
  private factsConditionsOf(): string[] | null {
    if (!readsFacts(this.facts)) return null;
    if (![...this.columns].every((c) => FACT_COLUMNS.has(c))) return null;
    return this.plan.conditionsOver(FACT_COLUMNS);
  }

  /** A metric's or dimension's SQL over this query's rows (fact rows' columns when read from facts). */
  private sqlOf(x: Metric | Dimension): string {
    return this.readsFacts && x.factsSql ? x.factsSql : x.sql;
  }

  /** Whether this query reads facts for some segments. */
  get readsFacts(): boolean {
    return this.factsConds !== null;
  }

  /** Whether some of the segments it reads from facts are patched (FactsCoverage.patched). */
  get readsPatchedFacts(): boolean {
    return this.readsFacts && !!this.facts?.patched?.segments.length;
  }

  /** The dimensions' SELECT terms (d0…); a `top` dimension ranked over `rankFrom`'s rows. */
  private dimensionTerms(rankFrom: string): string[] {
    return this.dimensions.map((d, i) => {
      let sql = this.sqlOf(d);
      if (this.req.top?.dimension === d.name) {
        // The top n values by calls; the rest folded into one value.
        const top = `SELECT ${sql} AS v FROM ${rankFrom} GROUP BY v ORDER BY count() DESC, v LIMIT ${this.p.int(this.req.top.n)}`;
        sql = `if(${sql} IN (${top}), ${sql}, ${this.p.str(OTHER_VALUE)})`;
      }
      return `${sql} AS d${i}`;
    });
  }

  private groupBy(): string {
    return this.dimensions.length ? `\n  GROUP BY ${this.dimensions.map((_, i) => `d${i}`).join(', ')}` : '';
  }

  /** Whether every metric is read in one pass over the rows (else call and usage figures are read apart, then joined by group). */
  private get onePass(): boolean {
    // Facts rows carry their own usage and its costs.
    return !this.usesUsage || this.modelRows || this.readsFacts;
  }

  /**
   * Whether the answer's `totals` come with the groups, from the same scan: a grouping set of no
   * dimension beside the request's. Else (no dimension: the one row is the totals; or figures
   * read apart) they are the answer of `totalsRequest()`, when asked for.
   */
  get totalsInline(): boolean {
    return this.req.totals && this.dimensions.length > 0 && this.onePass;
  }

  /** The request whose one row is this one's totals: no dimension, nothing folded, ordered or limited. */
  totalsRequest(): AnalyticsQueryReq {
    return { ...this.req, dimensions: [], top: undefined, order_by: undefined, totals: true };
  }

  query(): BuiltQuery {
    const p = this.p;
    let sql: string;
    if (this.onePass) {
      const from = this.fromSql('all');
      const select = [...this.dimensionTerms(from), ...this.metrics.map((m, i) => `${this.sqlOf(m)} AS m${i}`)];
      if (this.totalsInline) {
        const dims = this.dimensions.map((_, i) => `d${i}`).join(', ');
        select.push(`grouping(${dims}) != 0 AS _total`);
        sql = `SELECT ${select.join(', ')}\n  FROM ${from}\n  GROUP BY GROUPING SETS ((${dims}), ())`;
      } else sql = `SELECT ${select.join(', ')}\n  FROM ${from}${this.groupBy()}`;
    } else {
      // Usage is read only where there is some: the call figures over every matched call, the
      // usage figures over the calls with usage (a quarter of the bench's), joined by group.
      const calls = this.fromSql('calls');
      const usage = this.fromSql('usage');
      const none = `CAST(NULL, 'Nullable(Float64)')`;
      const side = (from: string, usageSide: boolean) =>
        `SELECT ${[
          ...this.dimensionTerms(calls),
          ...this.metrics.map((m, i) => `${!!m.usage === usageSide ? `toNullable(toFloat64(${this.sqlOf(m)}))` : none} AS m${i}`),
        ].join(', ')}\n  FROM ${from}${this.groupBy()}`;
      const outer = [
        ...this.dimensions.map((_, i) => `d${i}`),
        ...this.metrics.map((m, i) => (m.usage ? `ifNull(max(m${i}), 0) AS m${i}` : `max(m${i}) AS m${i}`)),
      ];
      sql = `SELECT ${outer.join(', ')} FROM (\n  ${side(calls, false)}\n  UNION ALL\n  ${side(usage, true)}\n)${this.groupBy()}`;
    }
    const alias = (name: string) => {
      const d = this.dimensions.findIndex((x) => x.name === name);
      return d >= 0 ? `d${d}` : `m${this.metrics.findIndex((x) => x.name === name)}`;
    };
    const order = (this.req.order_by ?? this.defaultOrder()).map(
      (o) => `${alias(o.field)} ${o.direction === 'asc' ? 'ASC' : 'DESC'} NULLS LAST`,
    );
    // Every dimension last, so rows with equal sort values come in one order.
    order.push(...this.dimensions.map((_, i) => `d${i} ASC NULLS LAST`));
    // The totals row first, outside the limit.
    if (this.totalsInline) order.unshift('_total DESC');
    const limit = this.req.limit + 1 + (this.totalsInline ? 1 : 0);
    sql += `\n  ORDER BY ${order.join(', ')}\n  LIMIT ${p.int(limit)}\n  SETTINGS transform_null_in = 1`;
    return { sql, params: p.values };
  }

  private defaultOrder(): { field: string; direction: 'asc' | 'desc' }[] {
    if (this.dimensions.some((d) => d.kind === 'time')) return [{ field: 'time', direction: 'asc' }];
    return [{ field: this.metrics[0]!.name, direction: 'desc' }];
  }

  /** The answer's rows, named, from the query's (d0…, m0…) rows: `limit` of them, and whether more matched. */
  rows(raw: Record<string, unknown>[]): { rows: Record<string, unknown>[]; truncated: boolean; totals?: Record<string, number | null> } {
    const totalsRow = this.totalsInline && raw[0] && Number(raw[0]._total) === 1 ? raw[0] : undefined;
    const groups = totalsRow ? raw.slice(1) : raw;
    const truncated = groups.length > this.req.limit;
    const rows = groups.slice(0, this.req.limit).map((r) => {
      const out: Record<string, unknown> = {};
      this.dimensions.forEach((d, i) => (out[d.name] = dimensionValue(d.kind, r[`d${i}`])));
      Object.assign(out, this.metricValues(r));
      return out;
    });
    if (totalsRow) return { rows, truncated, totals: this.metricValues(totalsRow) };
    // No dimension: the one row is the totals.
    if (this.req.totals && this.dimensions.length === 0) return { rows, truncated, totals: groups[0] ? this.metricValues(groups[0]) : {} };
    return { rows, truncated };
  }

  /** The metrics of a query row, by name. */
  private metricValues(r: Record<string, unknown>): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    this.metrics.forEach((m, i) => {
      const v = r[`m${i}`];
      // Rounded at the edge: sums and averages of floats carry noise in their last digits.
      out[m.name] = v === null || v === undefined ? null : roundFigure(Number(v));
    });
    return out;
  }
}

function dimensionValue(kind: DimensionKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'time':
      return new Date(Number(v) * 1000).toISOString();
    case 'bool':
      return Number(v) === 1;
    case 'json':
      if (v === OTHER_VALUE) return v;
      try {
        return JSON.parse(String(v));
      } catch {
        return String(v);
      }
    default:
      return v;
  }
}

const unknown = (reason: string, field: string) => new ApiError(422, reason, { field });

/** The request's query with its time range (`from` inclusive, `to` exclusive) on started_at added as top-level terms. */
function withTimeRange(req: AnalyticsQueryReq): { $expr: Record<string, unknown> } | undefined {
  const terms: unknown[] = [];
  if (req.query) {
    const and = (req.query.$expr as { $and?: unknown }).$and;
    if (Array.isArray(and)) terms.push(...(and as unknown[]));
    else terms.push(req.query.$expr);
  }
  const started = { $getField: 'started_at' };
  if (req.from) terms.push({ $gte: [started, { $literal: req.from }] });
  if (req.to) terms.push({ $not: [{ $gte: [started, { $literal: req.to }] }] });
  if (terms.length === 0) return undefined;
  return { $expr: terms.length === 1 ? (terms[0] as Record<string, unknown>) : { $and: terms } };
}

/** Bucket widths a person reads easily, smallest first. */
const NICE_BUCKETS = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400];

/**
 * The smallest nice width giving at most `maxBuckets` buckets over [minUs, maxUs]: a time
 * dimension's `bucket: 'auto'` over rangeQuery's range, and /calls/aggregate's buckets when not given.
 */
export function chooseBucketSeconds(minUs: number, maxUs: number, maxBuckets = 120): number {
  const span = Math.max(0, maxUs - minUs) / 1e6;
  return NICE_BUCKETS.find((b) => span / b < maxBuckets) ?? NICE_BUCKETS[NICE_BUCKETS.length - 1]!;
}
