import { z } from 'zod';
import { callFilter, limit, projectId, query } from './common';

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

export const callsAggregateReq = z.object({
  project_id: projectId,
  filter: callFilter.optional(),
  query: query.optional(),
  bucket_seconds: z
    .number()
    .int()
    .min(1)
    .max(366 * 86_400)
    .optional()
    .describe('width of a time bucket (default: chosen for ≤ 120 buckets over the calls matched)'),
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
