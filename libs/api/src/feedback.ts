import { z } from 'zod';
import { jsonObject, limit, offset, projectId, query, sortBy } from './common';
import type { RouteSpec } from './spec';

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

/** /feedback/create: /feedback/replace's fields without `feedback_id`. */
export const feedbackCreateReq = feedbackReplaceReq.omit({ feedback_id: true });
export const feedbackBatchCreateReq = z.object({ batch: z.array(feedbackCreateReq) });
export const feedbackPurgeReq = z.object({ project_id: projectId, query });

/** Feedback beyond the interface's 20: create one or a batch, purge by id. */
export const feedbackRouteSpecs = {
  feedbackCreate: {
    path: '/feedback/create',
    summary: 'Create a feedback record',
    auth: 'basic',
    service: 'gateway',
    request: feedbackCreateReq,
  },
  feedbackBatchCreate: {
    path: '/feedback/batch/create',
    summary: 'Create feedback records',
    auth: 'basic',
    service: 'gateway',
    request: feedbackBatchCreateReq,
  },
  feedbackPurge: {
    path: '/feedback/purge',
    summary: 'Delete feedback records by id',
    auth: 'basic',
    service: 'gateway',
    request: feedbackPurgeReq,
  },
} as const satisfies Record<string, RouteSpec>;
