import { projectHref } from './route';
import type { Ref } from './ref-uri';

// Parsing is DOM-free (ref-uri.ts: the query role's evaluation export uses it too).
export { findRefs, parseRef, type Ref } from './ref-uri';

/** Where a ref opens in the UI. */
export function refHref(r: Ref): string {
  if (r.kind === 'table') return projectHref(r.projectId, ['table', r.digest]);
  if (r.kind === 'call') return projectHref(r.projectId, ['call', r.name]);
  return projectHref(r.projectId, ['objects', r.name], { v: r.digest });
}
