import { post } from './api';
import { NOTE, REACTION, THUMBS_DOWN, THUMBS_UP } from './feedback';

/**
 * The calls table's Feedback filter: the calls that have feedback of a kind. Looked up in the
 * feedback itself (/feedback/query: exact, whoever gave it), then the calls query narrows to
 * those ids. The interface's `feedback.[type].payload…` call fields compare one feedback row
 * per call and type, so "👍" would miss a call that also has a 👎.
 */
export const FEEDBACK_FILTERS: [string, string][] = [
  ['any', 'any feedback'],
  [THUMBS_UP, '👍 thumbs up'],
  [THUMBS_DOWN, '👎 thumbs down'],
  ['note', 'a note'],
];

/** The calls query's `filter.call_ids` takes at most this many ids: the calls with the latest feedback. */
export const MAX_FEEDBACK_CALLS = 1000;

export async function callIdsWithFeedback(
  projectId: string,
  kind: string,
  signal?: AbortSignal,
): Promise<{ ids: string[]; truncated: boolean }> {
  const prefix = `weave:///${projectId}/call/`;
  const eq = (field: string, value: string) => ({ $eq: [{ $getField: field }, { $literal: value }] });
  const and: Record<string, unknown>[] = [{ $contains: { input: { $getField: 'weave_ref' }, substr: { $literal: prefix } } }];
  if (kind === 'note') and.push(eq('feedback_type', NOTE));
  else if (kind !== 'any') and.push(eq('feedback_type', REACTION), eq('payload.emoji', kind));
  const ids: string[] = [];
  const seen = new Set<string>();
  // Pages of feedback, newest first, until enough distinct calls (a call may have many).
  for (let offset = 0; ; offset += 2000) {
    const { result } = await post<{ result: { weave_ref?: string }[] }>(
      '/feedback/query',
      {
        project_id: projectId,
        query: { $expr: { $and: and } },
        fields: ['weave_ref'],
        sort_by: [{ field: 'created_at', direction: 'desc' }],
        limit: 2000,
        offset,
      },
      signal,
    );
    for (const f of result) {
      const ref = f.weave_ref ?? '';
      const id = ref.startsWith(prefix) ? ref.slice(prefix.length).split('/')[0]! : '';
      if (id && !seen.has(id)) {
        if (ids.length === MAX_FEEDBACK_CALLS) return { ids, truncated: true };
        seen.add(id);
        ids.push(id);
      }
    }
    if (result.length < 2000) return { ids, truncated: false };
  }
}
