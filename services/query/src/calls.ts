import type { CallsQueryStatsReq, CallsStreamQueryReq, Call } from '@weft/api';
import { buildCallsStatsQuery, callCosts, CallsQueryPlan, callStorageSizes, type Cursor, type PageSpec } from '@weft/query';
import { callRef, feedbackForRefs, isDict, parseRef, resolveRefs, splitDotted } from '@weft/objects';
import type { Lane } from '@weft/core';
import type { Store } from '@weft/store';

export interface StreamOptions {
  /**
   * Rows per ClickHouse query at most: keyset pages ordered by the sort keys + id, so memory stays
   * bounded on both sides (the embedded connection materialises each result; a server would hold
   * a whole unpaged result to sort it). 0: one query for the whole result.
   */
  pageRows: number;
}

/** The first page is small so the first row comes fast; pages then grow ×5 up to `pageRows`. */
const FIRST_PAGE_ROWS = 100;
/** Calls enriched per page: one ref lookup and one feedback lookup per page, not per call. */
const ENRICH_PAGE = 100;
/** Bytes handed to the socket per write (a page is cut into such chunks). */
const CHUNK_BYTES = 256 * 1024;
/** Query settings of the line queries: JSON strings written as JSON.stringify writes them. */
const LINE_SETTINGS = { output_format_json_escape_forward_slashes: 0 } as const;

/**
 * A long stream (no limit, start-time order: CallsQueryPlan.rangedPages) goes on after its first
 * page by ranged pages: a cuts statement names where the next ranges of WEFT_QUERY_PAGE_ROWS end
 * (RANGED_PAGES_PER_CUT large pages' worth), so a page need not wait for the one before to know
 * where it begins. A page's statement runs on one core: while the engine has nothing else to do
 * (no statement of another lane, and none but the stream's own in the heavy lane),
 * RANGED_PAGES_AT_ONCE are read side by side; beside other work, one at a time. They run in the
 * heavy lane (long streams are heavy work: interactive reads go first), one statement per turn,
 * so other heavy work interleaves.
 */
const RANGED_PAGES_AT_ONCE = 2;
const RANGED_PAGES_PER_CUT = 8;
/**
 * While the engine has no other work, a ranged page spans this many ranges of WEFT_QUERY_PAGE_ROWS:
 * the engine reads whole granules (8,192 rows) of both call tables and pays a fixed cost per
 * statement, so 5,000 rows cost about what 10,000 did. Beside other work a page stays one range:
 * Node's thread moves a page in one go (~28 MB at this size), and memory grows with it
 * (docs/performance.md).
 */
const RANGED_PAGE_SCALE = 4;
/** The lanes whose work a stream's second page at once would slow (inserts are short and not counted). */
const SHARED_LANES = ['interactive', 'heavy', 'background'] as const;

/** A fetched page: its JSONL text, how many rows, and the cursor after its last row. */
interface Page {
  jsonl: Buffer;
  rows: number;
  last?: Cursor;
}

/**
 * Whether a request needs Calls as objects (costs, storage sizes, feedback, ref expansion are
 * added per batch in Node); otherwise the lines ClickHouse builds go to the client untouched.
 */
export function needsEnrichment(req: CallsStreamQueryReq): boolean {
  const expand = req.return_expanded_column_values !== false && (req.expand_columns ?? []).some((c) => c !== '');
  return Boolean(req.include_costs || req.include_storage_size || req.include_total_storage_size || req.include_feedback || expand);
}

/**
 * Streams /calls/stream_query as JSONL text: ClickHouse builds each Call's line (libs/query
 * call-json.ts), pages are fetched ahead of the socket (the next page's query runs while this
 * one is written; a long stream's ranged pages, up to two), and `signal` aborts the queries in
 * flight when the client goes away. A slow client holds at most three pages.
 */
export async function* streamCallLines(
  store: Store,
  req: CallsStreamQueryReq,
  signal: AbortSignal,
  opts: StreamOptions,
): AsyncGenerator<Buffer> {
  const plan = new CallsQueryPlan(req);
  for await (const page of callPages(store, plan, req, signal, opts))
    for (let at = 0; at < page.jsonl.length; at += CHUNK_BYTES) yield page.jsonl.subarray(at, at + CHUNK_BYTES);
}

/** A stream's pages in order: keyset pages (limit after the last row's keys), then ranged ones where the plan allows. */
async function* callPages(store: Store, plan: CallsQueryPlan, req: CallsStreamQueryReq, signal: AbortSignal, opts: StreamOptions) {
  // A limit is left to keyset pages: an export's 200k calls beside a team's reads were slower, and
  // the reads too, by ranged pages (docs/performance.md).
  const ranged = plan.rangedPages && !(req.limit && req.limit > 0) && opts.pageRows > 0;
  // A search's pages read calls by their text index, for up to seconds: heavy work, so that a
  // search never holds the connections a person's page or count waits for (docs/operations.md, "Lanes").
  const lane: Lane | undefined = plan.searching ? 'heavy' : undefined;
  let remaining = req.limit && req.limit > 0 ? req.limit : Infinity;
  let size = opts.pageRows > 0 ? Math.min(opts.pageRows, FIRST_PAGE_ROWS) : Infinity;
  const next = (after: Cursor | undefined, offset?: number): { limit?: number; page: Promise<Page> } => {
    const limit = Number.isFinite(Math.min(size, remaining)) ? Math.min(size, remaining) : undefined;
    size = Math.min(opts.pageRows, size * 5);
    const page = fetchPage(store, plan, { after, limit, offset }, signal, lane);
    // Settled by the loop below; a page fetched ahead and never awaited must not be an unhandled rejection.
    page.catch(() => undefined);
    return { limit, page };
  };
  let first: { after?: Cursor; offset?: number } = { offset: req.offset };
  if (req.offset && plan.offsetByCursor) {
    const after = await offsetCursor(store, plan, req.offset, signal);
    if (!after) return;
    first = { after };
  }
  let pending: { limit?: number; page: Promise<Page> } | undefined = next(first.after, first.offset);
  while (pending && !signal.aborted) {
    const limit: number | undefined = pending.limit;
    const page: Page = await pending.page;
    remaining -= page.rows;
    // A short page (or the single unpaged query) is the end of the result; an empty one always is.
    const full: boolean = page.rows === limit || (plan.mayBeShort && page.rows > 0);
    const more: boolean = limit !== undefined && full && remaining > 0;
    if (more && ranged) {
      yield page;
      yield* rangedPages(store, plan, page.last!, opts.pageRows, signal);
      return;
    }
    pending = more ? next(page.last) : undefined;
    yield page;
  }
}

/**
 * Where a read after `offset` calls begins (CallsQueryPlan.offsetCursorQuery), undefined past the
 * last call. Read with a slack of a quarter of the offset (and 100) for replays not folded yet;
 * where that finds no row, read again to the end, which is exact whatever the replays.
 */
async function offsetCursor(store: Store, plan: CallsQueryPlan, offset: number, signal: AbortSignal): Promise<Cursor | undefined> {
  for (const slack of [Math.ceil(offset / 4) + 100, undefined]) {
    const q = plan.offsetCursorQuery(offset, slack);
    const row = await store.row<{ cursor: string }>(q.sql, q.params, { name: 'calls.offsetCursor', signal });
    if (row) return JSON.parse(row.cursor) as Cursor;
  }
  return undefined;
}

/**
 * The pages after `after`, each a key range of `rows` start rows (RANGED_PAGE_SCALE × as many
 * while the engine has no other work), RANGED_PAGES_AT_ONCE read at a time, in order.
 */
async function* rangedPages(store: Store, plan: CallsQueryPlan, after: Cursor, rows: number, signal: AbortSignal): AsyncGenerator<Page> {
  const specs = rangedPageSpecs(store, plan, after, rows, signal);
  const reading: Promise<Page>[] = [];
  // This stream's page statements begun and not ended (each is among the heavy lane's busy ones).
  let own = 0;
  const alone = () => store.busy(SHARED_LANES) <= own;
  /** The next page's bounds: one range of `rows`, or RANGED_PAGE_SCALE of them joined while alone. */
  const nextSpec = async (): Promise<PageSpec | undefined> => {
    const first = await specs.next();
    if (first.done) return undefined;
    let spec = first.value;
    for (let i = 1; i < RANGED_PAGE_SCALE && alone(); i++) {
      const more = await specs.next();
      if (more.done) break;
      spec = { after: spec.after!, upTo: more.value.upTo! };
    }
    return spec;
  };
  const readMore = async () => {
    while (reading.length < (alone() ? RANGED_PAGES_AT_ONCE : 1) && !signal.aborted) {
      const spec = await nextSpec();
      if (!spec) return;
      own++;
      const page = fetchPageOnce(store, plan, spec, signal, undefined, 'heavy').finally(() => own--);
      // Settled in turn below; one read ahead and never awaited must not be an unhandled rejection.
      page.catch(() => undefined);
      reading.push(page);
    }
  };
  try {
    await readMore();
    while (reading.length > 0 && !signal.aborted) {
      const page = await reading.shift()!;
      // The next pages are read while this one is written.
      await readMore();
      yield page;
    }
  } finally {
    await specs.return(undefined);
  }
}

/** The ranged pages' bounds: (after, cut₁], (cut₁, cut₂], … from cuts statements, until one finds the end. */
async function* rangedPageSpecs(
  store: Store,
  plan: CallsQueryPlan,
  after: Cursor,
  rows: number,
  signal: AbortSignal,
): AsyncGenerator<PageSpec> {
  let from = after;
  for (;;) {
    const q = plan.rangeCutsQuery(from, rows, RANGED_PAGES_PER_CUT * RANGED_PAGE_SCALE);
    const cuts = await store.rows<{ cursor: string; total: string | number }>(q.sql, q.params, {
      name: 'calls.rangeCuts',
      signal,
      lane: 'heavy',
    });
    for (const { cursor } of cuts) {
      const upTo = JSON.parse(cursor) as Cursor;
      yield { after: from, upTo };
      from = upTo;
    }
    // Fewer rows than asked for: the end (rows written since come with the next stream).
    if (cuts.length === 0 || Number(cuts[cuts.length - 1]!.total) < rows * RANGED_PAGES_PER_CUT * RANGED_PAGE_SCALE) return;
  }
}

/**
 * The spans of start times a search's page looks at first, in turn (then all): 5 minutes, ×4
 * each time up to 56 days. A search for a frequent text fills its page from the newest (or
 * oldest) calls without checking the text of every call that holds it; one for a rare text
 * reads only the calls its index names, in a few cheap key-range queries, then all.
 */
const SEARCH_SPANS_MS = Array.from({ length: 9 }, (_, i) => 5 * 60_000 * 4 ** i);

/**
 * One page. A search sorted by start time (CallsQueryPlan.searchSpanOrder) is read a span at a
 * time from the page's start: once a span holds the page, the rows after it come later in the
 * order, so the page is the same as the whole read's.
 */
async function fetchPage(store: Store, plan: CallsQueryPlan, spec: PageSpec, signal: AbortSignal, lane?: Lane): Promise<Page> {
  const order = plan.searchSpanOrder;
  if (!order || spec.limit === undefined) return fetchPageOnce(store, plan, spec, signal, undefined, lane);
  // After a cursor, from its start time (the first key); else from the project's first or last start.
  const after = spec.after?.[0];
  let start: string;
  if (typeof after === 'string') start = after;
  else {
    const q = plan.startEdgeQuery(order);
    const edge = await store.row<{ at: string }>(q.sql, q.params, { name: 'calls.searchEdge', signal, ...(lane ? { lane } : {}) });
    if (!edge) return { jsonl: Buffer.alloc(0), rows: 0, last: undefined };
    start = edge.at;
  }
  for (const ms of SEARCH_SPANS_MS) {
    const spanned: PageSpec = { ...spec, span: { from: start, ms, order } };
    // Where a page's ids are picked first, only that pick runs for a span that turns out short.
    const ids = plan.idsFirst(spanned) ? await pageIds(store, plan, spanned, signal, lane) : undefined;
    if (ids && ids.length < spec.limit) continue;
    const page = await fetchPageOnce(store, plan, spanned, signal, ids, lane);
    if (page.rows >= spec.limit) return page;
  }
  return fetchPageOnce(store, plan, spec, signal, undefined, lane);
}

/** The ids of a page picked from joined rows in their own query (CallsQueryPlan.idsFirst). */
async function pageIds(store: Store, plan: CallsQueryPlan, spec: PageSpec, signal: AbortSignal, lane?: Lane): Promise<string[]> {
  const q = plan.pageIdsQuery(spec);
  const opts = { name: 'calls.pageIds', signal, settings: plan.settings, ...(lane ? { lane } : {}) };
  return (await store.rows<{ id: string }>(q.sql, q.params, opts)).map((r) => r.id);
}

/** One page as (cursor, line) rows in RowBinary: the lines compacted into JSONL, the last cursor kept. */
async function fetchPageOnce(
  store: Store,
  plan: CallsQueryPlan,
  spec: PageSpec,
  signal: AbortSignal,
  picked?: string[],
  lane?: Lane,
): Promise<Page> {
  const ids = picked ?? (plan.idsFirst(spec) ? await pageIds(store, plan, spec, signal, lane) : undefined);
  if (ids?.length === 0) return { jsonl: Buffer.alloc(0), rows: 0, last: undefined };
  const { sql, params } = plan.linesQuery(spec, ids);
  const chunks: Buffer[] = [];
  const settings = { ...LINE_SETTINGS, ...plan.settings };
  for await (const chunk of store.streamRaw(sql, params, {
    format: 'RowBinary',
    name: 'calls.lines',
    signal,
    settings,
    ...(lane ? { lane } : {}),
  }))
    chunks.push(chunk);
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  let pos = 0;
  let written = 0;
  let rows = 0;
  let lastCursor = '';
  // RowBinary String: LEB128 length, then the bytes.
  const readLength = () => {
    let n = 0;
    let shift = 0;
    for (;;) {
      const b = buf[pos++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
      shift += 7;
    }
  };
  while (pos < buf.length) {
    const cl = readLength();
    const cursorAt = pos;
    pos += cl;
    const ll = readLength();
    // The last row's cursor is read before its line moves over it.
    if (pos + ll >= buf.length) lastCursor = buf.toString('utf8', cursorAt, cursorAt + cl);
    // The line moves towards the start of `buf`, in place (dropping a row's cursor and length
    // prefixes frees more bytes than its newline takes): no second page-sized buffer, which at
    // ~7 MB a page was most of the stream's garbage.
    written += buf.copy(buf, written, pos, pos + ll);
    buf[written++] = 0x0a;
    pos += ll;
    rows++;
  }
  const last = rows ? (JSON.parse(lastCursor) as Cursor) : undefined;
  return { jsonl: buf.subarray(0, written), rows, last };
}

/**
 * Streams merged calls as objects, for the requests that enrich them in Node (needsEnrichment):
 * the same lines, parsed, then enriched in batches.
 */
export async function* streamCalls(store: Store, req: CallsStreamQueryReq, signal: AbortSignal, opts: StreamOptions): AsyncGenerator<Call> {
  let rest = '';
  for await (const chunk of streamCallLines(store, req, signal, opts)) {
    const text = rest + chunk.toString('utf8');
    const lines = text.split('\n');
    rest = lines.pop()!;
    yield* await enrichCalls(
      store,
      req,
      lines.map((l) => JSON.parse(l) as Call),
    );
  }
}

/**
 * The enrich stage: one batch of merged rows → Calls, with everything that is looked up per
 * batch rather than computed in the calls query (costs, storage sizes; feedback and ref
 * expansion, per page of their own, are withExpandedRefsAndFeedback's below).
 */
async function enrichCalls(store: Store, req: CallsStreamQueryReq, calls: Call[]): Promise<Call[]> {
  if (req.include_costs) {
    const costs = await callCosts(
      store,
      req.project_id,
      calls.map((c) => c.id),
    );
    for (const c of calls) {
      const perModel = costs.get(c.id);
      if (!perModel) continue;
      const summary = (c.summary ??= {});
      const weave = (summary.weave ??= {}) as Record<string, unknown>;
      weave.costs = perModel;
    }
  }
  if (req.include_storage_size || req.include_total_storage_size) {
    const sizes = await callStorageSizes(store, req.project_id, calls, {
      perCall: req.include_storage_size,
      perTrace: req.include_total_storage_size,
    });
    for (const c of calls) {
      if (req.include_storage_size) c.storage_size_bytes = sizes.perCall.get(c.id) ?? null;
      // Only roots carry their trace's total (reference §3.9).
      if (req.include_total_storage_size)
        c.total_storage_size_bytes = c.parent_id === null ? (sizes.perTrace.get(c.trace_id) ?? null) : null;
    }
  }
  return calls;
}

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
    if (page.length >= ENRICH_PAGE) {
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

/** /call/read: the call (deleted ones excluded), or null — not a 404 — when there is none, as the reference answers. */
export async function readCall(
  store: Store,
  req: { project_id: string; id: string; include_costs: boolean; include_storage_size: boolean; include_total_storage_size: boolean },
): Promise<{ call: Call | null }> {
  const query: CallsStreamQueryReq = {
    project_id: req.project_id,
    filter: { call_ids: [req.id] },
    limit: 1,
    include_costs: req.include_costs,
    include_feedback: false,
    include_storage_size: req.include_storage_size,
    include_total_storage_size: req.include_total_storage_size,
    return_expanded_column_values: true,
  };
  for await (const call of streamCalls(store, query, new AbortController().signal, { pageRows: 0 })) return { call };
  return { call: null };
}

export async function countCalls(
  store: Store,
  req: CallsQueryStatsReq,
): Promise<{ count: number; total_storage_size_bytes?: number | null }> {
  const { sql, params, plan } = buildCallsStatsQuery(req);
  const row = await store.row<{ count: number; total_storage_size_bytes?: number | null }>(sql, params, {
    name: 'calls.count',
    settings: plan.settings,
    // A search's count reads the text index as its pages do: heavy work (streamCallLines).
    ...(plan.searching ? { lane: 'heavy' as const } : {}),
  });
  const out: { count: number; total_storage_size_bytes?: number | null } = { count: Number(row?.count ?? 0) };
  if (req.include_total_storage_size)
    out.total_storage_size_bytes = row?.total_storage_size_bytes == null ? null : Number(row.total_storage_size_bytes);
  return out;
}
