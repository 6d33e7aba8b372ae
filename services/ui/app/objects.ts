import { post } from './api';
import type { ObjectVersion } from './types';

/** An object's versions, newest first, without their values (the versions list of its pages). */
export function objectVersions(projectId: string, objectId: string, signal: AbortSignal): Promise<{ objs: ObjectVersion[] }> {
  return post<{ objs: ObjectVersion[] }>(
    '/objs/query',
    {
      project_id: projectId,
      filter: { object_ids: [objectId] },
      metadata_only: true,
      sort_by: [{ field: 'created_at', direction: 'desc' }],
      limit: 500,
    },
    signal,
  );
}
