import { z } from 'zod';
import { projectId } from './common';
import type { RouteSpec } from './spec';

/** Deletions that remove data from the engine's parts (not only hide it), as jobs whose status says when it is gone. */
export const projectDeleteReq = z.object({ project_id: projectId });
export const userDataDeleteReq = z.object({
  svc_user_id: z.string().min(1).max(256).describe("the user whose calls go: every project's calls with this svc_user_id"),
});
export const deletionStatusReq = z.object({ job_id: z.string().min(1).max(64) });

export const deletionStatusRes = z.object({
  job_id: z.string(),
  kind: z.enum(['project', 'user']),
  target: z.string().describe('the project id, or the svc_user_id'),
  requested_at: z.string(),
  state: z
    .enum(['running', 'done', 'failed'])
    .describe('done: no row of it is left in any part of any table it touches, and no mutation of those tables is pending'),
  tables: z
    .array(z.object({ table: z.string(), rows_left: z.number().int() }))
    .describe('each table the job deletes from, and its rows still in the parts'),
  mutations_pending: z.number().int().describe('mutations of those tables the engine has not finished'),
  error: z.string().nullable().describe('why the last attempt failed (it is retried at the next status read)'),
});

/** Deletions that delete (docs/operations.md "Deletion"): jobs whose status says when the data is off the disk. */
export const deletionRouteSpecs = {
  projectDelete: {
    path: '/project/delete',
    summary: "Deletes every row of a project (calls, feedback, objects, tables, files, settings…) from the engine's parts; a job",
    auth: 'basic',
    service: 'gateway',
    request: projectDeleteReq,
    response: deletionStatusRes,
    published: true,
  },
  userDataDelete: {
    path: '/user_data/delete',
    summary: 'Admin keys: deletes every call of a svc_user_id, in every project, and the feedback on them (a data-subject request); a job',
    auth: 'basic',
    service: 'gateway',
    request: userDataDeleteReq,
    response: deletionStatusRes,
    published: true,
  },
  deletionStatus: {
    path: '/deletion/status',
    summary: 'A deletion job: running, or done once no row of it is left in the parts and its mutations ended',
    auth: 'basic',
    service: 'gateway',
    request: deletionStatusReq,
    response: deletionStatusRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
