import { z } from 'zod';
import { emptyObject, limit, offset, projectId, query, sortBy, timestamp } from './common';
import type { RouteSpec } from './spec';

export const costRecord = z.object({
  id: z.string().optional(),
  llm_id: z.string().optional(),
  prompt_token_cost: z.number().optional(),
  completion_token_cost: z.number().optional(),
  prompt_token_cost_unit: z.string().optional(),
  completion_token_cost_unit: z.string().optional(),
  effective_date: z.string().optional(),
  provider_id: z.string().optional(),
});
export const costQueryReq = z.object({
  project_id: projectId,
  fields: z.array(z.string()).optional(),
  query: query.optional(),
  sort_by: sortBy.optional(),
  limit: limit.optional(),
  offset: offset.optional(),
});
export const costQueryRes = z.object({ results: z.array(costRecord) });

/** POST /cost/create (the reference's SDK endpoint, outside the 20): project-level prices. */
export const costCreateReq = z.object({
  project_id: projectId,
  costs: z.record(
    z.string().min(1),
    z.object({
      prompt_token_cost: z.number().min(0),
      completion_token_cost: z.number().min(0),
      prompt_token_cost_unit: z.string().min(1).default('USD'),
      completion_token_cost_unit: z.string().min(1).default('USD'),
      cache_read_input_token_cost: z.number().min(0).default(0),
      cache_creation_input_token_cost: z.number().min(0).default(0),
      effective_date: timestamp.nullish(),
      provider_id: z.string().min(1).nullish(),
    }),
  ),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});
export type CostCreateReq = z.infer<typeof costCreateReq>;
export const costCreateRes = z.object({ ids: z.array(z.tuple([z.string(), z.string()])) });
/** The reference's CostPurgeReq: the query names the project prices to remove by id. */
export const costPurgeReq = z.object({ project_id: projectId, query });

/** Project-level prices beyond /cost/query: the reference SDK's create and purge. */
export const costRouteSpecs = {
  costCreate: {
    path: '/cost/create',
    summary: 'Add project-level prices',
    auth: 'basic',
    service: 'query',
    request: costCreateReq,
    response: costCreateRes,
  },
  costPurge: {
    path: '/cost/purge',
    summary: 'Remove project-level prices by id',
    auth: 'basic',
    service: 'query',
    request: costPurgeReq,
    response: emptyObject,
  },
} as const satisfies Record<string, RouteSpec>;
