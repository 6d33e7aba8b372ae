import { useEffect, useState } from 'preact/hooks';
import { lookUpUsers, shortUserId, userName } from '../users';

/**
 * A user as every view shows one: the key's user name when weft knows it (a member of the
 * project's entity), else the id, short; the id on hover (`title`) and in `data-user-id`.
 */
export function UserName({ id, projectId }: { id: string; projectId: string }) {
  const [, setNamed] = useState(0);
  useEffect(() => {
    if (userName(projectId, id) !== undefined) return;
    const abort = new AbortController();
    lookUpUsers(projectId, [id], abort.signal).then(
      (named) => named && setNamed((n) => n + 1),
      () => {},
    );
    return () => abort.abort();
  }, [projectId, id]);
  const name = userName(projectId, id);
  return name ? (
    <span title={id} data-user-id={id}>
      {name}
    </span>
  ) : (
    <span class="muted" title={id} data-user-id={id}>
      {shortUserId(id)}
    </span>
  );
}
