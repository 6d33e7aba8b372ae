import { z } from 'zod';
import { callFilter, projectId, query } from './common';
import type { RouteSpec } from './spec';

/**
 * Usage and storage figures the reference serves beyond the interface (Weave 0.52's
 * TraceUsageReq, CallsUsageReq, ProjectStatsReq): token and cost totals per call with its
 * descendants, and a project's storage.
 */

/** The reference's safety bound on the calls one usage request reads. */
export const USAGE_MAX_CALLS = 10_000;
const usageLimit = z.number().int().min(1).max(USAGE_MAX_CALLS).default(USAGE_MAX_CALLS).describe('most calls read');

export const traceUsageReq = z.object({
  project_id: projectId,
  filter: callFilter.optional().describe('the calls: typically `trace_ids`'),
  query: query.optional(),
  include_costs: z.boolean().default(false),
  limit: usageLimit,
});

export const callsUsageReq = z.object({
  project_id: projectId,
  call_ids: z.array(z.string()).max(USAGE_MAX_CALLS).describe('root calls: each answer key is one of them'),
  include_costs: z.boolean().default(false),
  limit: usageLimit,
});

const modelUsage = z.object({
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_total_cost: z.number().nullable(),
  completion_tokens_total_cost: z.number().nullable(),
});

export const callUsageRes = z.object({
  call_usage: z
    .record(z.string(), z.record(z.string(), modelUsage))
    .describe("per call id, per model: the call's own usage and its descendants', each LLM request counted once"),
  unfinished_call_ids: z.array(z.string()).describe('calls read that have not ended'),
});

export const projectStatsReq = z.object({
  project_id: projectId,
  include_trace_storage_size: z.boolean().default(true),
  include_object_storage_size: z.boolean().default(true),
  include_table_storage_size: z.boolean().default(true),
  include_file_storage_size: z.boolean().default(true),
});

export const projectStatsRes = z.object({
  trace_storage_size_bytes: z.number().int(),
  objects_storage_size_bytes: z.number().int(),
  tables_storage_size_bytes: z.number().int(),
  files_storage_size_bytes: z.number().int(),
});

/** Token and cost usage of calls and traces; the bytes a project stores. */
export const usageRouteSpecs = {
  traceUsage: {
    path: '/trace/usage',
    summary: 'Token and cost usage per call, with its descendants',
    auth: 'basic',
    service: 'query',
    request: traceUsageReq,
    response: callUsageRes,
  },
  callsUsage: {
    path: '/calls/usage',
    summary: 'Token and cost usage of root calls, with their descendants',
    auth: 'basic',
    service: 'query',
    request: callsUsageReq,
    response: callUsageRes,
  },
  projectStats: {
    path: '/project/stats',
    summary: "Bytes of a project's calls, objects, tables and files",
    auth: 'basic',
    service: 'query',
    request: projectStatsReq,
    response: projectStatsRes,
  },
} as const satisfies Record<string, RouteSpec>;
