import { post } from './api';
import { getKey } from './session';

/**
 * The signed-in key's user id, as weft stamps it on what the key writes (`svc_user_id`): asked
 * once per key from the W&B GraphQL subset the SDK's `weave.init` uses (`viewer.id`; `viewer.username`
 * is the user's name).
 */
let cached: { key: string; id: Promise<string | null> } | null = null;

export function currentUserId(): Promise<string | null> {
  const key = getKey() ?? '';
  if (cached?.key !== key) {
    const id = post<{ data?: { viewer?: { id?: string } } }>('/graphql', {
      query: 'query DefaultEntity { viewer { id } }',
    }).then(
      (r) => r.data?.viewer?.id ?? null,
      () => null,
    );
    cached = { key, id };
  }
  return cached.id;
}
