import { z } from 'zod';
import { anyJson, callFilter, jsonObject, limit, offset, projectId, query, sortBy, storedTimestamp, timestamp } from './common';
import type { RouteSpec } from './spec';

const optStr = z.string().nullish();

export const callStartBody = z.object({
  project_id: projectId,
  id: optStr,
  op_name: z.string().min(1),
  display_name: optStr,
  trace_id: optStr,
  parent_id: optStr,
  thread_id: optStr,
  turn_id: optStr,
  started_at: storedTimestamp,
  attributes: jsonObject.default({}),
  inputs: jsonObject.default({}),
  otel_dump: jsonObject.nullish(),
  svc_user_id: optStr.describe('ignored: the server sets it from the caller'),
  svc_run_id: optStr,
  svc_run_step: z.number().int().min(0).nullish(),
});
export type CallStartBody = z.infer<typeof callStartBody>;

export const callEndBody = z.object({
  project_id: projectId,
  id: z.string().min(1),
  ended_at: storedTimestamp,
  summary: z.object({ usage: jsonObject.optional(), status_counts: jsonObject.optional() }).catchall(z.unknown()).default({}),
  exception: optStr,
  output: anyJson.optional(),
  svc_run_step_end: z.number().int().min(0).nullish(),
  trace_id: optStr.describe("the call's trace (the Weave SDK sends it since 0.54): ingest sampling decides an end by it; not stored"),
});
export type CallEndBody = z.infer<typeof callEndBody>;

export const callStartReq = z.object({ start: callStartBody });
export const callStartRes = z.object({ id: z.string(), trace_id: z.string() });
export const callEndReq = z.object({ end: callEndBody });
export const callEndRes = z.object({});

export const upsertBatchItem = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('start'), req: callStartReq }),
  z.object({ mode: z.literal('end'), req: callEndReq }),
]);
export const callUpsertBatchReq = z.object({ batch: z.array(upsertBatchItem) });
export const callUpsertBatchRes = z.object({
  res: z.array(z.union([callStartRes, callEndRes])).describe('one entry per item: `{id, trace_id}` for a start, `{}` for an end'),
});

/** A call as returned by queries. */
export const call = z.object({
  id: z.string(),
  project_id: z.string(),
  op_name: z.string(),
  trace_id: z.string(),
  parent_id: z.string().nullable(),
  thread_id: z.string().nullable(),
  turn_id: z.string().nullable(),
  display_name: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  attributes: jsonObject,
  inputs: jsonObject,
  output: anyJson,
  exception: z.string().nullable(),
  summary: jsonObject.nullable(),
  svc_user_id: z.string().nullable(),
  svc_run_id: z.string().nullable(),
  svc_run_step: z.number().int().nullable(),
  svc_run_step_end: z.number().int().nullable(),
  deleted_at: z.string().nullable(),
  storage_size_bytes: z.number().int().nullable().optional(),
  total_storage_size_bytes: z.number().int().nullable().optional(),
});
export type Call = z.infer<typeof call>;

export const callsStreamQueryReq = z.object({
  project_id: projectId,
  filter: callFilter.optional(),
  limit: limit.optional(),
  offset: offset.optional(),
  sort_by: sortBy.optional(),
  query: query.optional(),
  include_costs: z.boolean().default(false),
  include_feedback: z.boolean().default(false),
  include_storage_size: z.boolean().default(false),
  include_total_storage_size: z.boolean().default(false),
  columns: z.array(z.string()).optional(),
  expand_columns: z.array(z.string()).optional(),
  return_expanded_column_values: z.boolean().default(true),
});
export type CallsStreamQueryReq = z.infer<typeof callsStreamQueryReq>;

export const callsQueryStatsReq = z.object({
  project_id: projectId,
  filter: callFilter.optional(),
  query: query.optional(),
  limit: limit.optional(),
  include_total_storage_size: z.boolean().default(false),
  expand_columns: z.array(z.string()).optional(),
});
export type CallsQueryStatsReq = z.infer<typeof callsQueryStatsReq>;
export const callsQueryStatsRes = z.object({
  count: z.number().int(),
  total_storage_size_bytes: z.number().int().nullable().optional(),
});

export const threadsStreamQueryReq = z.object({
  project_id: projectId,
  filter: z
    .object({
      after_datetime: timestamp.optional(),
      before_datetime: timestamp.optional(),
      thread_ids: z.array(z.string()).optional(),
    })
    .optional(),
  limit: limit.optional(),
  offset: offset.optional(),
  sort_by: sortBy.optional(),
});
export type ThreadsStreamQueryReq = z.infer<typeof threadsStreamQueryReq>;
export const thread = z.object({
  thread_id: z.string(),
  turn_count: z.number().int(),
  start_time: z.string(),
  last_updated: z.string(),
  first_turn_id: z.string().nullable(),
  last_turn_id: z.string().nullable(),
  p50_turn_duration_ms: z.number().nullable(),
  p99_turn_duration_ms: z.number().nullable(),
});

export const otelExportReq = z.object({
  project_id: projectId,
  traces: anyJson.describe('an OTLP ExportTraceServiceRequest in its JSON mapping'),
  svc_run_id: z.string().nullish(),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});
export const otelExportRes = z.object({
  partial_success: z.object({ rejected_spans: z.number().int(), error_message: z.string() }).nullish(),
});

/** A call finished before it is sent: its start and end together (the reference's CompletedCallSchemaForInsert). */
export const completedCall = callStartBody.extend({
  id: z.string().min(1),
  trace_id: z.string().min(1),
  ended_at: storedTimestamp,
  summary: callEndBody.shape.summary,
  exception: callEndBody.shape.exception,
  output: callEndBody.shape.output,
  svc_run_step_end: callEndBody.shape.svc_run_step_end,
});
export type CompletedCall = z.infer<typeof completedCall>;
export const callsCompleteReq = z.object({ batch: z.array(completedCall) });

export const callReadReq = z.object({
  project_id: projectId,
  id: z.string().min(1),
  include_costs: z.boolean().default(false),
  include_storage_size: z.boolean().default(false),
  include_total_storage_size: z.boolean().default(false),
});

/** The reference's MAX_DISPLAY_NAME_LENGTH. */
export const MAX_DISPLAY_NAME_CHARS = 1024;
export const callUpdateReq = z.object({
  project_id: projectId,
  call_id: z.string().min(1),
  display_name: z.string().max(MAX_DISPLAY_NAME_CHARS).optional(),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});

/** The reference's MAX_DELETE_CALLS_COUNT. */
export const MAX_DELETE_CALLS = 1000;
export const callsDeleteReq = z.object({
  project_id: projectId,
  call_ids: z.array(z.string().min(1)).max(MAX_DELETE_CALLS, `at most ${MAX_DELETE_CALLS} calls at a time`),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});

/** Calls beyond the interface's 20: the reference SDK's v2 write paths, rename, delete, one call's read. */
export const callRouteSpecs = {
  callsComplete: {
    path: '/v2/:entity/:project/calls/complete',
    summary: 'Write finished calls (start and end together)',
    auth: 'basic',
    service: 'gateway',
    request: callsCompleteReq,
  },
  callStartV2: {
    path: '/v2/:entity/:project/call/start',
    summary: 'Start a call (v2 path)',
    auth: 'basic',
    service: 'gateway',
    request: z.object({ start: callStartBody }),
  },
  callEndV2: {
    path: '/v2/:entity/:project/call/end',
    summary: 'End a call (v2 path)',
    auth: 'basic',
    service: 'gateway',
    request: z.object({ end: callEndBody }),
  },
  callUpdate: { path: '/call/update', summary: 'Rename a call', auth: 'basic', service: 'gateway', request: callUpdateReq },
  callsDelete: {
    path: '/calls/delete',
    summary: 'Delete calls and their descendants',
    auth: 'basic',
    service: 'gateway',
    request: callsDeleteReq,
  },
  callRead: { path: '/call/read', summary: 'Read one call', auth: 'basic', service: 'query', request: callReadReq },
} as const satisfies Record<string, RouteSpec>;
