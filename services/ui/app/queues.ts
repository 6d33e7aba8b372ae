import { post, postJsonl, send } from './api';
import type { AnnotationQueue, AnnotationQueueItem } from './types';

/**
 * Annotation queues over weft's queue API (the reference's, which the Weave SDK calls): saved
 * lists of calls that people walk and annotate, each item's progress kept per annotator.
 */
export type QueueStats = { queue_id: string; total_items: number; completed_items: number };

/** Most items a queue page walks (a queue of more shows its first ones and says so). */
export const MAX_QUEUE_ITEMS = 5000;

export function listQueues(projectId: string, signal?: AbortSignal): Promise<AnnotationQueue[]> {
  return postJsonl<AnnotationQueue>(
    '/annotation_queues/query',
    { project_id: projectId, sort_by: [{ field: 'created_at', direction: 'desc' }], limit: 500 },
    signal,
  );
}

export async function queueStats(projectId: string, queueIds: string[], signal?: AbortSignal): Promise<Map<string, QueueStats>> {
  if (queueIds.length === 0) return new Map();
  const r = await post<{ stats: QueueStats[] }>('/annotation_queues/stats', { project_id: projectId, queue_ids: queueIds }, signal);
  return new Map(r.stats.map((s) => [s.queue_id, s]));
}

export async function readQueue(projectId: string, queueId: string, signal?: AbortSignal): Promise<AnnotationQueue> {
  const r = await send<{ queue: AnnotationQueue }>(
    `/annotation_queues/${encodeURIComponent(queueId)}`,
    { project_id: projectId },
    { method: 'GET', signal },
  );
  return r.data.queue;
}

export async function createQueue(projectId: string, name: string, description: string, scorerRefs: string[]): Promise<string> {
  const r = await post<{ id: string }>('/annotation_queues', { project_id: projectId, name, description, scorer_refs: scorerRefs });
  return r.id;
}

export async function queueItems(projectId: string, queueId: string, signal?: AbortSignal): Promise<AnnotationQueueItem[]> {
  const r = await post<{ items: AnnotationQueueItem[] }>(
    `/annotation_queues/${encodeURIComponent(queueId)}/items/query`,
    { project_id: projectId, limit: MAX_QUEUE_ITEMS, include_position: true },
    signal,
  );
  return r.items;
}

/** Most calls one request adds to a queue (the server's `call_ids` limit). */
export const MAX_QUEUE_ADD_CALLS = 1000;

/** The fields of a call a queue item shows (the Weave UI's default). */
export const DISPLAY_FIELDS = ['inputs', 'output'];

export async function addCallsToQueue(
  projectId: string,
  queueId: string,
  callIds: string[],
): Promise<{ added_count: number; duplicates: number }> {
  return post(`/annotation_queues/${encodeURIComponent(queueId)}/items`, {
    project_id: projectId,
    call_ids: callIds,
    display_fields: DISPLAY_FIELDS,
  });
}

export type SettableState = 'in_progress' | 'completed' | 'skipped';

export async function setProgress(projectId: string, queueId: string, itemId: string, state: SettableState): Promise<AnnotationQueueItem> {
  const r = await post<{ item: AnnotationQueueItem }>(
    `/annotation_queues/${encodeURIComponent(queueId)}/items/${encodeURIComponent(itemId)}/progress`,
    { project_id: projectId, annotation_state: state },
  );
  return r.item;
}
