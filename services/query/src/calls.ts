import type { CallsQueryStatsReq, CallsStreamQueryReq, Call } from '@weft/api';
import { buildCallsStatsQuery, CallsQueryPlan, cursorOf, type Cursor, type PageSpec } from '@weft/query';
import { callFromRow, type MergedCallRow, type Store } from '@weft/store';
import { callCosts } from './costs';
import { callStorageSizes } from './storage';

export interface StreamOptions {
  /**
   * Rows per ClickHouse query. 0: one query for the whole result, streamed as the server sends it.
   * >0: keyset pages ordered by the sort keys + id, so memory stays bounded even where the
   * connection buffers each result (the embedded chDB connection does).
   */
  pageRows: number;
}

/** Rows handed to the enrich stage at a time (the reference streams in batches of 50 → 500). */
const ENRICH_BATCH = 500;
/** The first page is small so the first row comes fast; pages then grow ×5 up to `pageRows`. */
const FIRST_PAGE_ROWS = 100;

type PageRow = MergedCallRow & Record<string, unknown>;

/**
 * Streams merged calls for /calls/stream_query: rows come from ClickHouse page by page (or in one
 * streamed query), are turned into Calls, go through the enrich stage in batches, and are yielded.
 * `signal` aborts the ClickHouse query in flight when the client goes away.
 */
export async function* streamCalls(
  store: Store,
  req: CallsStreamQueryReq,
  signal: AbortSignal,
  opts: StreamOptions,
): AsyncGenerator<Call> {
  const plan = new CallsQueryPlan(req);
  const pages = plan.fromStartParts && opts.pageRows > 0 ? candidatePages(store, plan, req, signal, opts) : keysetPages(store, plan, req, signal, opts);
  for await (const rows of pages) yield* await enrichCalls(store, req, plan, rows);
}

/** Runs one page query and yields its rows in batches for the enrich stage. */
async function* pageRows(store: Store, plan: CallsQueryPlan, page: PageSpec, signal: AbortSignal): AsyncGenerator<PageRow[]> {
  const { sql, params } = plan.pageQuery(page);
  const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow', abort_signal: signal });
  let batch: PageRow[] = [];
  for await (const rows of rs.stream<PageRow>()) {
    for (const r of rows) {
      batch.push(r.json());
      if (batch.length >= ENRICH_BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length) yield batch;
}

/** Keyset pages over the merged calls (any filter and sort), or one streamed query when pageRows is 0. */
async function* keysetPages(store: Store, plan: CallsQueryPlan, req: CallsStreamQueryReq, signal: AbortSignal, opts: StreamOptions): AsyncGenerator<PageRow[]> {
  let remaining = req.limit && req.limit > 0 ? req.limit : Infinity;
  let offset = req.offset ?? 0;
  let cursor: Cursor | undefined;
  let size = Math.min(opts.pageRows, FIRST_PAGE_ROWS);
  while (remaining > 0 && !signal.aborted) {
    const limit = opts.pageRows > 0 ? Math.min(size, remaining) : Number.isFinite(remaining) ? remaining : undefined;
    size = Math.min(opts.pageRows, size * 5);
    let got = 0;
    for await (const batch of pageRows(store, plan, { after: cursor, limit, offset }, signal)) {
      got += batch.length;
      cursor = cursorOf(batch[batch.length - 1]!, plan.keys);
      yield batch;
    }
    remaining -= got;
    offset = 0;
    // A short page (or the single unpaged query) is the end of the result.
    if (limit === undefined || got < limit) break;
  }
}

/**
 * Pages picked from the start parts (plan.fromStartParts): a top-N of candidate ids by the sort
 * keys, without merging the whole project, then those candidates merged and checked. Only
 * deleted calls can drop out, so a page is rarely short; the next page continues after the
 * last candidate.
 */
async function* candidatePages(store: Store, plan: CallsQueryPlan, req: CallsStreamQueryReq, signal: AbortSignal, opts: StreamOptions): AsyncGenerator<PageRow[]> {
  let remaining = req.limit && req.limit > 0 ? req.limit : Infinity;
  let skip = req.offset ?? 0;
  let cursor: Cursor | undefined;
  let size = Math.min(opts.pageRows, FIRST_PAGE_ROWS);
  while (remaining > 0 && !signal.aborted) {
    const limit = Math.min(size, skip + remaining);
    size = Math.min(opts.pageRows, size * 5);
    const { sql, params } = plan.candidatesQuery({ after: cursor, limit });
    const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow', abort_signal: signal });
    const candidates = await rs.json<Record<string, unknown> & { id: string }>();
    if (candidates.length === 0) break;
    cursor = cursorOf(candidates[candidates.length - 1]!, plan.keys);
    // Offsets count matching calls, so skipped ones are only known once merged and checked.
    for await (let batch of pageRows(store, plan, { ids: candidates.map((c) => c.id) }, signal)) {
      if (skip > 0) {
        const n = Math.min(skip, batch.length);
        skip -= n;
        batch = batch.slice(n);
      }
      if (batch.length > remaining) batch = batch.slice(0, remaining);
      remaining -= batch.length;
      if (batch.length) yield batch;
    }
    if (candidates.length < limit) break;
  }
}

/**
 * The enrich stage: one batch of merged rows → Calls, with everything that is looked up per
 * batch rather than computed in the calls query (costs, storage sizes; feedback and ref
 * expansion belong here too).
 */
async function enrichCalls(store: Store, req: CallsStreamQueryReq, plan: CallsQueryPlan, rows: PageRow[]): Promise<Call[]> {
  const calls = rows.map((r) => withReferenceCallNames(project(callFromRow(r), plan.selected)));
  if (req.include_costs) {
    const costs = await callCosts(store, req.project_id, calls.map((c) => c.id));
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
      if (req.include_total_storage_size) c.total_storage_size_bytes = c.parent_id === null ? (sizes.perTrace.get(c.trace_id) ?? null) : null;
    }
  }
  return calls;
}

/** The reference's names of the svc_ members, sent alongside (the Weave SDK reads `wb_user_id`, `wb_run_id`…). */
const REFERENCE_CALL_NAMES = [
  ['svc_user_id', 'wb_user_id'],
  ['svc_run_id', 'wb_run_id'],
  ['svc_run_step', 'wb_run_step'],
  ['svc_run_step_end', 'wb_run_step_end'],
] as const;

function withReferenceCallNames(call: Call): Call {
  const c = call as unknown as Record<string, unknown>;
  for (const [ours, theirs] of REFERENCE_CALL_NAMES) c[theirs] = c[ours] ?? null;
  return call;
}

/** Reference §3.5: unselected objects come back empty, output null, summary only when selected. */
function project(call: Call, selected: Set<string> | undefined): Call {
  if (!selected) return call;
  const c = call as unknown as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (selected.has(key)) continue;
    if (key === 'attributes' || key === 'inputs') c[key] = {};
    else if (key === 'summary' || key === 'output') c[key] = null;
    else if (key !== 'storage_size_bytes' && key !== 'total_storage_size_bytes') c[key] = null;
  }
  return call;
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

export async function countCalls(store: Store, req: CallsQueryStatsReq): Promise<{ count: number; total_storage_size_bytes?: number | null }> {
  const { sql, params } = buildCallsStatsQuery(req);
  const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  const [row] = await rs.json<{ count: number; total_storage_size_bytes?: number | null }>();
  const out: { count: number; total_storage_size_bytes?: number | null } = { count: Number(row?.count ?? 0) };
  if (req.include_total_storage_size) out.total_storage_size_bytes = row?.total_storage_size_bytes == null ? null : Number(row.total_storage_size_bytes);
  return out;
}
