import { badRequest } from '@weft/core';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { readObject } from './objects';

/**
 * Object aliases and version tags (Weave 0.54's /aliases, /tags, /objs/{id}/aliases,
 * /objs/{id}/versions/{digest}/tags). An alias names one version of an object and moves when
 * set again (as `latest` does on its own); a tag marks a version, several versions may share one.
 * `latest` and `v<N>` are the reference's own version names and cannot be aliases.
 */

const MAX_LABEL_CHARS = 128;

function checkLabels(labels: string[], what: 'alias' | 'tag'): string[] {
  const field = what === 'alias' ? 'aliases' : 'tags';
  labels.forEach((l, i) => {
    if (l.trim() === '' || l.length > MAX_LABEL_CHARS)
      throw badRequest(`${field}[${i}]: a ${what} is 1 to ${MAX_LABEL_CHARS} characters`, `${field}[${i}]`);
    if (what === 'alias' && (l === 'latest' || /^v\d+$/.test(l)))
      throw badRequest(`${field}[${i}]: '${l}' is a version name, not an alias`, `${field}[${i}]`);
  });
  return [...new Set(labels)];
}

/** The version `digest` names (a digest, `latest`, `v<N>` or an alias), or 404. */
async function versionDigest(store: Store, projectId: string, objectId: string, digest: string): Promise<string> {
  const alias = await aliasDigest(store, projectId, objectId, digest);
  const v = await readObject(store, { project_id: projectId, object_id: objectId, digest: alias ?? digest, metadata_only: true });
  return v.digest;
}

/** The digest an alias of an object names, if it is one. */
export async function aliasDigest(store: Store, projectId: string, objectId: string, alias: string): Promise<string | undefined> {
  if (alias === 'latest' || /^v\d+$/.test(alias)) return undefined;
  const p = new Params();
  const row = await store.row<{ digest: string }>(
    `SELECT digest FROM object_aliases FINAL
      WHERE project_id = ${p.str(projectId)} AND object_id = ${p.str(objectId)} AND alias = ${p.str(alias)} AND deleted = 0 LIMIT 1`,
    p.values,
    { name: 'object-labels.aliasDigest' },
  );
  return row?.digest;
}

/** PUT /objs/{object_id}/aliases: the aliases now name `digest` (a version of the object, or 404). */
export async function setAliases(store: Store, projectId: string, objectId: string, digest: string, aliases: string[]): Promise<void> {
  const names = checkLabels(aliases, 'alias');
  const target = await versionDigest(store, projectId, objectId, digest);
  if (names.length === 0) return;
  await store.insertRows(
    'object_aliases',
    names.map((alias) => ({ project_id: projectId, object_id: objectId, alias, digest: target, deleted: 0 })),
    { name: 'object-labels.setAliases' },
  );
}

/** POST /objs/{object_id}/aliases/remove: the aliases name nothing any more (removing an unknown one is a no-op). */
export async function removeAliases(store: Store, projectId: string, objectId: string, aliases: string[]): Promise<void> {
  const names = [...new Set(aliases)];
  if (names.length === 0) return;
  await store.insertRows(
    'object_aliases',
    names.map((alias) => ({ project_id: projectId, object_id: objectId, alias, digest: '', deleted: 1 })),
    { name: 'object-labels.removeAliases' },
  );
}

/** PUT /objs/{object_id}/versions/{digest}/tags: the version gets the tags (a version of the object, or 404). */
export async function addTags(store: Store, projectId: string, objectId: string, digest: string, tags: string[]): Promise<void> {
  const names = checkLabels(tags, 'tag');
  const target = await versionDigest(store, projectId, objectId, digest);
  if (names.length === 0) return;
  await store.insertRows(
    'object_tags',
    names.map((tag) => ({ project_id: projectId, object_id: objectId, digest: target, tag, deleted: 0 })),
    { name: 'object-labels.addTags' },
  );
}

/** POST /objs/{object_id}/versions/{digest}/tags/remove. */
export async function removeTags(store: Store, projectId: string, objectId: string, digest: string, tags: string[]): Promise<void> {
  const names = [...new Set(tags)];
  const target = await versionDigest(store, projectId, objectId, digest);
  if (names.length === 0) return;
  await store.insertRows(
    'object_tags',
    names.map((tag) => ({ project_id: projectId, object_id: objectId, digest: target, tag, deleted: 1 })),
    { name: 'object-labels.removeTags' },
  );
}

/** GET /aliases: the project's aliases in use, sorted. */
export function listAliases(store: Store, projectId: string): Promise<string[]> {
  return labelsInUse(store, projectId, 'alias');
}

/** GET /tags: the project's tags in use, sorted. */
export function listTags(store: Store, projectId: string): Promise<string[]> {
  return labelsInUse(store, projectId, 'tag');
}

const LABELS_IN_USE = {
  alias: { table: 'object_aliases', name: 'object-labels.listAliases' },
  tag: { table: 'object_tags', name: 'object-labels.listTags' },
} as const;

/** The project's labels of one kind (aliases, tags) on objects that are not deleted, sorted. */
async function labelsInUse(store: Store, projectId: string, kind: keyof typeof LABELS_IN_USE): Promise<string[]> {
  const { table, name } = LABELS_IN_USE[kind];
  const p = new Params();
  const rows = await store.rows<{ label: string }>(
    `SELECT DISTINCT ${kind} AS label FROM ${table} FINAL WHERE project_id = ${p.str(projectId)} AND deleted = 0 ORDER BY label`,
    p.values,
    { name },
  );
  return rows.map((r) => r.label);
}

/** Each version's tags and aliases (`include_tags_and_aliases`), keyed `object_id:digest`. */
export async function labelsOf(
  store: Store,
  projectId: string,
  objectIds: string[],
): Promise<Map<string, { tags: string[]; aliases: string[] }>> {
  const out = new Map<string, { tags: string[]; aliases: string[] }>();
  if (objectIds.length === 0) return out;
  const p = new Params();
  const pid = p.str(projectId);
  const ids = p.strArray([...new Set(objectIds)]);
  const rows = await store.rows<{ key: string; tags: string[]; aliases: string[] }>(
    `SELECT key, groupArrayIf(label, is_tag = 1) AS tags, groupArrayIf(label, is_tag = 0) AS aliases FROM (
       SELECT concat(object_id, ':', digest) AS key, tag AS label, 1 AS is_tag FROM object_tags FINAL
        WHERE project_id = ${pid} AND object_id IN ${ids} AND deleted = 0
       UNION ALL
       SELECT concat(object_id, ':', digest) AS key, alias AS label, 0 AS is_tag FROM object_aliases FINAL
        WHERE project_id = ${pid} AND object_id IN ${ids} AND deleted = 0
     ) GROUP BY key`,
    p.values,
    { name: 'object-labels.labelsOf' },
  );
  for (const r of rows) out.set(r.key, { tags: [...r.tags].sort(), aliases: [...r.aliases].sort() });
  return out;
}
