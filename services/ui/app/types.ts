/** Shapes of weft's API, from the one contract (type-only imports: nothing of it is bundled). */
import type { z } from 'zod';
import type { Call, callsAggregateRes, objectVersion, projectDeliveryRes, projectSummary, tableRow, thread } from '@weft/api';

export type { Call };
export type { AnnotationQueue, AnnotationQueueItem } from '@weft/api';
export type Thread = z.infer<typeof thread>;
export type ProjectSummary = z.infer<typeof projectSummary>;
export type Aggregate = z.infer<typeof callsAggregateRes>;
export type ObjectVersion = z.infer<typeof objectVersion>;
export type TableRow = z.infer<typeof tableRow>;
export type ProjectDelivery = z.infer<typeof projectDeliveryRes>;

export interface Feedback {
  id: string;
  feedback_type: string;
  payload: Record<string, unknown>;
  created_at: string;
  svc_user_id?: string;
  svc_ref?: string;
  annotation_ref?: string | null;
  queue_id?: string | null;
}
