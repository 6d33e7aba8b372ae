import { callsQueryBody, FILTER_KEYS, rootsOnly, textSearch, type CallsFilter } from './calls-filter';
import { opCondition } from './op-filter';

/**
 * The calls view saved as a Weave `SavedView` object (weave/trace/builtin_object_classes/
 * saved_view.py, 0.54): `{view_type: "traces", label, definition: {filter, query, sort_by,
 * columns}}`. The definition holds what the API is sent (the same filter and `$expr` as the
 * table's), so the SDK's `SavedView.load(ref).get_calls()` returns the calls the view shows; the
 * UI's filter fields are read back out of it (and a view the SDK made opens too: what has no
 * field of its own goes to `$expr`).
 */
export interface SortSpec {
  field: string;
  direction: 'asc' | 'desc';
}

export interface CallsViewState {
  filter: CallsFilter;
  sort: SortSpec;
  /** Column ids the table hides. */
  hidden: string[];
}

export interface SavedViewDefinition {
  filter?: Record<string, unknown> | null;
  query?: { $expr: Record<string, unknown> } | null;
  sort_by?: SortSpec[] | null;
  columns?: { path?: (string | number)[] | null; label?: string | null }[] | null;
  cols?: Record<string, boolean> | null;
  [other: string]: unknown;
}

export interface SavedViewVal {
  view_type: string;
  label: string;
  definition: SavedViewDefinition;
  description?: string | null;
}

/** The table's columns as call fields (a saved view names columns by their path in the call). */
export const COLUMN_PATHS: Record<string, string[]> = {
  op: ['op_name'],
  name: ['display_name'],
  status: ['summary', 'weave', 'status'],
  started: ['started_at'],
  latency: ['summary', 'weave', 'latency_ms'],
  tokens: ['summary', 'weave', 'total_tokens'],
  cost: ['summary', 'weave', 'total_cost'],
  feedback: ['feedback'],
  user: ['wb_user_id'],
};

export const DEFAULT_SORT: SortSpec = { field: 'started_at', direction: 'desc' };

/** The view's definition: the API's filter and `$expr` for the view's filter, its sort and the columns shown (in order). */
export function definitionOf(state: CallsViewState, projectId: string, columns: { id: string; label: string }[]): SavedViewDefinition {
  // The Feedback filter is a lookup in the feedback, not a call filter: it is not saved.
  const body = callsQueryBody({ ...state.filter, feedback: undefined, roots: rootsOnly(state.filter) ? '1' : '0' }, projectId);
  return {
    filter: body.filter ?? null,
    query: body.query ?? null,
    sort_by: [state.sort],
    columns: columns.filter((c) => !state.hidden.includes(c.id)).map((c) => ({ path: COLUMN_PATHS[c.id] ?? [c.id], label: c.label })),
  };
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const fieldOf = (v: unknown) => (isObj(v) && typeof v.$getField === 'string' ? v.$getField : null);
const literalOf = (v: unknown) => (isObj(v) && '$literal' in v ? v.$literal : undefined);

/** An ISO time as the filter's `datetime-local` value (the browser's time, to the second). */
export function localInputTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The Op filter's text that gives exactly these op_names, or null. */
function opTextForNames(names: string[], projectId: string): string | null {
  const refPrefix = `weave:///${projectId}/op/`;
  const terms: string[] = [];
  for (const n of names) {
    const twin = n.startsWith(refPrefix) && n.endsWith(':*') ? n.slice(refPrefix.length, -2) : null;
    if (twin !== null && names.includes(twin)) continue; // `name` gave both
    if (!terms.includes(n)) terms.push(n);
  }
  for (const text of [terms.join(', '), names.join(', ')]) if (same(opCondition(text, projectId).op_names, names)) return text;
  return null;
}

/** The Op filter's text whose prefix `$expr` is exactly this clause, or null. */
function opTextForExpr(clause: unknown, projectId: string): string | null {
  const refPrefix = `weave:///${projectId}/op/`;
  const starts: string[] = [];
  const exact: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObj(v)) {
      if (Array.isArray(v.$gte) && fieldOf(v.$gte[0]) === 'op_name') starts.push(String(literalOf(v.$gte[1])));
      if (Array.isArray(v.$in) && fieldOf(v.$in[0]) === 'op_name' && Array.isArray(v.$in[1]))
        for (const x of v.$in[1]) exact.push(String(literalOf(x)));
      Object.values(v).forEach(walk);
    }
  };
  walk(clause);
  if (starts.length === 0) return null;
  const terms: string[] = [];
  for (const s of starts) {
    if (s.startsWith(refPrefix)) continue; // the project ref twin of a plain term
    terms.push(`${s}*`); // `name*`, or a full ref's `…:*`
  }
  terms.push(...exact);
  const text = terms.join(', ');
  return same(opCondition(text, projectId).expr, clause) ? text : null;
}

/** Views saved before attributes and exception were searched too: the same free text, read as today's. */
const EARLIER_TEXT_FIELDS = ['inputs', 'output', 'op_name', 'display_name'];

/** Free text: the `$or` of case-insensitive `$contains` on TEXT_SEARCH_FIELDS (or the earlier four). */
function textSearched(clause: Record<string, unknown>): string | null {
  const or = clause.$or;
  if (!Array.isArray(or)) return null;
  const text = literalOf((or[0] as { $contains?: { substr?: unknown } })?.$contains?.substr);
  if (typeof text !== 'string') return null;
  return same(textSearch(text), clause) || same(textSearch(text, EARLIER_TEXT_FIELDS), clause) ? text : null;
}

/**
 * A saved view's definition as the calls view's state. What the filter fields cannot say goes
 * to `$expr`; call-filter fields the view has no field for are named in `ignored`.
 */
export function stateOf(def: SavedViewDefinition, projectId: string, columnIds: string[]): { state: CallsViewState; ignored: string[] } {
  const filter: CallsFilter = {};
  const ignored: string[] = [];
  const f = isObj(def.filter) ? def.filter : {};
  for (const [k, v] of Object.entries(f)) {
    if (v === null || v === undefined || k.startsWith('_')) continue;
    const list = Array.isArray(v) ? (v as unknown[]).map(String) : null;
    if (k === 'op_names' && list) {
      if (list.length) filter.op = opTextForNames(list, projectId) ?? list.join(', ');
    } else if (k === 'trace_ids' && list?.length === 1) filter.trace = list[0];
    else if (k === 'thread_ids' && list?.length === 1) filter.thread = list[0];
    else if (k === 'input_refs' && list?.length === 1) filter.ref = list[0];
    else if (k === 'trace_roots_only') continue;
    else if (list && list.length === 0) continue;
    else ignored.push(`filter.${k}`);
  }
  filter.roots = f.trace_roots_only === true ? '1' : '0';
  const expr = isObj(def.query) && isObj(def.query.$expr) ? def.query.$expr : null;
  const clauses = expr ? (Array.isArray(expr.$and) && Object.keys(expr).length === 1 ? (expr.$and as unknown[]) : [expr]) : [];
  const rest: unknown[] = [];
  for (const c of clauses) {
    if (!isObj(c)) {
      rest.push(c);
      continue;
    }
    const pair = (op: string) => (Array.isArray(c[op]) && (c[op] as unknown[]).length === 2 ? (c[op] as unknown[]) : null);
    const eq = pair('$eq');
    const gte = pair('$gte');
    const lt = pair('$lt');
    const text = textSearched(c);
    const op = filter.op === undefined ? opTextForExpr(c, projectId) : null;
    if (eq && fieldOf(eq[0]) === 'summary.weave.status' && typeof literalOf(eq[1]) === 'string' && !filter.status)
      filter.status = literalOf(eq[1]) as string;
    else if (gte && fieldOf(gte[0]) === 'started_at' && typeof literalOf(gte[1]) === 'string' && !filter.from)
      filter.from = localInputTime(literalOf(gte[1]) as string);
    else if (lt && fieldOf(lt[0]) === 'started_at' && typeof literalOf(lt[1]) === 'string' && !filter.to)
      filter.to = localInputTime(literalOf(lt[1]) as string);
    else if (text !== null && !filter.q) filter.q = text;
    else if (op !== null) filter.op = op;
    else rest.push(c);
  }
  if (rest.length) filter.expr = JSON.stringify(rest.length === 1 ? rest[0] : { $and: rest });
  const first = Array.isArray(def.sort_by) ? def.sort_by[0] : undefined;
  const sort: SortSpec =
    first && typeof first.field === 'string' ? { field: first.field, direction: first.direction === 'asc' ? 'asc' : 'desc' } : DEFAULT_SORT;
  return { state: { filter, sort, hidden: hiddenColumns(def, columnIds) }, ignored };
}

function hiddenColumns(def: SavedViewDefinition, columnIds: string[]): string[] {
  const key = (id: string) => (COLUMN_PATHS[id] ?? [id]).join('.');
  if (Array.isArray(def.columns) && def.columns.length) {
    const shown = new Set(def.columns.map((c) => (Array.isArray(c?.path) ? c.path.join('.') : '')));
    // A view whose columns are none of the table's (made for other columns) hides nothing.
    if (!columnIds.some((id) => shown.has(key(id)))) return [];
    return columnIds.filter((id) => !shown.has(key(id)));
  }
  if (isObj(def.cols)) return columnIds.filter((id) => def.cols![key(id)] === false);
  return [];
}

/** The calls view's URL parameters of a state (the filter's, `sort`, `hide`). */
export function paramsOf(state: CallsViewState): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of FILTER_KEYS) out[k] = state.filter[k];
  out.sort = `${state.sort.field}:${state.sort.direction}`;
  out.hide = state.hidden.length ? state.hidden.join(',') : undefined;
  return out;
}

/** Whether two states show the same calls the same way (the URL's empty values and defaults aside). */
export function sameState(a: CallsViewState, b: CallsViewState, projectId: string): boolean {
  const norm = (s: CallsViewState) => ({
    ...definitionOf(s, projectId, []),
    columns: [...s.hidden].sort(),
    feedback: s.filter.feedback ?? null,
  });
  return same(norm(a), norm(b));
}

/** An object id from a label: letters, digits, `_`, `.`, `-` (what object names may hold). */
export function viewObjectId(label: string): string {
  const slug = label
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_.-]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return `traces-${slug || 'view'}`;
}
