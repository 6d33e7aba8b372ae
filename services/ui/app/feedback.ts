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

/** What else a feedback record may name: the AnnotationSpec of a score, the queue it was given in. */
export interface FeedbackLinks {
  annotation_ref?: string;
  queue_id?: string;
}

type Written = { id: string; created_at: string; svc_user_id: string; payload: Record<string, unknown> };

const asFeedback = (projectId: string, callId: string, type: string, links: FeedbackLinks, r: Written): Feedback => ({
  id: r.id,
  feedback_type: type,
  payload: r.payload,
  created_at: r.created_at,
  svc_user_id: r.svc_user_id,
  svc_ref: callRef(projectId, callId),
  annotation_ref: links.annotation_ref ?? null,
  queue_id: links.queue_id ?? null,
});

export async function addFeedback(
  projectId: string,
  callId: string,
  feedback_type: string,
  payload: Record<string, unknown>,
  links: FeedbackLinks = {},
): Promise<Feedback> {
  const r = await post<Written>('/feedback/create', {
    project_id: projectId,
    svc_ref: callRef(projectId, callId),
    feedback_type,
    payload,
    ...links,
  });
  return asFeedback(projectId, callId, feedback_type, links, r);
}

/** A new value for one's own feedback record (a score changed): /feedback/replace, as the Weave UI does. */
export async function replaceFeedback(
  projectId: string,
  callId: string,
  previousId: string,
  feedback_type: string,
  payload: Record<string, unknown>,
  links: FeedbackLinks = {},
): Promise<Feedback> {
  const r = await post<Written>('/feedback/replace', {
    project_id: projectId,
    svc_ref: callRef(projectId, callId),
    feedback_id: previousId,
    feedback_type,
    payload,
    ...links,
  });
  return asFeedback(projectId, callId, feedback_type, links, r);
}

export async function removeFeedback(projectId: string, id: string): Promise<void> {
  await post('/feedback/purge', { project_id: projectId, query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: id }] } } });
}

/**
 * A call's reactions (emoji → count, in first-seen order), its number of notes, of scores
 * (annotations) and of scorer results (`wandb.runnable.*`: what monitors and the SDK's
 * `call.apply_scorer` write).
 */
export function feedbackCounts(list: Feedback[]): { reactions: [string, number][]; notes: number; scores: number; results: number } {
  const counts = new Map<string, number>();
  let notes = 0;
  let scores = 0;
  let results = 0;
  for (const f of list) {
    if (f.feedback_type === REACTION) {
      const emoji = String(f.payload?.emoji ?? '');
      counts.set(emoji, (counts.get(emoji) ?? 0) + 1);
    } else if (f.feedback_type === NOTE) notes++;
    else if (f.feedback_type.startsWith('wandb.annotation.')) scores++;
    else if (f.feedback_type.startsWith('wandb.runnable.')) results++;
  }
  return { reactions: [...counts], notes, scores, results };
}

/** The same in a few characters: `👍2 👎1 📝1 ★3 ⚖2`. */
export function feedbackSummary(list: Feedback[]): string {
  const { reactions, notes, scores, results } = feedbackCounts(list);
  const parts = reactions.map(([e, n]) => `${e}${n}`);
  if (notes) parts.push(`📝${notes}`);
  if (scores) parts.push(`★${scores}`);
  if (results) parts.push(`⚖${results}`);
  return parts.join(' ');
}
