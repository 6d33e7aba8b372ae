import { badRequest, conflict, extractRefs, notFound } from '@weft/core';
import { EMPTY_TABLE_DIGEST, RawJson, canonicalJson, storageJson, strDigest, tableDigest } from '@weft/digest';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { isDict } from './object-classes';
import { jsonPathOf } from './json-path';

/** Rows inserted per INSERT when a table is written (bounds the memory of one statement). */
const INSERT_CHUNK = 50_000;

export type TableUpdate =
  { append: { row: Record<string, unknown> } } | { pop: { index: number } } | { insert: { index: number; row: Record<string, unknown> } };

export interface TableRowOut {
  digest: string;
  val: RawJson;
  original_index: number;
}

interface PreparedRow {
  digest: string;
  json: string;
  refs: string[];
}

function prepareRow(row: unknown, field: string): PreparedRow {
  if (!isDict(row)) throw badRequest(`${field}: every row must be a JSON object`, field);
  const json = canonicalJson(row);
  const stored = json.includes('Infinity') || json.includes('NaN') ? storageJson(row) : json;
  return { digest: strDigest(json), json: stored, refs: extractRefs(row) };
}

async function insertRows(store: Store, projectId: string, rows: PreparedRow[]): Promise<void> {
  const seen = new Set<string>();
  const unique = rows.filter((r) => !seen.has(r.digest) && (seen.add(r.digest), true));
  for (let i = 0; i < unique.length; i += INSERT_CHUNK) {
    await store.insertRows(
      'table_rows',
      unique.slice(i, i + INSERT_CHUNK).map((r) => ({ project_id: projectId, digest: r.digest, refs: r.refs, val_dump: r.json })),
      { name: 'tables.insertRows' },
    );
  }
}

async function insertIndex(store: Store, projectId: string, table: string, start: number, digests: string[]): Promise<void> {
  for (let i = 0; i < digests.length; i += INSERT_CHUNK) {
    await store.insertRows(
      'table_rows_index',
      digests
        .slice(i, i + INSERT_CHUNK)
        .map((d, j) => ({ project_id: projectId, table_digest: table, position: start + i + j, row_digest: d })),
      { name: 'tables.insertIndex' },
    );
  }
}

/** Row count of a stored table; the empty table always exists. Null when unknown. */
export async function tableRowCount(store: Store, projectId: string, digest: string): Promise<number | null> {
  if (digest === EMPTY_TABLE_DIGEST) return 0;
  const p = new Params();
  const [r] = await store.rows<{ n: number; c: number }>(
    `SELECT max(row_count) AS n, count() AS c FROM tables WHERE project_id = ${p.str(projectId)} AND digest = ${p.str(digest)}`,
    p.values,
    { name: 'tables.tableRowCount' },
  );
  return r && Number(r.c) > 0 ? Number(r.n) : null;
}

/** /table/query_stats_batch: row counts (and stored bytes) of the tables that exist; unknown digests are left out. */
export async function tableStats(
  store: Store,
  projectId: string,
  digests: string[],
  withSize: boolean,
): Promise<{ digest: string; count: number; storage_size_bytes?: number | null }[]> {
  if (digests.length === 0) return [];
  const p = new Params();
  const project = p.str(projectId);
  const counts = new Map(
    (
      await store.rows<{ digest: string; n: number }>(
        `SELECT digest, max(row_count) AS n FROM tables WHERE project_id = ${project} AND digest IN ${p.strArray(digests)} GROUP BY digest`,
        p.values,
        { name: 'tables.tableStats' },
      )
    ).map((r) => [r.digest, Number(r.n)]),
  );
  if (digests.includes(EMPTY_TABLE_DIGEST)) counts.set(EMPTY_TABLE_DIGEST, 0);
  const sizes = new Map<string, number>();
  if (withSize && counts.size > 0) {
    const q = new Params();
    for (const r of await store.rows<{ digest: string; bytes: number }>(
      `SELECT i.table_digest AS digest, sum(length(r.val_dump)) AS bytes
        FROM (SELECT DISTINCT table_digest, position, row_digest FROM table_rows_index WHERE project_id = ${q.str(projectId)} AND table_digest IN ${q.strArray([...counts.keys()])}) AS i
        INNER JOIN (SELECT digest, any(val_dump) AS val_dump FROM table_rows WHERE project_id = ${q.str(projectId)} GROUP BY digest) AS r ON r.digest = i.row_digest
        GROUP BY i.table_digest`,
      q.values,
      { name: 'tables.tableStats' },
    ))
      sizes.set(r.digest, Number(r.bytes));
  }
  return digests
    .filter((d, i) => counts.has(d) && digests.indexOf(d) === i)
    .map((d) =>
      withSize ? { digest: d, count: counts.get(d)!, storage_size_bytes: sizes.get(d) ?? 0 } : { digest: d, count: counts.get(d)! },
    );
}

async function markTable(store: Store, projectId: string, digest: string, rowCount: number): Promise<void> {
  await store.insertRows('tables', [{ project_id: projectId, digest, row_count: rowCount }], { name: 'tables.markTable' });
}

/** /table/create: rows, then the ordered index, then the table marker (a retry after a crash is safe). */
export async function createTable(
  store: Store,
  projectId: string,
  rows: unknown[],
  expectedDigest?: string | null,
): Promise<{ digest: string; row_digests: string[] }> {
  const prepared = rows.map((r, i) => prepareRow(r, `table.rows[${i}]`));
  const rowDigests = prepared.map((r) => r.digest);
  const digest = tableDigest(rowDigests);
  if (expectedDigest && expectedDigest !== digest) {
    throw conflict(`Client table (${rowDigests.length} rows) digest ${expectedDigest} != server digest ${digest}`);
  }
  await insertRows(store, projectId, prepared);
  if ((await tableRowCount(store, projectId, digest)) === null) {
    await insertIndex(store, projectId, digest, 0, rowDigests);
    await markTable(store, projectId, digest, rowDigests.length);
  }
  return { digest, row_digests: rowDigests };
}

/** A run of the new table: a slice of the base table's positions, or rows given in the request. */
type Piece = { base: true; from: number; to: number } | { base: false; digests: string[] };

const pieceLength = (p: Piece) => (p.base ? p.to - p.from : p.digests.length);

/** Splits the piece list so that a piece boundary falls at `at`; returns the index of the piece starting there. */
function splitAt(pieces: Piece[], at: number): number {
  let pos = 0;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const len = pieceLength(piece);
    if (at === pos) return i;
    if (at < pos + len) {
      const k = at - pos;
      const [a, b]: [Piece, Piece] = piece.base
        ? [
            { base: true, from: piece.from, to: piece.from + k },
            { base: true, from: piece.from + k, to: piece.to },
          ]
        : [
            { base: false, digests: piece.digests.slice(0, k) },
            { base: false, digests: piece.digests.slice(k) },
          ];
      pieces.splice(i, 1, a, b);
      return i + 1;
    }
    pos += len;
  }
  return pieces.length;
}

/**
 * /table/update: applies append/insert/pop in order to the base table. The base is never read
 * whole into memory: the new table is described as slices of the base plus new rows, its digest
 * is computed by ClickHouse over the slices, and its index is copied inside ClickHouse.
 */
export async function updateTable(
  store: Store,
  projectId: string,
  baseDigest: string,
  updates: TableUpdate[],
): Promise<{ digest: string; updated_row_digests: string[] }> {
  const baseCount = await tableRowCount(store, projectId, baseDigest);
  if (baseCount === null) throw notFound(`Table ${projectId}:${baseDigest} not found`);
  const pieces: Piece[] = baseCount > 0 ? [{ base: true, from: 0, to: baseCount }] : [];
  let length = baseCount;
  const newRows: PreparedRow[] = [];
  // Per update: the affected row digest, or the base position whose digest is looked up below.
  const updated: (string | { basePosition: number })[] = [];

  updates.forEach((u, i) => {
    if ('append' in u) {
      const row = prepareRow(u.append.row, `updates[${i}].append.row`);
      newRows.push(row);
      const last = pieces[pieces.length - 1];
      if (last && !last.base) last.digests.push(row.digest);
      else pieces.push({ base: false, digests: [row.digest] });
      length++;
      updated.push(row.digest);
    } else if ('insert' in u) {
      const { index } = u.insert;
      if (index < 0 || index > length) throw badRequest(`updates[${i}].insert.index: Index out of range`, `updates[${i}].insert.index`);
      const row = prepareRow(u.insert.row, `updates[${i}].insert.row`);
      newRows.push(row);
      pieces.splice(splitAt(pieces, index), 0, { base: false, digests: [row.digest] });
      length++;
      updated.push(row.digest);
    } else {
      const { index } = u.pop;
      if (index < 0 || index >= length) throw badRequest(`updates[${i}].pop.index: Index out of range`, `updates[${i}].pop.index`);
      const at = splitAt(pieces, index);
      splitAt(pieces, index + 1);
      const [removed] = pieces.splice(at, 1) as [Piece];
      updated.push(removed.base ? { basePosition: removed.from } : removed.digests[0]!);
      length--;
    }
  });
  mergeAdjacentNewPieces(pieces);

  const basePositions = updated.filter((u): u is { basePosition: number } => typeof u !== 'string').map((u) => u.basePosition);
  const popped = await baseDigestsAt(store, projectId, baseDigest, basePositions);
  const updatedRowDigests = updated.map((u) => (typeof u === 'string' ? u : popped.get(u.basePosition)!));

  await insertRows(store, projectId, newRows);
  const digest = await piecesDigest(store, projectId, baseDigest, pieces);
  if ((await tableRowCount(store, projectId, digest)) === null) {
    let out = 0;
    for (const piece of pieces) {
      if (piece.base) await copyBaseSlice(store, projectId, baseDigest, digest, piece.from, piece.to, out);
      else await insertIndex(store, projectId, digest, out, piece.digests);
      out += pieceLength(piece);
    }
    await markTable(store, projectId, digest, length);
  }
  return { digest, updated_row_digests: updatedRowDigests };
}

function mergeAdjacentNewPieces(pieces: Piece[]): void {
  for (let i = pieces.length - 1; i > 0; i--) {
    const a = pieces[i - 1]!;
    const b = pieces[i]!;
    if (pieceLength(b) === 0) pieces.splice(i, 1);
    else if (!a.base && !b.base) pieces.splice(i - 1, 2, { base: false, digests: a.digests.concat(b.digests) });
  }
  if (pieces.length > 0 && pieceLength(pieces[0]!) === 0) pieces.shift();
}

async function baseDigestsAt(store: Store, projectId: string, table: string, positions: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (positions.length === 0) return out;
  const p = new Params();
  for (const r of await store.rows<{ position: number; row_digest: string }>(
    `SELECT position, row_digest FROM table_rows_index FINAL
      WHERE project_id = ${p.str(projectId)} AND table_digest = ${p.str(table)} AND position IN ${p.add(positions, 'Array(UInt64)')}`,
    p.values,
    { name: 'tables.baseDigestsAt' },
  ))
    out.set(Number(r.position), r.row_digest);
  return out;
}

/** sha256-hex of the concatenated row digests of the new table, computed where the base rows live. */
async function piecesDigest(store: Store, projectId: string, base: string, pieces: Piece[]): Promise<string> {
  if (!pieces.some((x) => x.base)) return tableDigest(pieces.flatMap((x) => (x.base ? [] : x.digests)));
  const p = new Params();
  const parts = pieces.map((piece) =>
    piece.base
      ? `(SELECT arrayStringConcat(arraySort((d, q) -> q, groupArray(row_digest), groupArray(position)))
          FROM table_rows_index FINAL
          WHERE project_id = ${p.str(projectId)} AND table_digest = ${p.str(base)}
            AND position >= ${p.add(piece.from, 'UInt64')} AND position < ${p.add(piece.to, 'UInt64')})`
      : p.str(piece.digests.join('')),
  );
  const [r] = await store.rows<{ digest: string }>(`SELECT lower(hex(SHA256(concat('', ${parts.join(', ')})))) AS digest`, p.values, {
    name: 'tables.piecesDigest',
  });
  return r!.digest;
}

async function copyBaseSlice(
  store: Store,
  projectId: string,
  base: string,
  target: string,
  from: number,
  to: number,
  at: number,
): Promise<void> {
  const p = new Params();
  await store.command(
    `INSERT INTO table_rows_index (project_id, table_digest, position, row_digest)
      SELECT project_id, ${p.str(target)}, position - ${p.add(from, 'UInt64')} + ${p.add(at, 'UInt64')}, row_digest
      FROM table_rows_index FINAL
      WHERE project_id = ${p.str(projectId)} AND table_digest = ${p.str(base)}
        AND position >= ${p.add(from, 'UInt64')} AND position < ${p.add(to, 'UInt64')}`,
    p.values,
    { name: 'tables.copyBaseSlice' },
  );
}

export interface TableQueryInput {
  project_id: string;
  digest: string;
  filter?: { row_digests?: string[] };
  limit?: number;
  offset?: number;
  sort_by?: { field: string; order: 'asc' | 'desc' }[];
}

/**
 * Rows per page when streaming a table. Natural order always goes by position ranges of this
 * size; sorted/filtered results page only on the embedded store, whose connection buffers each
 * whole result (a ClickHouse server streams one query).
 */
const PAGE_ROWS = 10_000;

/**
 * Rows of a table, streamed. Without sort or filter a page is a primary-key range on position,
 * so page N of a million-row table costs the same as page 1. `original_index` is the 0-based
 * position in the table; an unknown table has no rows.
 */
export async function* queryTableRows(store: Store, req: TableQueryInput, signal?: AbortSignal): AsyncGenerator<TableRowOut> {
  const count = await tableRowCount(store, req.project_id, req.digest);
  if (!count) return;
  const pageRows = store.mode === 'embedded' ? PAGE_ROWS : 0;
  const offset = req.offset ?? 0;
  const limit = req.limit !== undefined && req.limit > 0 ? req.limit : undefined;
  const natural = (req.sort_by ?? []).length === 0 && !req.filter?.row_digests?.length;
  if (natural) {
    const end = Math.min(count, limit === undefined ? count : offset + limit);
    for (let from = offset; from < end && !signal?.aborted; from += PAGE_ROWS) {
      yield* tableRowsRange(store, req, from, Math.min(end, from + PAGE_ROWS), signal);
    }
    return;
  }
  if (!pageRows) {
    yield* tableRowsPage(store, req, { offset, limit }, signal);
    return;
  }
  // Sorted or filtered: consecutive LIMIT/OFFSET pages of the same ordering (ties broken by position).
  let skip = offset;
  let left = limit ?? Infinity;
  while (left > 0 && !signal?.aborted) {
    const take = Math.min(pageRows, left);
    let got = 0;
    for await (const row of tableRowsPage(store, req, { offset: skip, limit: take }, signal)) {
      got++;
      yield row;
    }
    if (got < take) return;
    skip += got;
    left -= got;
  }
}

/**
 * Positions [from, to) in order: a primary-key range of the index joined with the rows it names
 * (point lookups in small granules; LIMIT 1 BY drops not-yet-merged duplicate rows).
 */
async function* tableRowsRange(
  store: Store,
  req: TableQueryInput,
  from: number,
  to: number,
  signal?: AbortSignal,
): AsyncGenerator<TableRowOut> {
  const p = new Params();
  const index = `SELECT position, row_digest FROM table_rows_index FINAL
    WHERE project_id = ${p.str(req.project_id)} AND table_digest = ${p.str(req.digest)}
      AND position >= ${p.add(from, 'UInt64')} AND position < ${p.add(to, 'UInt64')}`;
  const sql = `SELECT i.position AS original_index, i.row_digest AS digest, r.val_dump AS val_dump
  FROM (${index}) AS i
  INNER JOIN (
    SELECT digest, val_dump FROM table_rows
    WHERE project_id = ${p.str(req.project_id)} AND digest IN (SELECT row_digest FROM (${index}))
    LIMIT 1 BY digest
  ) AS r ON r.digest = i.row_digest
  ORDER BY i.position`;
  yield* streamRows(store, sql, p, signal);
}

async function* streamRows(store: Store, sql: string, p: Params, signal?: AbortSignal): AsyncGenerator<TableRowOut> {
  const rows = store.streamRows<{ original_index: number; digest: string; val_dump: string }>(sql, p.values, {
    name: 'tables.rows',
    signal,
  });
  for await (const r of rows) yield { digest: r.digest, val: new RawJson(r.val_dump), original_index: Number(r.original_index) };
}

/** Sorted and/or filtered rows: the index joined with the rows, ordered, one LIMIT/OFFSET page. */
async function* tableRowsPage(
  store: Store,
  req: TableQueryInput,
  page: { offset: number; limit?: number },
  signal?: AbortSignal,
): AsyncGenerator<TableRowOut> {
  const p = new Params();
  const indexConds = [`project_id = ${p.str(req.project_id)}`, `table_digest = ${p.str(req.digest)}`];
  const rowDigests = req.filter?.row_digests;
  if (rowDigests?.length) indexConds.push(`row_digest IN ${p.strArray(rowDigests)}`);
  const index = `SELECT position, row_digest FROM table_rows_index FINAL WHERE ${indexConds.join(' AND ')}`;

  const order: string[] = [];
  (req.sort_by ?? []).forEach((s, i) => {
    const path = p.str(jsonPathOf(s.field, `sort_by[${i}].field`));
    const dir = s.order === 'desc' ? 'DESC' : 'ASC';
    // The reference's three terms: rows having the field first, then numeric, then string order.
    order.push(
      `JSON_EXISTS(r.val_dump, ${path}) DESC`,
      `toFloat64OrNull(JSON_VALUE(r.val_dump, ${path})) ${dir}`,
      `JSON_VALUE(r.val_dump, ${path}) ${dir}`,
    );
  });
  order.push('i.position ASC');

  let sql = `SELECT i.position AS original_index, i.row_digest AS digest, r.val_dump AS val_dump
  FROM (${index}) AS i
  INNER JOIN (
    SELECT digest, val_dump FROM table_rows FINAL
    WHERE project_id = ${p.str(req.project_id)} AND digest IN (SELECT row_digest FROM (${index}))
  ) AS r ON r.digest = i.row_digest
  ORDER BY ${order.join(', ')}`;
  if (page.limit !== undefined) sql += ` LIMIT ${p.int(page.limit)}`;
  if (page.offset > 0) sql += `${page.limit !== undefined ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(page.offset)}`;
  yield* streamRows(store, sql, p, signal);
}

/** Values of table rows by digest (for `/id/<row digest>` ref edges). */
export async function readTableRowVals(store: Store, projectId: string, digests: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (digests.length === 0) return out;
  const p = new Params();
  for (const r of await store.rows<{ digest: string; val_dump: string }>(
    `SELECT digest, any(val_dump) AS val_dump FROM table_rows
      WHERE project_id = ${p.str(projectId)} AND digest IN ${p.strArray([...new Set(digests)])} GROUP BY digest`,
    p.values,
    { name: 'tables.readTableRowVals' },
  ))
    out.set(r.digest, r.val_dump);
  return out;
}

/** A scalar subquery: the stored bytes of a project's table rows. */
export const tablesStorageBytesSql = (pid: string) => `SELECT sum(length(val_dump)) FROM table_rows FINAL WHERE project_id = ${pid}`;

/**
 * /table/create_from_digests: a table of rows already stored in the project, named by digest
 * (the reference's table digest of those row digests). A digest naming no stored row is a 400:
 * the table would have a hole.
 */
export async function createTableFromDigests(
  store: Store,
  projectId: string,
  rowDigests: string[],
  expectedDigest?: string | null,
): Promise<{ digest: string }> {
  const digest = tableDigest(rowDigests);
  if (expectedDigest && expectedDigest !== digest) {
    throw conflict(`Client table (${rowDigests.length} rows) digest ${expectedDigest} != server digest ${digest}`);
  }
  const unique = [...new Set(rowDigests)];
  if (unique.length > 0) {
    const p = new Params();
    const found = await store.rows<{ digest: string }>(
      // IN a subquery: the engine builds a set of the digests (IN a bound array compared each row with every digest).
      `SELECT DISTINCT digest FROM table_rows WHERE project_id = ${p.str(projectId)} AND digest IN (SELECT arrayJoin(${p.strArray(unique)}))`,
      p.values,
      { name: 'tables.rowsExist' },
    );
    if (found.length !== unique.length) {
      const have = new Set(found.map((r) => r.digest));
      const i = rowDigests.findIndex((d) => !have.has(d));
      throw badRequest(`row_digests[${i}]: no row ${rowDigests[i]} in project ${projectId}`, `row_digests[${i}]`);
    }
  }
  if ((await tableRowCount(store, projectId, digest)) === null) {
    await insertIndex(store, projectId, digest, 0, rowDigests);
    await markTable(store, projectId, digest, rowDigests.length);
  }
  return { digest };
}
