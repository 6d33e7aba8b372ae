import { z } from 'zod';
import { projectId } from './common';
import type { RouteSpec } from './spec';

/** /file/create (multipart/form-data: `project_id`, a `file` part) has no JSON body; its path is here for routing. */
export const FILE_CREATE_PATH = '/file/create';

export const fileContentReq = z.object({ project_id: projectId, digest: z.string().min(1) });
export const filesStatsReq = z.object({ project_id: projectId });
export const filesStatsRes = z.object({ total_size_bytes: z.number().int() });

/** Files: a file's content, a project's stored bytes (/file/create, multipart, is FILE_CREATE_PATH). */
export const fileRouteSpecs = {
  filesStats: {
    path: '/files/stats',
    summary: "Bytes of a project's stored files",
    auth: 'basic',
    service: 'query',
    request: filesStatsReq,
    response: filesStatsRes,
  },
  fileContent: {
    path: '/file/content',
    summary: 'Read a file',
    auth: 'basic',
    service: 'query',
    request: fileContentReq,
    aliases: ['/files/content'],
  },
} as const satisfies Record<string, RouteSpec>;
