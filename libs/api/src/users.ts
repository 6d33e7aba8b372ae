import { z } from 'zod';
import { projectId } from './common';
import type { RouteSpec } from './spec';

export const MAX_USER_IDS = 1000;

export const usersReadBatchReq = z.object({
  project_id: projectId.describe("names are given for the users of this project's entity"),
  user_ids: z.array(z.string().min(1)).max(MAX_USER_IDS, `at most ${MAX_USER_IDS} user ids`),
});

export const usersReadBatchRes = z.object({
  users: z
    .array(z.object({ user_id: z.string(), name: z.string() }))
    .describe("the ids that are (or were) members of the project's entity, or the caller; others are left out"),
});

/** Users' names. */
export const userRouteSpecs = {
  usersReadBatch: {
    path: '/users/read_batch',
    summary: "Names of user ids (svc_user_id): the members, present or past, of the project's entity, and the caller",
    auth: 'basic',
    service: 'query',
    request: usersReadBatchReq,
    response: usersReadBatchRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
