import { REF_PREFIX } from '@weft/core';

/** A parsed `weave:///` ref (the reference's scheme, so its clients' refs are valid here). */
export type ParsedRef =
  | { kind: 'object' | 'op'; projectId: string; name: string; version: string; extra: string[] }
  | { kind: 'table'; projectId: string; digest: string }
  | { kind: 'call'; projectId: string; callId: string };

/**
 * Parses `weave:///<entity>/<project>/(object|op)/<name>:<version>[/<edge>/<value>]*`,
 * `.../table/<digest>` and `.../call/<id>`. Extra path values are URL-quoted. Null if malformed.
 */
export function parseRef(ref: string): ParsedRef | null {
  if (!ref.startsWith(REF_PREFIX)) return null;
  const parts = ref.slice(REF_PREFIX.length).split('/');
  if (parts.length < 4) return null;
  const [entity, project, kind, head, ...rest] = parts as [string, string, string, string, ...string[]];
  if (!entity || !project || !head) return null;
  const projectId = `${entity}/${project}`;
  if (kind === 'table') return rest.length === 0 ? { kind, projectId, digest: head } : null;
  if (kind === 'call') return rest.length === 0 ? { kind, projectId, callId: head } : null;
  if (kind !== 'object' && kind !== 'op') return null;
  const colon = head.lastIndexOf(':');
  if (colon <= 0 || colon === head.length - 1) return null;
  if (rest.length % 2 !== 0) return null;
  let extra: string[];
  try {
    extra = rest.map((x) => decodeURIComponent(x));
  } catch {
    return null;
  }
  return { kind, projectId, name: decodeURIComponent(head.slice(0, colon)), version: head.slice(colon + 1), extra };
}

export function objectRef(projectId: string, kind: 'object' | 'op', name: string, digest: string): string {
  return `${REF_PREFIX}${projectId}/${kind}/${name}:${digest}`;
}

export function callRef(projectId: string, callId: string): string {
  return `${REF_PREFIX}${projectId}/call/${callId}`;
}

export function tableRef(projectId: string, digest: string): string {
  return `${REF_PREFIX}${projectId}/table/${digest}`;
}
