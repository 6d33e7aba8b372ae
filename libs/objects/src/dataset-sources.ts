import { createHash } from 'node:crypto';
import { clickHouseToIso, microsToClickHouse, nowMicros } from '@weft/core';
import { liveCallsForQueue, Params } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * Dataset sources (Weave 0.54's /dataset_sources/*): which calls, agent spans or conversations a
 * dataset's rows came from. A link is (dataset, row digest, source); linking it again updates its
 * metadata and keeps its id and creation time. Spans are calls in weft (OTLP spans are stored as
 * calls), so a call or span source is described from its call; a conversation by its id.
 */

export type SourceKind = 'call' | 'span' | 'conversation';
export interface LinkSource {
  source_id: string;
  source_kind: SourceKind;
  source_trace_id: string;
}

interface LinkRow {
  id: string;
  dataset_object_id: string;
  row_digest: string;
  source_kind: SourceKind;
  source_id: string;
  source_trace_id: string;
  link_metadata: string;
  added_by: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

const linkId = (projectId: string, datasetId: string, row: string, s: LinkSource) =>
  createHash('sha256')
    .update(JSON.stringify([projectId, datasetId, row, s.source_kind, s.source_id]))
    .digest('hex')
    .slice(0, 32);

const iso = (v: string) => clickHouseToIso(v);

async function existingLinks(store: Store, projectId: string, datasetId: string, rows: string[]): Promise<Map<string, LinkRow>> {
  const p = new Params();
  const found = await store.rows<LinkRow>(
    `SELECT * FROM dataset_source_links FINAL
      WHERE project_id = ${p.str(projectId)} AND dataset_object_id = ${p.str(datasetId)} AND row_digest IN ${p.strArray([...new Set(rows)])}`,
    p.values,
    { name: 'dataset-sources.existing' },
  );
  return new Map(found.map((r) => [r.id, r]));
}

/** /dataset_sources/link: one entry per (row, source), in the request's order. */
export async function linkDatasetSources(
  store: Store,
  req: {
    project_id: string;
    dataset_object_id: string;
    dataset_digest: string;
    links: { row_digest: string; sources: LinkSource[]; link_metadata?: Record<string, unknown> | null }[];
    include_created_status?: boolean;
  },
  userId: string,
): Promise<{ entries: { link_id: string; created?: boolean | null }[] }> {
  const flat = req.links.flatMap((l) => l.sources.map((s) => ({ row: l.row_digest, s, meta: l.link_metadata ?? null })));
  if (flat.length === 0) return { entries: [] };
  const before = await existingLinks(
    store,
    req.project_id,
    req.dataset_object_id,
    flat.map((f) => f.row),
  );
  const now = microsToClickHouse(nowMicros());
  const rows = new Map<string, Record<string, unknown>>();
  const entries = flat.map(({ row, s, meta }) => {
    const id = linkId(req.project_id, req.dataset_object_id, row, s);
    const old = before.get(id);
    const created = (!old || old.deleted_at !== null) && !rows.has(id);
    rows.set(id, {
      project_id: req.project_id,
      dataset_object_id: req.dataset_object_id,
      row_digest: row,
      source_kind: s.source_kind,
      source_id: s.source_id,
      source_trace_id: s.source_trace_id,
      id,
      dataset_digest: req.dataset_digest,
      link_metadata: meta === null ? '' : JSON.stringify(meta),
      added_by: userId,
      created_at: old && old.deleted_at === null ? old.created_at : now,
      updated_at: now,
      deleted_at: null,
    });
    return req.include_created_status ? { link_id: id, created } : { link_id: id };
  });
  await store.insertRows('dataset_source_links', [...rows.values()], { name: 'dataset-sources.link' });
  return { entries };
}

/** Display name and start of call and span sources (their calls); a conversation is named by its id. */
async function describe(store: Store, projectId: string, links: LinkRow[]): Promise<Map<string, { name: string; started_at: string }>> {
  const ids = [...new Set(links.filter((l) => l.source_kind !== 'conversation').map((l) => l.source_id))];
  const calls = ids.length ? await liveCallsForQueue(store, projectId, ids) : [];
  return new Map(calls.map((c) => [c.id, { name: c.op_name ?? c.id, started_at: iso(c.started_at) }]));
}

/** /dataset_sources/query: a dataset's links, oldest first. */
export async function queryDatasetSources(
  store: Store,
  req: {
    project_id: string;
    dataset_object_id: string;
    row_digests?: string[] | null;
    source_kinds?: SourceKind[] | null;
    include_deleted?: boolean;
    limit?: number | null;
    offset?: number | null;
  },
): Promise<{ links: Record<string, unknown>[] }> {
  const p = new Params();
  const conds = [`project_id = ${p.str(req.project_id)}`, `dataset_object_id = ${p.str(req.dataset_object_id)}`];
  if (req.row_digests?.length) conds.push(`row_digest IN ${p.strArray(req.row_digests)}`);
  if (req.source_kinds?.length) conds.push(`source_kind IN ${p.strArray(req.source_kinds)}`);
  if (!req.include_deleted) conds.push('deleted_at IS NULL');
  let sql = `SELECT * FROM dataset_source_links FINAL WHERE ${conds.join(' AND ')} ORDER BY created_at, id`;
  if (req.limit) sql += ` LIMIT ${p.int(req.limit)}`;
  if (req.offset) sql += `${req.limit ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  const links = await store.rows<LinkRow>(sql, p.values, { name: 'dataset-sources.query' });
  const known = await describe(store, req.project_id, links);
  return {
    links: links.map((l) => {
      const d = known.get(l.source_id);
      return {
        id: l.id,
        row_digest: l.row_digest,
        source_kind: l.source_kind,
        source_id: l.source_id,
        source_trace_id: l.source_trace_id,
        source_display_name: l.source_kind === 'conversation' ? l.source_id : (d?.name ?? l.source_id),
        source_started_at: l.source_kind !== 'conversation' && d ? d.started_at : iso(l.created_at),
        link_metadata: l.link_metadata === '' ? null : (JSON.parse(l.link_metadata) as Record<string, unknown>),
        added_by: l.added_by,
        created_at: iso(l.created_at),
        updated_at: iso(l.updated_at),
        deleted_at: l.deleted_at === null ? null : iso(l.deleted_at),
      };
    }),
  };
}

/** How many row digests a membership lists at most (the rest are counted). */
const MAX_MEMBERSHIP_ROWS = 100;

/** /dataset_sources/source_datasets_query: for each source, the datasets (and their rows) it is linked to. */
export async function sourceDatasets(
  store: Store,
  req: { project_id: string; sources: LinkSource[]; include_deleted?: boolean },
): Promise<{ memberships: Record<string, unknown>[] }> {
  if (req.sources.length === 0) return { memberships: [] };
  const p = new Params();
  const keys = p.strArray(req.sources.map((s) => `${s.source_kind}:${s.source_id}`));
  const rows = await store.rows<{
    dataset_object_id: string;
    source_kind: SourceKind;
    source_id: string;
    source_trace_id: string;
    first_seen_at: string;
    rows: string[];
  }>(
    `SELECT dataset_object_id, source_kind, source_id, any(source_trace_id) AS source_trace_id, min(created_at) AS first_seen_at,
        arraySort(groupArray(row_digest)) AS rows
      FROM dataset_source_links FINAL
      WHERE project_id = ${p.str(req.project_id)} AND concat(source_kind, ':', source_id) IN ${keys}${req.include_deleted ? '' : ' AND deleted_at IS NULL'}
      GROUP BY dataset_object_id, source_kind, source_id
      ORDER BY source_kind, source_id, first_seen_at, dataset_object_id`,
    p.values,
    { name: 'dataset-sources.sourceDatasets' },
  );
  return {
    memberships: rows.map((r) => ({
      dataset_object_id: r.dataset_object_id,
      source_kind: r.source_kind,
      source_id: r.source_id,
      source_trace_id: r.source_trace_id,
      first_seen_at: iso(r.first_seen_at),
      row_digests: r.rows.slice(0, MAX_MEMBERSHIP_ROWS),
      row_digests_total_count: r.rows.length,
      row_digests_truncated: r.rows.length > MAX_MEMBERSHIP_ROWS,
    })),
  };
}
