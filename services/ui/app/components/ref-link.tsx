import { parseRef, refHref } from '../refs';

/** A ref as a link to its object, named by its name and short digest. */
export function RefLink({ uri, label }: { uri: string | null; label?: string }) {
  const r = uri ? parseRef(uri) : null;
  if (!r) return <span class="muted">{label ?? '—'}</span>;
  return (
    <a href={refHref(r)} title={uri!}>
      {label ?? r.name}
      <span class="muted">:{r.digest.slice(0, 6)}</span>
    </a>
  );
}
