import { z } from 'zod';
import { anyJson, limit, offset, projectId, serverCheck, sortDirection } from './common';
import type { RouteSpec } from './spec';

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

export const refsReadBatchReq = z.object({
  refs: z.array(z.string()).max(1000, 'Too many refs (at most 1000)'),
});
export const refsReadBatchRes = z.object({ vals: z.array(z.unknown()) });

/** The reference's limit of versions per /obj/delete. */
export const MAX_OBJECTS_TO_DELETE = 100;
export const objDeleteReq = z.object({
  project_id: projectId,
  object_id: z.string().min(1),
  digests: z
    .array(z.string().min(1))
    .superRefine((d, ctx) => {
      if (d.length > MAX_OBJECTS_TO_DELETE) {
        const message = `Object delete request contains ${d.length} objects. Please delete ${MAX_OBJECTS_TO_DELETE} or fewer objects at a time.`;
        ctx.addIssue({ code: 'custom', ...serverCheck(message) });
      }
    })
    .optional(),
});

/** Objects beyond the interface's 20: refs' values, deleting versions. */
export const objectRouteSpecs = {
  refsReadBatch: {
    path: '/refs/read_batch',
    summary: 'Read the values of object refs',
    auth: 'basic',
    service: 'query',
    request: refsReadBatchReq,
    response: refsReadBatchRes,
  },
  objDelete: { path: '/obj/delete', summary: 'Delete object versions', auth: 'basic', service: 'gateway', request: objDeleteReq },
} as const satisfies Record<string, RouteSpec>;
