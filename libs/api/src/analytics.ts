import { DIMENSION_CHOICES_TEXT, DIMENSION_NAMES, METRIC_CHOICES_TEXT, METRIC_NAMES, PATH_DIMENSION, PATH_METRIC } from '@weft/analytics';
import { z } from 'zod';
import { callFilter, limit, projectId, query, timestamp } from './common';
import { callsStreamQueryReq } from './calls';
import type { RouteSpec } from './spec';

/**
 * Read endpoints the web UI needs beyond the interface (listed as extras in /openapi.json):
 * the projects a key can see, and aggregate series of calls computed in ClickHouse.
 */

export const projectsListReq = z.object({
  entity: z.string().min(1).optional().describe("only this entity's projects (default: every entity the key may use)"),
  limit: limit.max(10_000).optional().describe('most projects returned, most recently active first (absent or 0: 1000)'),
});
export type ProjectsListReq = z.infer<typeof projectsListReq>;

export const projectSummary = z.object({
  project_id: z.string(),
  call_count: z.number().int().describe('calls stored in the project (started, not deleted)'),
  object_count: z.number().int().describe('object and op versions'),
  last_activity: z.string().nullable().describe('latest call start or object version, ISO 8601'),
});
export const projectsListRes = z.object({ projects: z.array(projectSummary) });
export type ProjectSummary = z.infer<typeof projectSummary>;

/** A time bucket's width in seconds: a second to a year. */
const bucketSeconds = z
  .number()
  .int()
  .min(1)
  .max(366 * 86_400);

export const callsAggregateReq = z.object({
  project_id: projectId,
  filter: callFilter.optional(),
  query: query.optional(),
  bucket_seconds: bucketSeconds.optional().describe('width of a time bucket (default: chosen for ≤ 120 buckets over the calls matched)'),
});
export type CallsAggregateReq = z.infer<typeof callsAggregateReq>;

const latency = { p50_latency_ms: z.number().nullable(), p99_latency_ms: z.number().nullable() };
const usage = {
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost: z.number().describe("USD, from summary.usage and the price in force at each call's start (as include_costs)"),
};
export const callsAggregateRes = z.object({
  bucket_seconds: z.number().int(),
  totals: z.object({ calls: z.number().int(), errors: z.number().int(), ...latency, ...usage }),
  series: z.array(z.object({ start: z.string(), calls: z.number().int(), errors: z.number().int(), ...latency })),
  by_op: z.array(z.object({ op_name: z.string(), calls: z.number().int(), errors: z.number().int(), ...latency, ...usage })),
  by_model: z.array(z.object({ model: z.string(), calls: z.number().int(), requests: z.number().int(), ...usage })),
});
export type CallsAggregateRes = z.infer<typeof callsAggregateRes>;

/** The time buckets a metrics query can group by (`bucket`), as ClickHouse's toStartOf… functions. */
export const METRIC_BUCKETS = ['auto', 'minute', 'hour', 'day', 'week', 'month'] as const;
/**
 * A metric's name: one of the analytics catalogue's (@weft/analytics, listed as an enum), or an
 * aggregate of a dotted JSON path (its path is checked by the planner, which names a bad one).
 */
const unknownMetric = (issue: { input?: unknown }) => `unknown metric '${String(issue.input)}' (${METRIC_CHOICES_TEXT})`;
export const analyticsMetric = z.union(
  [z.enum(METRIC_NAMES, { error: unknownMetric }), z.string().regex(PATH_METRIC, { error: unknownMetric })],
  {
    error: unknownMetric,
  },
);
/** A dimension's name: one of the catalogue's, or a dotted path under attributes., inputs., output. or summary. */
const unknownDimension = (issue: { input?: unknown }) => `unknown dimension '${String(issue.input)}' (${DIMENSION_CHOICES_TEXT})`;
export const analyticsDimension = z.union(
  [z.enum(DIMENSION_NAMES, { error: unknownDimension }), z.string().regex(PATH_DIMENSION, { error: unknownDimension })],
  { error: unknownDimension },
);

export const analyticsQueryReq = z.object({
  project_id: projectId,
  dimensions: z
    .array(analyticsDimension)
    .max(6)
    .default([])
    .describe(`group-by names: ${DIMENSION_CHOICES_TEXT} (a dotted path under one of them)`),
  metrics: z
    .array(analyticsMetric)
    .min(1)
    .max(30)
    .describe(
      `${METRIC_CHOICES_TEXT}, <path> a dotted path under attributes., inputs., output. or summary.; units and meanings: docs/analytics.md`,
    ),
  filter: callFilter.optional(),
  query: query.optional(),
  from: timestamp.optional().describe('calls started at or after (ISO 8601)'),
  to: timestamp.optional().describe('calls started before (ISO 8601)'),
  bucket: z
    .enum(METRIC_BUCKETS)
    .optional()
    .describe('width of the `time` dimension (default: day); auto: a round width giving at most 120 buckets over the calls matched'),
  bucket_seconds: bucketSeconds.optional().describe('width of the `time` dimension in seconds (instead of `bucket`)'),
  top: z
    .object({ dimension: z.string().min(1), n: z.number().int().min(1).max(1000) })
    .optional()
    .describe('keep this dimension\'s n values with the most calls; the others are folded into one value, "__other__"'),
  order_by: z
    .array(z.object({ field: z.string().min(1), direction: z.enum(['asc', 'desc']).default('desc') }))
    .max(8)
    .optional()
    .describe('metric or dimension names (default: time ascending if grouped by time, else the first metric descending)'),
  limit: z.number().int().min(1).max(10_000).default(1000).describe('most rows returned; `truncated` says when more matched'),
  totals: z
    .boolean()
    .default(false)
    .describe(
      'also answer `totals`: each metric over every call matched (not cut by `limit`, nothing folded by `top`), from the same scan',
    ),
});
export type AnalyticsQueryReq = z.infer<typeof analyticsQueryReq>;

export const analyticsQueryRes = z.object({
  rows: z.array(z.record(z.string(), z.unknown())).describe('one object per group: each dimension and metric by its name'),
  truncated: z.boolean().describe('more groups matched than `limit`'),
  bucket_seconds: z.number().int().optional().describe('the width of the `time` buckets when `bucket` is auto or bucket_seconds'),
  totals: z
    .record(z.string(), z.number().nullable())
    .optional()
    .describe('with `totals: true`: each metric over every call matched, by its name'),
});
export type AnalyticsQueryRes = z.infer<typeof analyticsQueryRes>;

/** A query's refusal inside a batch: what /analytics/query would have answered it alone. */
export const analyticsBatchError = z.object({
  error: z.object({ status: z.number().int(), reason: z.string(), field: z.string().optional() }),
});
export const analyticsBatchReq = z.object({
  project_id: projectId,
  queries: z
    .array(z.record(z.string(), z.unknown()))
    .min(1)
    .max(50)
    .describe(
      "a dashboard's queries, each an /analytics/query body (its project_id is the batch's); each is checked on its own, so a bad one gets its error in its answer",
    ),
});
export type AnalyticsBatchReq = z.infer<typeof analyticsBatchReq>;
export const analyticsBatchRes = z.object({
  answers: z
    .array(z.union([analyticsQueryRes, analyticsBatchError]))
    .describe(
      'one per query, in order: the answer /analytics/query gives it alone, or its error; queries over the same calls and groups are answered by one scan',
    ),
});
export type AnalyticsBatchRes = z.infer<typeof analyticsBatchRes>;

/** The formats /calls/export writes. */
export const EXPORT_FORMATS = ['jsonl', 'csv', 'parquet'] as const;
/** The flat columns of a CSV or Parquet export, in this order (objects as JSON text). */
export const CALL_EXPORT_COLUMNS = [
  'id',
  'project_id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'thread_id',
  'turn_id',
  'started_at',
  'ended_at',
  'status',
  'latency_ms',
  'exception',
  'svc_user_id',
  'svc_run_id',
  'inputs',
  'output',
  'attributes',
  'summary',
] as const;
export type CallExportColumn = (typeof CALL_EXPORT_COLUMNS)[number];

export const callsExportReq = callsStreamQueryReq
  .pick({ project_id: true, filter: true, query: true, sort_by: true, limit: true, offset: true, include_costs: true })
  .extend({
    format: z.enum(EXPORT_FORMATS).describe('jsonl: the Calls as /calls/stream_query sends them; csv and parquet: one flat row per call'),
    columns: z
      .array(z.enum(CALL_EXPORT_COLUMNS))
      .min(1)
      .optional()
      .describe('the columns of a csv or parquet export (default: all), or the top-level fields of a jsonl one'),
  });
export type CallsExportReq = z.infer<typeof callsExportReq>;

export const tableExportReq = z.object({
  project_id: projectId,
  digest: z.string().min(1).describe("the table's digest (a Dataset's `rows` ref names it)"),
  format: z.enum(EXPORT_FORMATS).describe('jsonl: each row as stored; csv and parquet: a column per row key'),
  columns: z
    .array(z.string().min(1))
    .min(1)
    .max(1000)
    .optional()
    .describe('the columns of a csv or parquet export (default: every key of any row)'),
});
export type TableExportReq = z.infer<typeof tableExportReq>;

/** Analytics and exports (the web UI's; published in /openapi.json): projects, aggregates, metrics queries, calls and tables as downloads. */
export const analyticsRouteSpecs = {
  projectsList: {
    path: '/projects/list',
    summary: 'Projects the key can see, with call counts and last activity',
    auth: 'basic',
    service: 'query',
    request: projectsListReq,
    response: projectsListRes,
    published: true,
  },
  callsAggregate: {
    path: '/calls/aggregate',
    summary: 'Calls, errors, latency, tokens and cost over time, per op and per model',
    auth: 'basic',
    service: 'query',
    request: callsAggregateReq,
    response: callsAggregateRes,
    published: true,
    lane: 'heavy',
  },
  callsExport: {
    path: '/calls/export',
    summary: 'The calls a query matches as a download: JSONL, CSV or Parquet, streamed',
    auth: 'basic',
    service: 'query',
    request: callsExportReq,
    response: z.string().describe('the file: application/jsonl, text/csv or application/vnd.apache.parquet'),
    // Streamed page by page: a limit as large as a stream's (WEFT_MAX_STREAM_LIMIT).
    stream: 'file',
    published: true,
    lane: 'heavy',
  },
  tableExport: {
    path: '/table/export',
    summary: "A table's rows (a dataset's) as a download: JSONL, CSV or Parquet, streamed",
    auth: 'basic',
    service: 'query',
    request: tableExportReq,
    response: z.string().describe('the file: application/jsonl, text/csv or application/vnd.apache.parquet'),
    stream: 'file',
    published: true,
    lane: 'heavy',
  },
  analyticsQuery: {
    path: '/analytics/query',
    summary: 'Metrics over calls grouped by dimensions and time (counts, errors, latency quantiles, tokens, cost)',
    auth: 'basic',
    service: 'query',
    request: analyticsQueryReq,
    response: analyticsQueryRes,
    published: true,
    lane: 'heavy',
  },
  analyticsBatch: {
    path: '/analytics/batch',
    summary:
      "A dashboard's /analytics/query bodies in one request: each one's answer (or error), queries over the same calls read in one scan",
    auth: 'basic',
    service: 'query',
    request: analyticsBatchReq,
    response: analyticsBatchRes,
    published: true,
    lane: 'heavy',
  },
} as const satisfies Record<string, RouteSpec>;
