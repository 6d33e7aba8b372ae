import { z } from 'zod';
import { projectId, sortDirection } from './common';
import type { RouteSpec } from './spec';

/**
 * Annotation queues (Weave 0.52.29's AnnotationQueue* models, served at the REST paths its
 * SDK and 0.54's vendored client call): queues of calls that people annotate, each item's
 * progress per annotator. The user ids (`created_by`, `added_by`, `annotator_user_id`) are
 * always the caller's, set by the server.
 */

const ignoredUserId = z.string().nullish().describe('ignored: the server sets it from the caller');
const queueId = z.string().min(1).describe('the queue id (a UUID)');
const optionalLimit = z.number().int().min(0).nullish().describe('0 or absent: no limit');
const optionalOffset = z.number().int().min(0).nullish();

export const ANNOTATION_STATES = ['unstarted', 'in_progress', 'completed', 'skipped'] as const;
export const annotationState = z.enum(ANNOTATION_STATES);
/** The states an annotator may set (`unstarted` is only the absence of progress). */
export const ANNOTATOR_SETTABLE_STATES = ['in_progress', 'completed', 'skipped'] as const;

/** Sort fields the reference accepts (VALID_QUEUE_SORT_FIELDS / VALID_QUEUE_ITEM_SORT_FIELDS). */
export const QUEUE_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at'] as const;
export const QUEUE_ITEM_SORT_FIELDS = ['call_started_at', 'call_op_name', 'created_at', 'updated_at'] as const;
const sortOn = <F extends readonly [string, ...string[]]>(fields: F) =>
  z.array(
    z.object({
      field: z.enum(fields, { error: () => `must be one of ${fields.join(', ')}` }),
      direction: sortDirection,
    }),
  );

export const annotationQueue = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  description: z.string(),
  scorer_refs: z.array(z.string()),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
});
export type AnnotationQueue = z.infer<typeof annotationQueue>;

export const annotationQueueItem = z.object({
  id: z.string(),
  project_id: z.string(),
  queue_id: z.string(),
  call_id: z.string(),
  call_started_at: z.string(),
  call_ended_at: z.string().nullable(),
  call_op_name: z.string(),
  call_trace_id: z.string(),
  display_fields: z.array(z.string()),
  added_by: z.string().nullable(),
  annotation_state: annotationState,
  annotator_user_id: z.string().nullable().describe('who set the most recent state (null: nobody yet)'),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
  position_in_queue: z.number().int().nullable().describe('1-based, in the requested order over the whole filtered queue'),
});
export type AnnotationQueueItem = z.infer<typeof annotationQueueItem>;

const scorerRefs = z.array(z.string().startsWith('weave:///', 'must be a weave:/// ref')).max(100);

export const annotationQueueCreateReq = z.object({
  project_id: projectId,
  name: z.string().min(1).max(1024),
  description: z.string().max(10_000).default(''),
  scorer_refs: scorerRefs,
  svc_user_id: ignoredUserId,
});
export const annotationQueueCreateRes = z.object({ id: z.string() });

export const annotationQueueReadReq = z.object({ project_id: projectId, queue_id: queueId });
export const annotationQueueRes = z.object({ queue: annotationQueue });

export const annotationQueueUpdateReq = z.object({
  project_id: projectId,
  queue_id: queueId,
  name: z.string().min(1).max(1024).nullish(),
  description: z.string().max(10_000).nullish(),
  scorer_refs: scorerRefs.nullish(),
  svc_user_id: ignoredUserId,
});

export const annotationQueueDeleteReq = annotationQueueReadReq.extend({ svc_user_id: ignoredUserId });

export const annotationQueuesQueryReq = z.object({
  project_id: projectId,
  name: z.string().nullish().describe('case-insensitive part of the name'),
  sort_by: sortOn(QUEUE_SORT_FIELDS).nullish(),
  limit: optionalLimit,
  offset: optionalOffset,
});

/** The reference's MAX batch is not stated; a request's calls are bounded like /calls/delete's. */
export const MAX_QUEUE_ADD_CALLS = 1000;
export const annotationQueueAddCallsReq = z.object({
  project_id: projectId,
  queue_id: queueId,
  call_ids: z.array(z.string().min(1)).min(1).max(MAX_QUEUE_ADD_CALLS, `at most ${MAX_QUEUE_ADD_CALLS} calls at a time`),
  display_fields: z.array(z.string()).max(100),
  svc_user_id: ignoredUserId,
});
export const annotationQueueAddCallsRes = z.object({
  added_count: z.number().int().describe('calls added'),
  duplicates: z.number().int().describe('calls already in the queue (skipped)'),
});

export const annotationQueueItemsFilter = z.object({
  id: z.string().nullish(),
  call_id: z.string().nullish(),
  call_op_name: z.string().nullish(),
  call_trace_id: z.string().nullish(),
  added_by: z.string().nullish(),
  annotation_states: z.array(annotationState).nullish(),
});
export const annotationQueueItemsQueryReq = z.object({
  project_id: projectId,
  queue_id: queueId,
  filter: annotationQueueItemsFilter.nullish(),
  sort_by: sortOn(QUEUE_ITEM_SORT_FIELDS).nullish(),
  limit: optionalLimit,
  offset: optionalOffset,
  include_position: z.boolean().default(false),
});
export const annotationQueueItemsQueryRes = z.object({ items: z.array(annotationQueueItem) });

export const annotationQueuesStatsReq = z.object({
  project_id: projectId,
  queue_ids: z.array(z.string().min(1)).max(1000),
});
export const annotationQueuesStatsRes = z.object({
  stats: z.array(
    z.object({
      queue_id: z.string(),
      total_items: z.number().int(),
      completed_items: z.number().int().describe('items completed or skipped by at least one annotator'),
    }),
  ),
});

export const annotatorProgressUpdateReq = z.object({
  project_id: projectId,
  queue_id: queueId,
  item_id: z.string().min(1),
  annotation_state: z.enum(ANNOTATOR_SETTABLE_STATES, {
    error: () => `Invalid annotation_state: must be one of ${ANNOTATOR_SETTABLE_STATES.join(', ')}`,
  }),
  svc_user_id: ignoredUserId,
});
export const annotatorProgressUpdateRes = z.object({ item: annotationQueueItem });

/** Annotation queues at the paths the Weave SDK calls (0.52.29's client, 0.54's vendored one). */
export const annotationQueueRouteSpecs = {
  annotationQueueCreate: {
    path: '/annotation_queues',
    summary: 'Create an annotation queue',
    auth: 'basic',
    service: 'query',
    request: annotationQueueCreateReq,
    response: annotationQueueCreateRes,
    published: true,
  },
  annotationQueuesQuery: {
    path: '/annotation_queues/query',
    summary: "A project's annotation queues (JSONL), by name part, sorted, paged",
    auth: 'basic',
    service: 'query',
    request: annotationQueuesQueryReq,
    response: annotationQueue,
    stream: 'jsonl',
    published: true,
  },
  annotationQueuesStats: {
    path: '/annotation_queues/stats',
    summary: 'Items and completed items of annotation queues',
    auth: 'basic',
    service: 'query',
    request: annotationQueuesStatsReq,
    response: annotationQueuesStatsRes,
    published: true,
  },
  annotationQueueRead: {
    path: '/annotation_queues/:queue_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read an annotation queue',
    auth: 'basic',
    service: 'query',
    request: annotationQueueReadReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueUpdate: {
    path: '/annotation_queues/:queue_id',
    method: 'PUT',
    urlMembers: true,
    summary: "Change an annotation queue's name, description or scorers",
    auth: 'basic',
    service: 'query',
    request: annotationQueueUpdateReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueDelete: {
    path: '/annotation_queues/:queue_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete an annotation queue (soft: its deleted_at is set)',
    auth: 'basic',
    service: 'query',
    request: annotationQueueDeleteReq,
    response: annotationQueueRes,
    published: true,
  },
  annotationQueueAddCalls: {
    path: '/annotation_queues/:queue_id/items',
    urlMembers: true,
    summary: 'Add calls to an annotation queue (calls already in it are skipped)',
    auth: 'basic',
    service: 'query',
    request: annotationQueueAddCallsReq,
    response: annotationQueueAddCallsRes,
    published: true,
  },
  annotationQueueItemsQuery: {
    path: '/annotation_queues/:queue_id/items/query',
    urlMembers: true,
    summary: "An annotation queue's items with their annotation state, filtered, sorted, paged",
    auth: 'basic',
    service: 'query',
    request: annotationQueueItemsQueryReq,
    response: annotationQueueItemsQueryRes,
    published: true,
  },
  annotatorProgressUpdate: {
    path: '/annotation_queues/:queue_id/items/:item_id/progress',
    urlMembers: true,
    summary: "Set the caller's annotation state of a queue item (in_progress, completed, skipped)",
    auth: 'basic',
    service: 'query',
    request: annotatorProgressUpdateReq,
    response: annotatorProgressUpdateRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
