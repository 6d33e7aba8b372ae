import { opCondition } from './op-filter';

/**
 * The calls filter as it lives in the URL (`?op=…&status=…&from=…`), and its translation into
 * the API's `filter` + `query.$expr` (the same body for /calls/stream_query, /calls/query_stats
 * and /calls/aggregate, so counts, rows and charts agree).
 */
export interface CallsFilter {
  op?: string;
  status?: string;
  from?: string;
  to?: string;
  trace?: string;
  thread?: string;
  /** Free text searched in inputs, output, attributes, op, display name and exception (each case-insensitively, as a substring). */
  q?: string;
  /** A raw `$expr` (JSON), and-ed with the rest. */
  expr?: string;
  /** `1` trace roots only, `0` every call; unset: see rootsOnly. */
  roots?: string;
  /** Calls taking this object ref as input. */
  ref?: string;
  /** Calls with feedback of this kind (feedback-filter.ts; the calls view resolves it to ids). */
  feedback?: string;
}

export const FILTER_KEYS = ['op', 'status', 'from', 'to', 'trace', 'thread', 'q', 'expr', 'roots', 'ref', 'feedback'] as const;

export function filterFromParams(params: URLSearchParams): CallsFilter {
  const f: CallsFilter = {};
  for (const k of FILTER_KEYS) {
    const v = params.get(k);
    if (v) f[k] = v;
  }
  return f;
}

/**
 * Whether the calls table shows trace roots only: by default when browsing (no filter but time),
 * not once the user looks for something (an op, a status, text…), which is often in a child call.
 */
export function rootsOnly(f: CallsFilter): boolean {
  if (f.roots === '1' || f.roots === '0') return f.roots === '1';
  return !f.op && !f.status && !f.trace && !f.thread && !f.q && !f.expr && !f.ref && !f.feedback;
}

/** The fields the free text is searched in: every one the search indexes cover (libs/query search.ts). */
export const TEXT_SEARCH_FIELDS = ['inputs', 'output', 'attributes', 'op_name', 'display_name', 'exception'] as const;

/** Free text as the API's condition: a case-insensitive `$contains` on each of `fields`, or'ed. */
export function textSearch(text: string, fields: readonly string[] = TEXT_SEARCH_FIELDS): Record<string, unknown> {
  return { $or: fields.map((name) => ({ $contains: { input: field(name), substr: lit(text), case_insensitive: true } })) };
}

/** A local `datetime-local` value (or any date string) → ISO 8601 UTC. */
function toIso(s: string): string {
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toISOString();
}

const field = (f: string) => ({ $getField: f });
const lit = (v: unknown) => ({ $literal: v });

export class FilterError extends Error {}

export function callsQueryBody(
  f: CallsFilter,
  projectId: string,
): { filter?: Record<string, unknown>; query?: { $expr: Record<string, unknown> } } {
  const filter: Record<string, unknown> = {};
  const and: Record<string, unknown>[] = [];
  if (f.op) {
    const op = opCondition(f.op, projectId);
    if (op.op_names) filter.op_names = op.op_names;
    if (op.expr) and.push(op.expr);
  }
  if (f.trace) filter.trace_ids = [f.trace.trim()];
  if (f.thread) filter.thread_ids = [f.thread.trim()];
  if (f.roots === '1') filter.trace_roots_only = true;
  if (f.ref) filter.input_refs = [f.ref];
  if (f.status) and.push({ $eq: [field('summary.weave.status'), lit(f.status)] });
  if (f.from) and.push({ $gte: [field('started_at'), lit(toIso(f.from))] });
  if (f.to) and.push({ $lt: [field('started_at'), lit(toIso(f.to))] });
  if (f.q) and.push(textSearch(f.q));
  if (f.expr) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.expr);
    } catch (e) {
      throw new FilterError(`$expr is not JSON: ${(e as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new FilterError('$expr must be a JSON object such as {"$eq": [{"$getField": "inputs.a"}, {"$literal": 1}]}');
    const obj = parsed as Record<string, unknown>;
    and.push('$expr' in obj ? (obj.$expr as Record<string, unknown>) : obj);
  }
  const body: { filter?: Record<string, unknown>; query?: { $expr: Record<string, unknown> } } = {};
  if (Object.keys(filter).length) body.filter = filter;
  if (and.length === 1) body.query = { $expr: and[0]! };
  else if (and.length > 1) body.query = { $expr: { $and: and } };
  return body;
}
