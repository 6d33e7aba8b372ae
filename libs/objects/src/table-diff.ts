import { MAX_TABLE_DIFF_ROWS, type TableDiffEntry, type TableDiffReq, type TableDiffRes } from '@weft/api';
import { badRequest, notFound } from '@weft/core';
import { RawJson } from '@weft/digest';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { readTableRowVals, tableRowCount } from './tables';

/** A difference without the rows' values (read for a page only). */
export type TableDiffEntryOut = Omit<TableDiffEntry, 'base_val' | 'val'>;

export interface RowDiff {
  entries: TableDiffEntryOut[];
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
}

/**
 * Two versions of a table compared by row digest (a row is its content). A row whose digest the
 * other version has (as many times) is unchanged, wherever it moved; the others are removed or
 * added. A removed and an added row between the same unchanged rows are paired as a change (an
 * edited row is the old row out and the new one in at its place), in order. Linear in the rows.
 */
export function diffRowDigests(base: readonly string[], next: readonly string[]): RowDiff {
  const inNext = new Map<string, number>();
  for (const d of next) inNext.set(d, (inNext.get(d) ?? 0) + 1);
  const inBase = new Map<string, number>();
  for (const d of base) inBase.set(d, (inBase.get(d) ?? 0) + 1);
  // Each row's gap: how many unchanged rows come before it in its own version.
  const removedAt = new Map<number, number[]>();
  let kept = 0;
  base.forEach((d, i) => {
    const left = inNext.get(d) ?? 0;
    if (left > 0) {
      inNext.set(d, left - 1);
      kept++;
    } else push(removedAt, kept, i);
  });
  const unchanged = kept;
  const addedAt = new Map<number, number[]>();
  kept = 0;
  next.forEach((d, j) => {
    const left = inBase.get(d) ?? 0;
    if (left > 0) {
      inBase.set(d, left - 1);
      kept++;
    } else push(addedAt, kept, j);
  });
  const gaps = [...new Set([...removedAt.keys(), ...addedAt.keys()])].sort((a, b) => a - b);
  const entries: TableDiffEntryOut[] = [];
  const counts = { added: 0, removed: 0, changed: 0 };
  for (const gap of gaps) {
    const out = removedAt.get(gap) ?? [];
    const into = addedAt.get(gap) ?? [];
    const pairs = Math.min(out.length, into.length);
    for (let k = 0; k < Math.max(out.length, into.length); k++) {
      const i = out[k];
      const j = into[k];
      const kind = k < pairs ? 'changed' : i !== undefined ? 'removed' : 'added';
      counts[kind]++;
      entries.push({
        kind,
        base_index: i ?? null,
        index: j ?? null,
        base_digest: i === undefined ? null : base[i]!,
        digest: j === undefined ? null : next[j]!,
      });
    }
  }
  return { entries, ...counts, unchanged };
}

function push(m: Map<number, number[]>, k: number, v: number): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** A table's row digests in order (one column of text: a 64-character digest a line). */
async function rowDigestsOf(store: Store, projectId: string, digest: string, field: string): Promise<string[]> {
  const count = await tableRowCount(store, projectId, digest);
  if (count === null) throw notFound(`${field}: table ${projectId}:${digest} not found`);
  if (count > MAX_TABLE_DIFF_ROWS)
    throw badRequest(`${field}: a diff compares tables of at most ${MAX_TABLE_DIFF_ROWS} rows (this one has ${count})`, field);
  if (count === 0) return [];
  const p = new Params();
  const chunks: Buffer[] = [];
  const answer = store.streamRaw(
    `SELECT row_digest FROM table_rows_index FINAL
      WHERE project_id = ${p.str(projectId)} AND table_digest = ${p.str(digest)} ORDER BY position`,
    p.values,
    { format: 'TabSeparated', name: 'table-diff.rowDigests' },
  );
  for await (const chunk of answer) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** /table/diff: the differences of two table versions, a page of them with the rows' values. */
export async function diffTables(
  store: Store,
  req: TableDiffReq,
): Promise<Omit<TableDiffRes, 'entries'> & { entries: (TableDiffEntryOut & { base_val: RawJson | null; val: RawJson | null })[] }> {
  const [base, next] = await Promise.all([
    rowDigestsOf(store, req.project_id, req.base_digest, 'base_digest'),
    rowDigestsOf(store, req.project_id, req.digest, 'digest'),
  ]);
  const diff = diffRowDigests(base, next);
  const offset = req.offset ?? 0;
  const page = diff.entries.slice(offset, offset + (req.limit || 100));
  const vals = await readTableRowVals(
    store,
    req.project_id,
    page.flatMap((e) => [e.base_digest, e.digest].filter((d): d is string => d !== null)),
  );
  const val = (d: string | null) => (d === null ? null : new RawJson(vals.get(d) ?? 'null'));
  return {
    base_count: base.length,
    count: next.length,
    added: diff.added,
    removed: diff.removed,
    changed: diff.changed,
    unchanged: diff.unchanged,
    entries: page.map((e) => ({ ...e, base_val: val(e.base_digest), val: val(e.digest) })),
  };
}
