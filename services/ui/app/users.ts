import { post } from './api';

/**
 * User names for the ids weft stamps on calls (`svc_user_id`: the id of the key's user).
 * `/users/read_batch` names the members (present or past) of the project's entity; any other id
 * (a user of another entity, an admin, or an id sent by another system) stays an id, shown short.
 * Asked once per id and project, in batches; every view showing an id waits on the one question.
 */
const known = new Map<string, Map<string, string | null>>();
/** The questions in flight, per project and id: a second view of the same id waits on the first's. */
const asking = new Map<string, Map<string, Promise<void>>>();

function perProject<V>(maps: Map<string, Map<string, V>>, projectId: string): Map<string, V> {
  let m = maps.get(projectId);
  if (!m) maps.set(projectId, (m = new Map()));
  return m;
}

/** The name (null: none to show), or undefined while not known yet. */
export function userName(projectId: string, id: string): string | null | undefined {
  return known.get(projectId)?.get(id);
}

/**
 * Resolves once the ids are known, asking for those nobody has asked yet; true when one of them
 * has a name to show. The question is shared, so `signal` only stops this caller's waiting: a
 * view that goes away does not leave another view's ids unasked. A failed question is asked again
 * by the next view that shows the id.
 */
export async function lookUpUsers(projectId: string, ids: (string | null | undefined)[], signal?: AbortSignal): Promise<boolean> {
  const names = perProject(known, projectId);
  const inFlight = perProject(asking, projectId);
  const wanted = [...new Set(ids.filter((x): x is string => !!x && !names.has(x)))];
  if (wanted.length === 0) return false;
  const fresh = wanted.filter((id) => !inFlight.has(id)).slice(0, 1000);
  if (fresh.length > 0) {
    const question = post<{ users: { user_id: string; name: string }[] }>('/users/read_batch', {
      project_id: projectId,
      user_ids: fresh,
    })
      .then(({ users }) => {
        for (const id of fresh) names.set(id, null);
        for (const u of users) names.set(u.user_id, u.name);
      })
      .finally(() => {
        for (const id of fresh) inFlight.delete(id);
      });
    for (const id of fresh) inFlight.set(id, question);
  }
  const waits = [...new Set(wanted.map((id) => inFlight.get(id)).filter((p): p is Promise<void> => !!p))];
  // A page's signal lives as long as the view: its listener goes once this wait is over.
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => (onAbort = resolve));
  signal?.addEventListener('abort', onAbort, { once: true });
  await Promise.race([Promise.allSettled(waits), aborted]);
  signal?.removeEventListener('abort', onAbort);
  return !signal?.aborted && wanted.some((id) => !!names.get(id));
}

/** `user-mqYi618dl6cQojgA` → `user-mqYi…`: an id that has no name, short. */
export const shortUserId = (id: string) => (id.length > 10 ? `${id.slice(0, 9)}…` : id);
