import { post } from './api';
import { parseRef } from './refs';
import type { ObjectVersion } from './types';

/**
 * Datasets as the Weave SDK (0.54) publishes them: the rows a table (`/table/create`, a new
 * version through `/table/update`), then a `Dataset` object whose `rows` is that table's ref
 * (`/obj/create`), so `weave.ref(uri).get()` reads what the UI wrote.
 */
export type Row = Record<string, unknown>;

/** A Dataset object's value, as `weave.publish(weave.Dataset(name=…, rows=…))` stores it. */
export function datasetVal(name: string, rowsRef: string, description: string | null = null): Row {
  return { _type: 'Dataset', name, description, rows: rowsRef, _class_name: 'Dataset', _bases: ['Object', 'BaseModel'] };
}

export const tableRef = (projectId: string, digest: string) => `weave:///${projectId}/table/${digest}`;

/** The table digest of a dataset version's rows, or null when its value is not a dataset's. */
export function rowsDigestOf(val: unknown): string | null {
  const rows = val && typeof val === 'object' ? (val as Row).rows : null;
  const ref = typeof rows === 'string' ? parseRef(rows) : null;
  return ref?.kind === 'table' ? ref.digest : null;
}

async function publish(projectId: string, objectId: string, val: Row): Promise<string> {
  const r = await post<{ digest: string }>('/obj/create', { obj: { project_id: projectId, object_id: objectId, val } });
  return r.digest;
}

/** A new dataset of these rows; its first version's digest. */
export async function createDataset(projectId: string, name: string, rows: Row[]): Promise<string> {
  if (rows.length === 0) throw new Error('A dataset needs at least one row');
  const table = await post<{ digest: string }>('/table/create', { table: { project_id: projectId, rows } });
  return publish(projectId, name, datasetVal(name, tableRef(projectId, table.digest)));
}

/** The next version of a dataset: its value with `rows` replaced by the table `/table/update` made from its rows. */
export async function updateDataset(
  projectId: string,
  version: Pick<ObjectVersion, 'object_id' | 'val'>,
  updates: TableUpdate[],
): Promise<string> {
  const base = rowsDigestOf(version.val);
  if (!base) throw new Error(`${version.object_id} is not a dataset (its value has no table ref in rows)`);
  const table = await post<{ digest: string }>('/table/update', { project_id: projectId, base_digest: base, updates });
  return publish(projectId, version.object_id, { ...(version.val as Row), rows: tableRef(projectId, table.digest) });
}

export type TableUpdate = { append: { row: Row } } | { pop: { index: number } } | { insert: { index: number; row: Row } };

/**
 * Row edits (index → the new row, or null: deleted) as `/table/update` operations: from the
 * highest index down, so every index still names the row it named in the base version.
 */
export function updatesForEdits(edits: Map<number, Row | null>): TableUpdate[] {
  const out: TableUpdate[] = [];
  for (const index of [...edits.keys()].sort((a, b) => b - a)) {
    const row = edits.get(index);
    out.push({ pop: { index } });
    if (row) out.push({ insert: { index, row } });
  }
  return out;
}

/** A column of a dataset made from calls, and where in the call its value comes from (`inputs.question`, `output`, `output.answer`). */
export interface ColumnMapping {
  column: string;
  source: string;
}

/** A value at a dotted path of a call (`inputs.a.b`); undefined when missing. */
export function valueAt(call: Row, path: string): unknown {
  let v: unknown = call;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Row)[k];
  }
  return v;
}

/** Where values can come from in these calls: each input, the output, and the output's keys when it is an object. */
export function sourcesOf(calls: Row[]): string[] {
  const out: string[] = [];
  const add = (s: string) => !out.includes(s) && out.push(s);
  for (const c of calls) for (const k of Object.keys((c.inputs as Row | undefined) ?? {})) add(`inputs.${k}`);
  add('output');
  for (const c of calls) {
    const o = c.output;
    if (o && typeof o === 'object' && !Array.isArray(o)) for (const k of Object.keys(o)) add(`output.${k}`);
  }
  return out;
}

/**
 * The first mapping offered. Into an existing dataset: its columns, each from the input of that
 * name, else the output's key of that name, else the output for `output`/`expected`/`answer`-like
 * columns when nothing else fits. A new dataset: each input (not `self`, the op's object) and the output.
 */
export function defaultMapping(calls: Row[], datasetColumns: string[] | null): ColumnMapping[] {
  const sources = sourcesOf(calls);
  if (datasetColumns && datasetColumns.length) {
    const taken = new Set<string>();
    const mapping = datasetColumns.map((column) => {
      const source = [`inputs.${column}`, `output.${column}`].find((s) => sources.includes(s)) ?? '';
      if (source) taken.add(source);
      return { column, source };
    });
    const unmapped = mapping.filter((m) => !m.source);
    if (unmapped.length === 1 && !taken.has('output')) unmapped[0]!.source = 'output';
    return mapping;
  }
  return [
    ...sources.filter((s) => s.startsWith('inputs.') && s !== 'inputs.self').map((s) => ({ column: s.slice('inputs.'.length), source: s })),
    { column: 'output', source: 'output' },
  ];
}

/** A dataset row from a call: each mapped column that has a value there. */
export function rowFromCall(call: Row, mapping: ColumnMapping[]): Row {
  const row: Row = {};
  for (const m of mapping) {
    if (!m.column || !m.source) continue;
    const v = valueAt(call, m.source);
    if (v !== undefined) row[m.column] = v;
  }
  return row;
}

/** Columns of rows in the order they first appear (the order of the rows' keys). */
export function columnsOf(rows: unknown[]): string[] {
  const columns: string[] = [];
  for (const r of rows)
    if (r && typeof r === 'object' && !Array.isArray(r)) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return columns;
}

/**
 * A cell as typed in the row editor, read back as the kind of value it held: text for a string
 * (or a new cell), a number, `true`/`false`, else JSON (objects, arrays, null).
 */
export function parseCell(text: string, was: unknown): unknown {
  if (typeof was === 'string' || was === undefined) return text;
  if (typeof was === 'number') {
    const n = Number(text);
    if (text.trim() === '' || Number.isNaN(n)) throw new Error(`"${text}" is not a number`);
    return n;
  }
  if (typeof was === 'boolean') {
    if (text === 'true' || text === 'false') return text === 'true';
    throw new Error(`"${text}" is not true or false`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`"${text.length > 40 ? `${text.slice(0, 40)}…` : text}" is not JSON`);
  }
}

/** A cell's value as the row editor shows it: strings as they are, the rest as JSON. */
export const cellText = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
