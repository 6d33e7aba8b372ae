/**
 * Refs as strings: parsed and found inside values. No DOM and no fetch, so the query role's
 * evaluation export (services/query) reads refs exactly as the UI does.
 */

/** A parsed `weave:///<entity>/<project>/<kind>/<name>:<digest>[/…]` ref. */
export interface Ref {
  uri: string;
  projectId: string;
  kind: 'object' | 'op' | 'table' | 'call' | string;
  name: string;
  digest: string;
}

export function parseRef(uri: string): Ref | null {
  const m = /^weave:\/\/\/([^/]+)\/([^/]+)\/(object|op|table|call)\/([^/]+)/.exec(uri);
  if (!m) return null;
  const [, entity, project, kind, rest] = m;
  if (kind === 'table' || kind === 'call') return { uri, projectId: `${entity}/${project}`, kind: kind!, name: rest!, digest: rest! };
  const colon = rest!.lastIndexOf(':');
  return {
    uri,
    projectId: `${entity}/${project}`,
    kind: kind!,
    name: colon > 0 ? rest!.slice(0, colon) : rest!,
    digest: colon > 0 ? rest!.slice(colon + 1) : 'latest',
  };
}

/** Every ref string inside a value (depth-first, deduplicated, at most `max`). */
export function findRefs(v: unknown, max = 20, out = new Set<string>()): string[] {
  if (out.size >= max) return [...out];
  if (typeof v === 'string') {
    if (v.startsWith('weave:///') && parseRef(v)) out.add(v);
  } else if (Array.isArray(v)) for (const x of v) findRefs(x, max, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) findRefs(x, max, out);
  return [...out];
}
