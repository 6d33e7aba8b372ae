import { post } from './api';
import type { Feedback } from './types';

/**
 * Feedback on a call, written as the Weave SDK writes it (`call.feedback.add_reaction`,
 * `add_note`, `purge`), so `call.feedback` / `get_feedback()` in the SDK read what the UI made.
 */
export const REACTION = 'wandb.reaction.1';
export const NOTE = 'wandb.note.1';
export const THUMBS_UP = '👍';
export const THUMBS_DOWN = '👎';

export const callRef = (projectId: string, callId: string) => `weave:///${projectId}/call/${callId}`;

export async function addFeedback(
  projectId: string,
  callId: string,
  feedback_type: string,
  payload: Record<string, unknown>,
): Promise<Feedback> {
  const r = await post<{ id: string; created_at: string; svc_user_id: string; payload: Record<string, unknown> }>('/feedback/create', {
    project_id: projectId,
    svc_ref: callRef(projectId, callId),
    feedback_type,
    payload,
  });
  return {
    id: r.id,
    feedback_type,
    payload: r.payload,
    created_at: r.created_at,
    svc_user_id: r.svc_user_id,
    svc_ref: callRef(projectId, callId),
  };
}

export async function removeFeedback(projectId: string, id: string): Promise<void> {
  await post('/feedback/purge', { project_id: projectId, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: id }] } } });
}

/** A call's reactions (emoji → count, in first-seen order) and its number of notes. */
export function feedbackCounts(list: Feedback[]): { reactions: [string, number][]; notes: number } {
  const counts = new Map<string, number>();
  let notes = 0;
  for (const f of list) {
    if (f.feedback_type === REACTION) {
      const emoji = String(f.payload?.emoji ?? '');
      counts.set(emoji, (counts.get(emoji) ?? 0) + 1);
    } else if (f.feedback_type === NOTE) notes++;
  }
  return { reactions: [...counts], notes };
}

/** The same in a few characters: `👍2 👎1 📝1`. */
export function feedbackSummary(list: Feedback[]): string {
  const { reactions, notes } = feedbackCounts(list);
  const parts = reactions.map(([e, n]) => `${e}${n}`);
  if (notes) parts.push(`📝${notes}`);
  return parts.join(' ');
}
