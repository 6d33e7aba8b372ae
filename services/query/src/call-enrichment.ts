import type { Call, CallsStreamQueryReq } from '@weft/api';
import { callRef, feedbackForRefs, isDict, parseRef, resolveRefs, splitDotted } from '@weft/objects';
import type { Store } from '@weft/store';

/** Calls enriched per page: one ref lookup and one feedback lookup per page, not per call. */
const PAGE_SIZE = 100;

/**
 * The per-page post-processing stage of /calls/stream_query, separate from the SQL:
 * `expand_columns` (with return_expanded_column_values) replaces ref strings at the given paths
 * by the referenced values (reference §3.6), and `include_feedback` attaches the feedback on
 * each call as `summary.weave.feedback` (§3.8). Refs resolve through the same code as /refs/read_batch.
 */
export async function* withExpandedRefsAndFeedback(
  store: Store,
  req: CallsStreamQueryReq,
  calls: AsyncIterable<Call>,
): AsyncGenerator<Call> {
  const expand = req.return_expanded_column_values === false ? [] : (req.expand_columns ?? []);
  if (expand.length === 0 && !req.include_feedback) {
    yield* calls;
    return;
  }
  // Deeper paths expand through already-expanded parents, so go shallow to deep.
  const columns = [...new Set(expand)].filter((c) => c !== '').sort((a, b) => splitDotted(a).length - splitDotted(b).length);
  let page: Call[] = [];
  for await (const call of calls) {
    page.push(call);
    if (page.length >= PAGE_SIZE) {
      await enrichPage(store, req, columns, page);
      yield* page;
      page = [];
    }
  }
  if (page.length > 0) {
    await enrichPage(store, req, columns, page);
    yield* page;
  }
}

async function enrichPage(store: Store, req: CallsStreamQueryReq, columns: string[], page: Call[]): Promise<void> {
  for (const column of columns) await expandColumn(store, column, page);
  if (req.include_feedback) await attachFeedback(store, req.project_id, page);
}

async function expandColumn(store: Store, column: string, page: Call[]): Promise<void> {
  const path = splitDotted(column);
  const wanted = new Set<string>();
  for (const call of page) {
    const v = getPath(call, path);
    if (typeof v === 'string' && isObjectRef(v)) wanted.add(v);
  }
  if (wanted.size === 0) return;
  const refs = [...wanted];
  const resolved = await resolveRefs(store, refs, JSON.parse);
  const values = new Map<string, unknown>();
  resolved.forEach((r, i) => {
    if (r.status !== 'ok') return;
    const value = isDict(r.value) && !('_ref' in r.value) ? { ...r.value, _ref: refs[i] } : r.value;
    values.set(refs[i]!, value);
  });
  for (const call of page) {
    const v = getPath(call, path);
    if (typeof v === 'string' && values.has(v)) setPath(call, path, structuredClone(values.get(v)));
  }
}

function isObjectRef(s: string): boolean {
  const r = parseRef(s);
  return r !== null && (r.kind === 'object' || r.kind === 'op');
}

function getPath(root: unknown, path: string[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (Array.isArray(cur) && /^\d+$/.test(key)) cur = cur[Number(key)];
    else if (cur !== null && typeof cur === 'object' && !Array.isArray(cur)) cur = (cur as Record<string, unknown>)[key];
    else return undefined;
  }
  return cur;
}

function setPath(root: unknown, path: string[], value: unknown): void {
  const parent = getPath(root, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (Array.isArray(parent) && /^\d+$/.test(last)) parent[Number(last)] = value;
  else if (parent !== null && typeof parent === 'object') (parent as Record<string, unknown>)[last] = value;
}

async function attachFeedback(store: Store, projectId: string, page: Call[]): Promise<void> {
  const byRef = await feedbackForRefs(
    store,
    projectId,
    page.map((c) => callRef(projectId, c.id)),
  );
  for (const call of page) {
    const summary = (isDict(call.summary) ? call.summary : {}) as Record<string, unknown>;
    const weave = (isDict(summary.weave) ? summary.weave : {}) as Record<string, unknown>;
    weave.feedback = byRef.get(callRef(projectId, call.id)) ?? [];
    summary.weave = weave;
    call.summary = summary;
  }
}
