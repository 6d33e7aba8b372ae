import { z } from 'zod';
import { anyJson, jsonObject, limit, offset, projectId, query, sortBy, sortDirection, tableSortBy, timestamp } from './common';

export const objCreateReq = z.object({
  obj: z.object({
    project_id: projectId,
    object_id: z.string(),
    val: anyJson,
    builtin_object_class: z.string().nullish(),
    set_base_object_class: z.string().nullish(),
    svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
    expected_digest: z.string().nullish(),
  }),
});
export const objCreateRes = z.object({ digest: z.string(), object_id: z.string().nullable() });

export const objectVersion = z.object({
  project_id: z.string(),
  object_id: z.string(),
  created_at: z.string(),
  digest: z.string(),
  version_index: z.number().int(),
  is_latest: z.number().int(),
  kind: z.string(),
  base_object_class: z.string().nullable(),
  leaf_object_class: z.string().nullable(),
  val: anyJson,
  deleted_at: z.string().nullable(),
  svc_user_id: z.string().nullable(),
  size_bytes: z.number().int().nullable().optional(),
  tags: z.array(z.string()).optional().describe('with include_tags_and_aliases (Weave 0.54)'),
  aliases: z.array(z.string()).optional().describe('with include_tags_and_aliases (Weave 0.54)'),
});

export const objReadReq = z.object({
  project_id: projectId,
  object_id: z.string().min(1),
  // An empty digest names no version: 404, as the reference.
  digest: z.string().describe('a content digest, `latest`, `v<N>` or an alias (Weave 0.54)'),
  metadata_only: z.boolean().default(false),
  include_tags_and_aliases: z.boolean().default(false).describe("the version's tags and aliases too (Weave 0.54)"),
});
export const objReadRes = z.object({ obj: objectVersion });

export const objsQueryReq = z.object({
  project_id: projectId,
  filter: z
    .object({
      latest_only: z.boolean().optional(),
      object_ids: z.array(z.string()).optional(),
      is_op: z.boolean().optional(),
      base_object_classes: z.array(z.string()).optional(),
      exclude_base_object_classes: z.array(z.string()).optional(),
      leaf_object_classes: z.array(z.string()).optional(),
    })
    .optional(),
  limit: limit.optional(),
  offset: offset.optional(),
  sort_by: z.array(z.object({ field: z.string(), direction: sortDirection })).optional(),
  include_tags_and_aliases: z.boolean().default(false).describe("each version's tags and aliases too (Weave 0.54)"),
  metadata_only: z.boolean().default(false),
  include_storage_size: z.boolean().default(false),
});
export const objsQueryRes = z.object({ objs: z.array(objectVersion) });

export const tableRow = z.object({ digest: z.string(), val: anyJson, original_index: z.number().int() });

export const tableQueryReq = z.object({
  project_id: projectId,
  digest: z.string().min(1),
  filter: z.object({ row_digests: z.array(z.string()).optional() }).optional(),
  limit: limit.optional(),
  offset: offset.optional(),
  sort_by: tableSortBy.optional(),
});
export const tableQueryRes = z.object({ rows: z.array(tableRow) });

const tableUpdateSpec = z.union([
  z.object({ append: z.object({ row: jsonObject }) }),
  z.object({ pop: z.object({ index: z.number().int() }) }),
  z.object({ insert: z.object({ index: z.number().int(), row: jsonObject }) }),
]);
export const tableUpdateReq = z.object({
  project_id: projectId,
  base_digest: z.string().min(1),
  updates: z.array(tableUpdateSpec),
});
export const tableUpdateRes = z.object({ digest: z.string(), updated_row_digests: z.array(z.string()) });

export const tableCreateReq = z.object({
  table: z.object({ project_id: projectId, rows: z.array(jsonObject) }),
});
export const tableCreateRes = z.object({ digest: z.string(), row_digests: z.array(z.string()) });

export const feedbackReplaceReq = z.object({
  project_id: projectId,
  svc_ref: z.string().min(1),
  feedback_type: z.string().min(1),
  payload: jsonObject,
  feedback_id: z.string().min(1),
  id: z.string().nullish(),
  creator: z.string().nullish(),
  annotation_ref: z.string().nullish(),
  runnable_ref: z.string().nullish(),
  call_ref: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  queue_id: z.string().nullish().describe('the annotation queue the feedback was given in'),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});
export const feedbackReplaceRes = z.object({
  id: z.string(),
  created_at: z.string(),
  svc_user_id: z.string(),
  payload: jsonObject,
});

export const feedbackQueryReq = z.object({
  project_id: projectId,
  fields: z.array(z.string()).optional(),
  query: query.optional(),
  sort_by: sortBy.optional(),
  limit: limit.optional(),
  offset: offset.optional(),
});
export const feedbackQueryRes = z.object({ result: z.array(jsonObject) });

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
