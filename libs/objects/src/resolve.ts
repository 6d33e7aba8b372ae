import type { Store } from '@weft/store';
import { isDict } from './object-classes';
import { readObjectVals } from './objects';
import { parseRef, type ParsedRef } from './refs';
import { readTableRowVals } from './tables';

/** How stored JSON text becomes a value: JSON.parse, or the lossless parser for verbatim output. */
export type JsonParser = (text: string) => unknown;

export type Resolved =
  { status: 'ok'; value: unknown } | { status: 'deleted' } | { status: 'missing'; digest: string } | { status: 'invalid'; reason: string };

type ObjectRef = Extract<ParsedRef, { kind: 'object' | 'op' }>;

/**
 * Resolves object and op refs (`weave:///e/p/object/<name>:<digest>[/<edge>/<value>]*`) as the
 * reference's refs_read_batch: object values are read in one query per project, extra edges
 * follow dict keys / attributes / list indexes, `id` selects a table row by digest, and a ref
 * met along the way is followed too. Table and call refs are not resolvable here.
 */
export async function resolveRefs(store: Store, refs: string[], parse: JsonParser): Promise<Resolved[]> {
  const parsed = refs.map((r) => parseRef(r));
  const byProject = new Map<string, { name: string; digest: string }[]>();
  for (const r of parsed) {
    if (r && (r.kind === 'object' || r.kind === 'op')) {
      const list = byProject.get(r.projectId) ?? [];
      list.push({ name: r.name, digest: r.version });
      byProject.set(r.projectId, list);
    }
  }
  const vals = new Map<string, { val_dump: string; deleted: boolean }>();
  for (const [projectId, keys] of byProject) {
    for (const [k, v] of await readObjectVals(store, projectId, keys)) vals.set(`${projectId}|${k}`, v);
  }
  const out: Resolved[] = [];
  for (let i = 0; i < refs.length; i++) {
    const r = parsed[i];
    if (!r) out.push({ status: 'invalid', reason: `not a valid ref: '${refs[i]}'` });
    else if (r.kind === 'table') out.push({ status: 'invalid', reason: 'Table refs not supported' });
    else if (r.kind === 'call') out.push({ status: 'invalid', reason: 'Call refs not supported' });
    else out.push(await follow(store, r, vals.get(`${r.projectId}|${r.name}:${r.version}`), parse, 0));
  }
  return out;
}

const MAX_REF_HOPS = 16;

async function follow(
  store: Store,
  ref: ObjectRef,
  stored: { val_dump: string; deleted: boolean } | undefined,
  parse: JsonParser,
  hops: number,
): Promise<Resolved> {
  if (!stored) return { status: 'missing', digest: ref.version };
  if (stored.deleted) return { status: 'deleted' };
  let val = parse(stored.val_dump);
  for (let i = 0; i < ref.extra.length; i += 2) {
    const edge = ref.extra[i]!;
    const arg = ref.extra[i + 1]!;
    if (typeof val === 'string' && edge !== 'id') {
      const nested = parseRef(val);
      if (nested && (nested.kind === 'object' || nested.kind === 'op') && hops < MAX_REF_HOPS) {
        const inner = await follow(
          store,
          nested,
          (await readObjectVals(store, nested.projectId, [{ name: nested.name, digest: nested.version }])).get(
            `${nested.name}:${nested.version}`,
          ),
          parse,
          hops + 1,
        );
        if (inner.status !== 'ok') return inner;
        val = inner.value;
      }
    }
    if (edge === 'key' || edge === 'attr') {
      if (!isDict(val) || !(arg in val)) return { status: 'invalid', reason: `ref path: no ${edge} '${arg}'` };
      val = val[arg];
    } else if (edge === 'index') {
      const n = Number(arg);
      if (!Array.isArray(val) || !Number.isInteger(n) || n < 0 || n >= val.length)
        return { status: 'invalid', reason: `ref path: no index ${arg}` };
      val = val[n];
    } else if (edge === 'id') {
      const table = typeof val === 'string' ? parseRef(val) : null;
      if (!table || table.kind !== 'table')
        return { status: 'invalid', reason: 'invalid data layout encountered, expected TableRef when resolving id' };
      const rows = await readTableRowVals(store, table.projectId, [arg]);
      const row = rows.get(arg);
      if (row === undefined) return { status: 'missing', digest: arg };
      val = parse(row);
    } else {
      return { status: 'invalid', reason: `Unknown ref type: ${edge}` };
    }
  }
  return { status: 'ok', value: val };
}
