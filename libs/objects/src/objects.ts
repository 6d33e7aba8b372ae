import { ApiError, badRequest, clickHouseToIso, conflict, extractRefs, microsToClickHouse, nowMicros, notFound } from '@weft/core';
import { RawJson, objectDigest, storageJson } from '@weft/digest';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { kindOf, processIncomingObject, validateObjectId } from './object-classes';

export interface ObjCreateInput {
  project_id: string;
  object_id: string;
  val: unknown;
  builtin_object_class?: string | null;
  set_base_object_class?: string | null;
  expected_digest?: string | null;
}

/** An object version as the interface returns it; `val` is the stored JSON text, emitted verbatim. */
export interface ObjectVersionOut {
  project_id: string;
  object_id: string;
  created_at: string;
  digest: string;
  version_index: number;
  is_latest: number;
  kind: string;
  base_object_class: string | null;
  leaf_object_class: string | null;
  val: RawJson | Record<string, never>;
  deleted_at: string | null;
  svc_user_id: string | null;
  wb_user_id: string | null;
  size_bytes?: number | null;
}

/**
 * /obj/create: the digest is the reference's (so refs interoperate); re-publishing a digest
 * creates no new version but makes it the latest again (the reference's `latest` alias), and
 * restores it when it was deleted. As the reference, a name may hold versions of different
 * types (an object, then a Dataset, then an op).
 */
export async function createObject(store: Store, obj: ObjCreateInput, userId: string): Promise<{ digest: string; object_id: string }> {
  const builtin = obj.builtin_object_class ?? obj.set_base_object_class ?? null;
  const processed = processIncomingObject(obj.val, builtin, 'obj.builtin_object_class');
  const { digest, json } = objectDigest(processed.val);
  if (obj.expected_digest && obj.expected_digest !== digest) {
    throw conflict(`Client obj '${obj.object_id}' digest ${obj.expected_digest} != server digest ${digest}`);
  }
  validateObjectId(obj.object_id, 'obj.object_id');
  const kind = kindOf(processed.val);

  const now = microsToClickHouse(nowMicros());
  await store.insertRows(
    'object_versions',
    [
      {
        project_id: obj.project_id,
        kind,
        object_id: obj.object_id,
        digest,
        base_object_class: processed.baseObjectClass,
        leaf_object_class: processed.leafObjectClass,
        refs: extractRefs(processed.val),
        val_dump: json.includes('Infinity') || json.includes('NaN') ? storageJson(processed.val) : json,
        svc_user_id: userId,
        created_at: now,
        published_at: now,
        deleted_at: null,
      },
    ],
    { name: 'objects.createObject' },
  );
  return { digest, object_id: obj.object_id };
}

/**
 * A version's deletion time, or NULL when it is live: deleted unless published again since
 * (a re-publish of deleted content restores it). Deletions are stored to the millisecond.
 */
const deletedAtSql = (lastDeleted: string, lastPublished: string) =>
  `if(${lastDeleted} >= toDateTime64(${lastPublished}, 3, 'UTC'), ${lastDeleted}, NULL)`;

interface VersionsSelect {
  projectId: string;
  objectIds?: string[];
  kind?: 'op' | 'object';
  withVal: boolean;
  withSize: boolean;
}

/**
 * All versions of the selected objects with version_index (order of creation; a re-published
 * live digest keeps its slot, a deleted one published again takes a new one) and is_latest
 * (the most recently published live version).
 * Filters that would change the numbering (classes, digests) belong to the caller's outer WHERE.
 */
function versionsSql(p: Params, s: VersionsSelect): string {
  const where = [`project_id = ${p.str(s.projectId)}`];
  if (s.objectIds) where.push(`object_id IN ${p.strArray(s.objectIds)}`);
  if (s.kind) where.push(`kind = ${p.str(s.kind)}`);
  const extra = [
    s.withVal ? 'any(val_dump) AS val_dump' : null,
    s.withSize ? 'any(length(object_versions.val_dump)) AS size_bytes' : null,
  ].filter(Boolean);
  return `SELECT *,
    toInt64(row_number() OVER (PARTITION BY kind, object_id ORDER BY created_at ASC, digest ASC) - 1) AS version_index,
    toUInt8(deleted_at IS NULL AND row_number() OVER (PARTITION BY object_id
      ORDER BY deleted_at IS NULL DESC, published_at DESC, created_at DESC, digest DESC) = 1) AS is_latest
  FROM (
    SELECT * EXCEPT (last_deleted_at, first_created_at, publishes),
      ${deletedAtSql('last_deleted_at', 'published_at')} AS deleted_at,
      -- A version deleted and published again is created anew (both references): its first
      -- publish after the deletion.
      if(last_deleted_at IS NOT NULL AND deleted_at IS NULL,
        arrayMin(arrayFilter(t -> toDateTime64(t, 3, 'UTC') > last_deleted_at, publishes)), first_created_at) AS created_at
    FROM (
      SELECT project_id, kind, object_id, digest,
        any(base_object_class) AS base_object_class, any(leaf_object_class) AS leaf_object_class,
        any(svc_user_id) AS svc_user_id, min(created_at) AS first_created_at, max(published_at) AS published_at,
        groupArray(object_versions.published_at) AS publishes,
        max(deleted_at) AS last_deleted_at${extra.length ? ', ' + extra.join(', ') : ''}
      FROM object_versions
      WHERE ${where.join(' AND ')}
      GROUP BY project_id, kind, object_id, digest
    )
  )`;
}

interface VersionRow {
  project_id: string;
  object_id: string;
  kind: string;
  digest: string;
  base_object_class: string | null;
  leaf_object_class: string | null;
  svc_user_id: string | null;
  created_at: string;
  deleted_at: string | null;
  val_dump?: string;
  size_bytes?: number;
  version_index: number;
  is_latest: number;
}

function toOut(r: VersionRow, metadataOnly: boolean, withSize: boolean): ObjectVersionOut {
  const out: ObjectVersionOut = {
    project_id: r.project_id,
    object_id: r.object_id,
    created_at: clickHouseToIso(r.created_at),
    digest: r.digest,
    version_index: Number(r.version_index),
    is_latest: Number(r.is_latest),
    kind: r.kind,
    base_object_class: r.base_object_class,
    leaf_object_class: r.leaf_object_class,
    val: metadataOnly || r.val_dump === undefined ? {} : new RawJson(r.val_dump || '{}'),
    deleted_at: r.deleted_at ? clickHouseToIso(r.deleted_at) : null,
    svc_user_id: r.svc_user_id,
    // The reference's spelling too: the Weave SDK reads `wb_user_id`.
    wb_user_id: r.svc_user_id,
  };
  if (withSize) out.size_bytes = r.size_bytes === undefined ? null : Number(r.size_bytes);
  return out;
}

/** `digest` may be a content digest, `latest` or `v<N>`, as the reference accepts. */
export async function readObject(
  store: Store,
  req: { project_id: string; object_id: string; digest: string; metadata_only?: boolean },
): Promise<ObjectVersionOut> {
  const p = new Params();
  const inner = versionsSql(p, { projectId: req.project_id, objectIds: [req.object_id], withVal: !req.metadata_only, withSize: false });
  let cond: string;
  if (req.digest === 'latest') cond = 'is_latest = 1';
  else if (/^v\d+$/.test(req.digest)) cond = `version_index = ${p.int(Number(req.digest.slice(1)))}`;
  else cond = `digest = ${p.str(req.digest)}`;
  const [row] = await store.rows<VersionRow>(`SELECT * FROM (${inner}) WHERE ${cond} ORDER BY kind LIMIT 1`, p.values, {
    name: 'objects.readObject',
  });
  if (!row) throw notFound(`Obj ${req.object_id}:${req.digest} not found`);
  if (row.deleted_at) {
    const deletedAt = clickHouseToIso(row.deleted_at);
    throw new ApiError(404, `${req.object_id}:v${row.version_index} was deleted at ${deletedAt}`, { extra: { deleted_at: deletedAt } });
  }
  return toOut(row, !!req.metadata_only, false);
}

/**
 * /obj/delete (reference §5.4): the named versions (digests, `latest` or `v<N>`), or every live
 * version when none are named. A tombstone row per version keeps its created_at (so the
 * numbering of the other versions stays) and its value; `latest` moves to the newest surviving version.
 * A name that matches no live version is a 404, and then nothing is deleted.
 */
export async function deleteObjectVersions(
  store: Store,
  projectId: string,
  objectId: string,
  digests?: string[],
): Promise<{ num_deleted: number }> {
  const p = new Params();
  const inner = versionsSql(p, { projectId, objectIds: [objectId], withVal: false, withSize: false });
  const live = await store.rows<{ kind: string; digest: string; version_index: number; is_latest: number }>(
    `SELECT kind, digest, version_index, is_latest FROM (${inner}) WHERE deleted_at IS NULL`,
    p.values,
    { name: 'objects.deleteObjectVersions' },
  );
  let chosen = live;
  const unmatched: string[] = [];
  if (digests && digests.length > 0) {
    chosen = [];
    for (const d of new Set(digests)) {
      const match = live.filter((v) =>
        d === 'latest' ? Number(v.is_latest) === 1 : /^v\d+$/.test(d) ? Number(v.version_index) === Number(d.slice(1)) : v.digest === d,
      );
      if (match.length === 0) unmatched.push(d);
      chosen.push(...match);
    }
  }
  // The reference's texts (Python reprs of the names), which callers match on.
  if (chosen.length === 0) throw notFound(`Object ${objectId} (${digests?.length ? pyList(digests) : 'None'}) not found when deleting.`);
  if (unmatched.length > 0) {
    const found = new Set(chosen.map((v) => `${v.kind}:${v.digest}`)).size;
    throw notFound(
      `Delete request contains ${digests!.length} digests, but found ${found} objects to delete. Diff digests: {${unmatched.map(pyStr).join(', ')}}`,
    );
  }
  const q = new Params();
  const deletedAt = microsToClickHouse(Math.floor(nowMicros() / 1000) * 1000);
  const keys = chosen.map((v) => `(${q.str(v.kind)}, ${q.str(v.digest)})`).join(', ');
  await store.command(
    `INSERT INTO object_versions (project_id, kind, object_id, digest, base_object_class, leaf_object_class, refs, val_dump, svc_user_id, created_at, published_at, deleted_at)
      SELECT project_id, kind, object_id, digest, any(base_object_class), any(leaf_object_class), any(refs), any(val_dump), any(svc_user_id), min(created_at), max(published_at), ${q.str(deletedAt)}
      FROM object_versions
      WHERE project_id = ${q.str(projectId)} AND object_id = ${q.str(objectId)} AND (toString(kind), digest) IN (${keys})
      GROUP BY project_id, kind, object_id, digest`,
    q.values,
    { name: 'objects.deleteObjectVersions' },
  );
  return { num_deleted: new Set(chosen.map((v) => `${v.kind}:${v.digest}`)).size };
}

const pyStr = (s: string) => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
const pyList = (items: string[]) => `[${items.map(pyStr).join(', ')}]`;

export interface ObjsQueryInput {
  project_id: string;
  filter?: {
    latest_only?: boolean;
    object_ids?: string[];
    is_op?: boolean;
    base_object_classes?: string[];
    exclude_base_object_classes?: string[];
    leaf_object_classes?: string[];
  };
  limit?: number;
  offset?: number;
  sort_by?: { field: string; direction: 'asc' | 'desc' }[];
  metadata_only?: boolean;
  include_storage_size?: boolean;
}

const OBJ_SORT_FIELDS = new Set(['object_id', 'created_at']);

/** /objs/query: live versions only; sort by object_id/created_at (anything else is refused). */
export async function queryObjects(store: Store, req: ObjsQueryInput): Promise<ObjectVersionOut[]> {
  const p = new Params();
  const f = req.filter ?? {};
  const inner = versionsSql(p, {
    projectId: req.project_id,
    objectIds: f.object_ids && f.object_ids.length > 0 ? f.object_ids : undefined,
    kind: f.is_op === undefined ? undefined : f.is_op ? 'op' : 'object',
    withVal: !req.metadata_only,
    withSize: !!req.include_storage_size,
  });
  const conds = ['deleted_at IS NULL'];
  if (f.latest_only) conds.push('is_latest = 1');
  if (f.base_object_classes?.length) conds.push(`base_object_class IN ${p.strArray(f.base_object_classes)}`);
  if (f.exclude_base_object_classes?.length) {
    // NULL NOT IN (...) is NULL in SQL; the reference keeps unclassed objects here.
    conds.push(`(base_object_class IS NULL OR base_object_class NOT IN ${p.strArray(f.exclude_base_object_classes)})`);
  }
  if (f.leaf_object_classes?.length) conds.push(`leaf_object_class IN ${p.strArray(f.leaf_object_classes)}`);
  const order = (req.sort_by ?? []).map((s, i) => {
    if (!OBJ_SORT_FIELDS.has(s.field)) {
      throw badRequest(`sort_by[${i}].field: objects sort only by object_id or created_at, not '${s.field}'`, `sort_by[${i}].field`);
    }
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  if (order.length === 0) order.push('created_at ASC');
  order.push('version_index ASC', 'object_id ASC');
  let sql = `SELECT * FROM (${inner}) WHERE ${conds.join(' AND ')} ORDER BY ${order.join(', ')}`;
  if (req.limit !== undefined && req.limit > 0) sql += ` LIMIT ${p.int(req.limit)}`;
  if (req.offset !== undefined && req.offset > 0) sql += `${req.limit ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  const rows = await store.rows<VersionRow>(sql, p.values, { name: 'objects.queryObjects' });
  return rows.map((r) => toOut(r, !!req.metadata_only, !!req.include_storage_size));
}

/** Values of object versions by (object_id, digest), for ref resolution; missing ones are absent. */
export async function readObjectVals(
  store: Store,
  projectId: string,
  keys: { name: string; digest: string }[],
): Promise<Map<string, { val_dump: string; deleted: boolean }>> {
  const out = new Map<string, { val_dump: string; deleted: boolean }>();
  if (keys.length === 0) return out;
  const p = new Params();
  for (const r of await store.rows<{ object_id: string; digest: string; val_dump: string; deleted: number }>(
    `SELECT object_id, digest, any(val_dump) AS val_dump, ${deletedAtSql('max(deleted_at)', 'max(published_at)')} IS NOT NULL AS deleted
      FROM object_versions
      WHERE project_id = ${p.str(projectId)} AND object_id IN ${p.strArray([...new Set(keys.map((k) => k.name))])}
        AND digest IN ${p.strArray([...new Set(keys.map((k) => k.digest))])}
      GROUP BY object_id, digest`,
    p.values,
    { name: 'objects.readObjectVals' },
  )) {
    out.set(`${r.object_id}:${r.digest}`, { val_dump: r.val_dump, deleted: !!Number(r.deleted) });
  }
  return out;
}

/** Per project within `scope` (a condition on project_id): its object versions and latest write (µs), as rows (project_id, calls = 0, objects, last). */
export const projectObjectActivitySql = (scope: string) =>
  `SELECT project_id, 0 AS calls, uniqExact(kind, object_id, digest) AS objects, toUnixTimestamp64Micro(max(created_at)) AS last
    FROM object_versions WHERE ${scope} GROUP BY project_id`;

/** A scalar subquery: the stored bytes of a project's object versions, each version once. */
export const objectsStorageBytesSql = (pid: string) =>
  `SELECT sum(size) FROM (SELECT any(length(val_dump)) AS size FROM object_versions WHERE project_id = ${pid} GROUP BY kind, object_id, digest)`;

/** Every (project, object id) with a version of base class `baseClass`, across projects (deleted versions too: readObject decides). */
export async function objectsOfClass(
  store: Store,
  baseClass: string,
  statement: string,
): Promise<{ project_id: string; object_id: string }[]> {
  return store.rows<{ project_id: string; object_id: string }>(
    `SELECT DISTINCT project_id, object_id FROM object_versions WHERE kind = 'object' AND base_object_class = {c:String}`,
    { c: baseClass },
    { name: statement },
  );
}
