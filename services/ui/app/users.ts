import { post } from './api';

/**
 * User names for the ids weft stamps on calls (`svc_user_id`: the id of the key's user).
 * `/users/read_batch` names the members (present or past) of the project's entity; any other id
 * (a user of another entity, an admin, or an id sent by another system) stays an id, shown short.
 * Asked once per id and project, in batches.
 */
const known = new Map<string, Map<string, string | null>>();

export function userName(projectId: string, id: string): string | null | undefined {
  return known.get(projectId)?.get(id);
}

/** Looks up the ids not asked yet; resolves once they are known (null: no name to show). */
export async function lookUpUsers(projectId: string, ids: (string | null | undefined)[], signal?: AbortSignal): Promise<boolean> {
  const names = known.get(projectId) ?? new Map<string, string | null>();
  known.set(projectId, names);
  const missing = [...new Set(ids.filter((x): x is string => !!x && !names.has(x)))].slice(0, 1000);
  if (missing.length === 0) return false;
  for (const id of missing) names.set(id, null); // asked: not again, whatever the answer
  const { users } = await post<{ users: { user_id: string; name: string }[] }>(
    '/users/read_batch',
    { project_id: projectId, user_ids: missing },
    signal,
  );
  for (const u of users) names.set(u.user_id, u.name);
  return users.length > 0;
}

/** `user-mqYi618dl6cQojgA` → `user-mqYi…`: an id that has no name, short. */
export const shortUserId = (id: string) => (id.length > 10 ? `${id.slice(0, 9)}…` : id);
