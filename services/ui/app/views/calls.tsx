import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { post, postJsonl } from '../api';
import { callsQueryBody, filterFromParams, FilterError, rootsOnly, type CallsFilter } from '../calls-filter';
import { ExportMenu } from '../components/export-menu';
import { FilterBar } from '../components/filter-bar';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { callCost, callStatus, callTokens, fmtCost, fmtInt, fmtMs, fmtTime, latencyMs, opLabel } from '../format';
import { navigate, projectHref, type Route } from '../route';
import { rowOffset, scrollTopShowing, scrollWindow } from '../virtual-scroll';
import { NoteIcon, ReactionIcon } from '../components/reaction-icon';
import { feedbackCounts, feedbackSummary } from '../feedback';
import type { Call, Feedback } from '../types';
import { useAsync } from '../use-async';
import { callIdsWithFeedback, MAX_FEEDBACK_CALLS } from '../feedback-filter';
import { useBodyKeys } from '../use-body-keys';
import { AddToQueue } from '../components/add-to-queue';
import { MAX_QUEUE_ADD_CALLS } from '../queues';

/** Rows per request: the table asks only for the pages that scroll into view. */
export const PAGE_ROWS = 100;
const ROW_PX = 34;
/** Rows rendered above and below the visible ones. */
const OVERSCAN = 12;
/** Scrolling must pause this long before the pages in view are fetched. */
const SCROLL_SETTLE_MS = 120;

interface Column {
  id: string;
  label: string;
  /** The API's sort field (tokens and cost: the server's sums over models); none: not sortable. */
  sort?: string;
  num?: boolean;
  cell: (c: Call) => preact.ComponentChildren;
}

const COLUMNS: Column[] = [
  { id: 'op', label: 'Op', sort: 'op_name', cell: (c) => <span title={c.op_name}>{opLabel(c.op_name)}</span> },
  { id: 'name', label: 'Display name', sort: 'display_name', cell: (c) => c.display_name ?? <span class="muted">—</span> },
  { id: 'status', label: 'Status', sort: 'summary.weave.status', cell: (c) => <StatusBadge status={callStatus(c)} /> },
  { id: 'started', label: 'Started', sort: 'started_at', cell: (c) => fmtTime(c.started_at) },
  { id: 'latency', label: 'Latency', sort: 'summary.weave.latency_ms', num: true, cell: (c) => fmtMs(latencyMs(c)) },
  { id: 'tokens', label: 'Tokens', sort: 'summary.weave.total_tokens', num: true, cell: (c) => fmtInt(callTokens(c)) },
  { id: 'cost', label: 'Cost', sort: 'summary.weave.total_cost', num: true, cell: (c) => fmtCost(callCost(c)) },
  {
    id: 'feedback',
    label: 'Feedback',
    cell: (c) => <FeedbackCell list={((c.summary?.weave as Record<string, unknown> | undefined)?.feedback ?? []) as Feedback[]} />,
  },
  { id: 'user', label: 'User', sort: 'svc_user_id', cell: (c) => c.svc_user_id ?? '—' },
];

/** Reactions and notes of a call, counted (the summary as text in `data-feedback` and the tooltip). */
function FeedbackCell({ list }: { list: Feedback[] }) {
  const { reactions, notes, scores } = feedbackCounts(list);
  if (reactions.length === 0 && notes === 0 && scores === 0) return <span class="muted">—</span>;
  const summary = feedbackSummary(list);
  return (
    <span class="feedback-cell" data-feedback={summary} title={summary}>
      {reactions.map(([emoji, n]) => (
        <span key={emoji}>
          <ReactionIcon emoji={emoji} />
          {n}
        </span>
      ))}
      {notes ? (
        <span>
          <NoteIcon />
          {notes}
        </span>
      ) : null}
      {scores ? (
        <span title={`${scores} score${scores === 1 ? '' : 's'}`}>
          <span class="score-star">★</span>
          {scores}
        </span>
      ) : null}
    </span>
  );
}

/** Columns the table shows (the rest of a call is not sent). */
const WANTED = ['id', 'op_name', 'display_name', 'started_at', 'ended_at', 'exception', 'summary', 'svc_user_id', 'trace_id', 'parent_id'];

export function StatusBadge({ status }: { status: string }) {
  const label = status === 'descendant_error' ? 'child error' : status;
  return <span class={`badge status-${status}`}>{label}</span>;
}

/** `started_at:desc` ↔ the API's sort_by. */
function parseSort(s: string | null): { field: string; direction: 'asc' | 'desc' } {
  const [field, dir] = (s ?? 'started_at:desc').split(':');
  return { field: field || 'started_at', direction: dir === 'asc' ? 'asc' : 'desc' };
}

export function CallsView({ projectId, route }: { projectId: string; route: Route }) {
  const filter = filterFromParams(route.params);
  const sort = parseSort(route.params.get('sort'));
  const apply = (f: CallsFilter, s = sort) =>
    navigate(projectHref(projectId, ['calls'], { ...f, sort: `${s.field}:${s.direction}` }), { replace: false });
  // The Feedback filter is a lookup in the feedback first; the table then asks for those calls.
  const feedbackCalls = useAsync(
    (signal) => (filter.feedback ? callIdsWithFeedback(projectId, filter.feedback, signal) : Promise.resolve(undefined)),
    [projectId, filter.feedback],
  );
  const ready = !feedbackCalls.loading && !feedbackCalls.error;
  return (
    <Layout projectId={projectId} tab="calls">
      <FilterBar key={projectId} value={filter} onApply={(f) => apply(f)} />
      {filter.feedback && feedbackCalls.loading ? <Loading what="feedback" /> : null}
      {feedbackCalls.error ? <ErrorBox error={feedbackCalls.error} /> : null}
      {ready && feedbackCalls.data?.ids.length === 0 ? <Empty title="No calls have that feedback" /> : null}
      {ready && feedbackCalls.data?.truncated ? (
        <p class="muted">The {MAX_FEEDBACK_CALLS.toLocaleString('en-US')} calls with the latest such feedback.</p>
      ) : null}
      {!filter.feedback || (ready && feedbackCalls.data?.ids.length) ? (
        <CallsTable
          key={`${projectId}|${route.params.toString()}`}
          projectId={projectId}
          filter={filter}
          callIds={feedbackCalls.data?.ids}
          sort={sort}
          onSort={(field) => apply(filter, { field, direction: sort.field === field && sort.direction === 'desc' ? 'asc' : 'desc' })}
        />
      ) : null}
    </Layout>
  );
}

/**
 * Server-side paged, windowed table: the DOM holds only the rows in view (plus a margin), and
 * pages of PAGE_ROWS are fetched as they scroll into view; the total comes from /calls/query_stats.
 */
function CallsTable({
  projectId,
  filter,
  callIds,
  sort,
  onSort,
}: {
  projectId: string;
  filter: CallsFilter;
  /** Only these calls (the Feedback filter's). */
  callIds?: string[];
  sort: { field: string; direction: 'asc' | 'desc' };
  onSort: (field: string) => void;
}) {
  const body = useMemo(() => {
    try {
      const q = callsQueryBody({ ...filter, roots: rootsOnly(filter) ? '1' : '0' }, projectId);
      if (callIds) q.filter = { ...q.filter, call_ids: callIds };
      return { ...q, project_id: projectId };
    } catch (e) {
      if (e instanceof FilterError) return e;
      throw e;
    }
  }, [projectId, JSON.stringify(filter), callIds]);
  const pages = useRef(new Map<number, Call[] | 'loading'>());
  const abort = useRef(new AbortController());
  const [, setTick] = useState(0);
  const rerender = () => setTick((t) => t + 1);
  const [count, setCount] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(body instanceof FilterError ? body : null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [active, setActive] = useState(0);
  // Calls ticked for an action on several (add to a queue); `x` ticks the active row.
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const toggleSelected = (id: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (!n.delete(id)) n.add(id);
      return n;
    });
  const scroller = useRef<HTMLDivElement>(null);

  useEffect(() => () => abort.current.abort(), []);
  const countAsked = useRef(false);
  /** The total is asked once the first page is in: on a big project the count takes longer, and must not delay the rows. */
  const askCount = () => {
    if (countAsked.current || body instanceof FilterError) return;
    countAsked.current = true;
    post<{ count: number }>('/calls/query_stats', body, abort.current.signal).then(
      (r) => setCount(r.count),
      (e) => e.name !== 'AbortError' && setError(e),
    );
  };

  /**
   * The request for one page. Sorted by start (the default), a page that follows a loaded one
   * continues after its last row (a keyset condition in `$expr`: the server takes a top-N from
   * there, however deep); other pages use `offset`, which the server pays for in rows skipped.
   */
  const pageRequest = (page: number, base: Exclude<typeof body, FilterError>) => {
    const prev = pages.current.get(page - 1);
    const req = { ...base, sort_by: [sort], limit: PAGE_ROWS, include_costs: true, include_feedback: true, columns: WANTED };
    if (sort.field === 'started_at' && Array.isArray(prev) && prev.length === PAGE_ROWS) {
      const last = prev[PAGE_ROWS - 1]!;
      const started = { $getField: 'started_at' };
      // The server orders ties by id in the direction of a sort on started_at (its key read forwards or backwards).
      const before = sort.direction === 'desc' ? '$lt' : '$gt';
      const after = {
        $or: [
          { [before]: [started, { $literal: last.started_at }] },
          { $and: [{ $eq: [started, { $literal: last.started_at }] }, { [before]: [{ $getField: 'id' }, { $literal: last.id }] }] },
        ],
      };
      const query = base.query ? { $expr: { $and: [base.query.$expr, after] } } : { $expr: after };
      return { ...req, query, offset: 0 };
    }
    return { ...req, offset: page * PAGE_ROWS };
  };

  /** Set by the first failed request: the table then shows the error and asks for nothing more (no retry loop). */
  const failed = useRef(false);
  const loadPage = (page: number) => {
    if (body instanceof FilterError || failed.current || pages.current.has(page)) return;
    pages.current.set(page, 'loading');
    postJsonl<Call>('/calls/stream_query', pageRequest(page, body), abort.current.signal).then(
      (rows) => {
        pages.current.set(page, rows);
        if (page === 0) askCount();
        rerender();
      },
      (e) => {
        pages.current.delete(page);
        if (e.name === 'AbortError') return;
        failed.current = true;
        setError(e);
      },
    );
  };

  // Rows known so far: the count once known; before that, what was loaded (+ one page if it was full).
  let loaded = 0;
  let lastFull = false;
  for (const [p, rows] of pages.current) {
    if (rows === 'loading') continue;
    if (p * PAGE_ROWS + rows.length > loaded) {
      loaded = p * PAGE_ROWS + rows.length;
      lastFull = rows.length === PAGE_ROWS;
    }
  }
  const total = count ?? loaded + (lastFull ? PAGE_ROWS : 0);
  const win = scrollWindow({ scrollTop: view.top, viewPx: view.height, rows: total, rowPx: ROW_PX, overscan: OVERSCAN });
  const { first, last } = win;

  // Pages in view are fetched once scrolling pauses (a drag of the scrollbar across the whole
  // table asks for nothing on the way), in order, so each can continue from the one before.
  useEffect(() => {
    const wantFirst = Math.floor(first / PAGE_ROWS);
    const wantLast = Math.max(wantFirst, Math.floor(Math.max(first, last - 1) / PAGE_ROWS));
    if (failed.current) return;
    const missing: number[] = [];
    // A page whose predecessor is on its way waits for it (then continues from its last row).
    for (let p = wantFirst; p <= wantLast; p++) if (!pages.current.has(p) && pages.current.get(p - 1) !== 'loading') missing.push(p);
    if (missing.length === 0) return;
    const timer = setTimeout(() => missing.forEach(loadPage), pages.current.size === 0 ? 0 : SCROLL_SETTLE_MS);
    return () => clearTimeout(timer);
  });

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const rowAt = (i: number): Call | null | 'loading' => {
    const page = pages.current.get(Math.floor(i / PAGE_ROWS));
    if (!page || page === 'loading') return 'loading';
    return page[i % PAGE_ROWS] ?? null;
  };
  const open = (c: Call) => navigate(projectHref(projectId, ['trace', c.trace_id], { call: c.id }));

  const onKey = (e: KeyboardEvent) => {
    const el = scroller.current!;
    const perPage = Math.max(1, Math.floor(el.clientHeight / ROW_PX) - 1);
    let next = active;
    if (e.key === 'ArrowDown' || e.key === 'j') next = active + 1;
    else if (e.key === 'ArrowUp' || e.key === 'k') next = active - 1;
    else if (e.key === 'PageDown') next = active + perPage;
    else if (e.key === 'PageUp') next = active - perPage;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = total - 1;
    else if (e.key === 'x') {
      const c = rowAt(active);
      if (c && c !== 'loading') toggleSelected(c.id);
      e.preventDefault();
      return;
    } else if (e.key === 'Enter') {
      const c = rowAt(active);
      if (c && c !== 'loading') open(c);
      return;
    } else return;
    e.preventDefault();
    next = Math.max(0, Math.min(total - 1, next));
    setActive(next);
    // In the rows' own coordinates (scrolling is scaled past the spacer's cap: virtual-scroll.ts).
    const y = next * ROW_PX;
    const w = scrollWindow({ scrollTop: el.scrollTop, viewPx: el.clientHeight, rows: total, rowPx: ROW_PX, overscan: 0 });
    if (y < w.rowsTop) el.scrollTop = scrollTopShowing(w, y);
    else if (y + ROW_PX > w.rowsTop + el.clientHeight) el.scrollTop = scrollTopShowing(w, y + ROW_PX - el.clientHeight);
  };

  useBodyKeys((e) => scroller.current && onKey(e));
  if (error) return <ErrorBox error={error} />;
  const firstPage = pages.current.get(0);
  const empty = Array.isArray(firstPage) && firstPage.length === 0;
  const loadedRows = [...pages.current.values()].flatMap((p) => (Array.isArray(p) ? p : []));
  const allTicked = loadedRows.length > 0 && loadedRows.every((c) => selected.has(c.id));
  return (
    <div class="calls">
      <div class="table-meta" aria-live="polite">
        {count === null ? 'Counting calls…' : `${fmtInt(count)} call${count === 1 ? '' : 's'}`}
        <span class="muted">
          {' '}
          · sorted by {sort.field} {sort.direction} · ↑↓ to move, Enter to open, x to tick
        </span>
        {selected.size ? (
          <span class="selection-bar" aria-label="Ticked calls">
            <strong>{fmtInt(selected.size)} ticked</strong>
            {selected.size > MAX_QUEUE_ADD_CALLS ? (
              <span class="muted"> (at most {fmtInt(MAX_QUEUE_ADD_CALLS)} go in a queue at a time)</span>
            ) : (
              <AddToQueue projectId={projectId} callIds={[...selected]} />
            )}
            <button type="button" class="link" onClick={() => setSelected(new Set())}>
              Clear
            </button>
          </span>
        ) : null}
        {body instanceof FilterError ? null : (
          <ExportMenu path="/calls/export" body={{ ...body, sort_by: [sort] }} fallbackName={`${projectId.replace('/', '-')}-calls`} />
        )}
      </div>
      <div class="vt" role="grid" aria-rowcount={total} aria-label="Calls">
        <div class="vt-head vt-row" role="row">
          <div role="columnheader" class="vt-cell col-select">
            <input
              type="checkbox"
              aria-label="Tick the loaded calls"
              checked={allTicked}
              onChange={() => setSelected(allTicked ? new Set() : new Set(loadedRows.map((c) => c.id)))}
            />
          </div>
          {COLUMNS.map((col) => (
            <div
              key={col.id}
              role="columnheader"
              class={`vt-cell col-${col.id}${col.num ? ' num' : ''}`}
              aria-sort={sort.field === col.sort ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}
            >
              {col.sort ? (
                <button type="button" class="sort" onClick={() => onSort(col.sort!)} title={`Sort by ${col.label}`}>
                  {col.label} {sort.field === col.sort ? (sort.direction === 'asc' ? '▲' : '▼') : ''}
                </button>
              ) : (
                <span class="unsorted">{col.label}</span>
              )}
            </div>
          ))}
        </div>
        {firstPage === undefined || firstPage === 'loading' ? <Loading what="calls" /> : null}
        {empty ? (
          <Empty title="No calls match">
            <p>
              Send calls with <code>POST /call/start</code> and <code>/call/end</code> (or <code>/call/upsert_batch</code>, an OTLP exporter
              at <code>/otel/v1/traces</code>), or loosen the filter.
            </p>
          </Empty>
        ) : (
          <div
            class="vt-body"
            ref={scroller}
            tabIndex={0}
            onKeyDown={onKey}
            onScroll={(e) => setView({ top: (e.target as HTMLElement).scrollTop, height: (e.target as HTMLElement).clientHeight })}
          >
            <div class="vt-spacer" style={{ height: `${win.spacerPx}px` }}>
              {Array.from({ length: Math.max(0, last - first) }, (_, k) => {
                const i = first + k;
                const c = rowAt(i);
                const style = { transform: `translateY(${rowOffset(win, view.top, i, ROW_PX)}px)` };
                if (c === 'loading' || c === null) {
                  return (
                    <div key={i} class="vt-row placeholder" role="row" style={style} aria-rowindex={i + 1}>
                      <div class="vt-cell col-select" />
                      <div class="vt-cell">{c === 'loading' ? 'Loading…' : ''}</div>
                    </div>
                  );
                }
                return (
                  <div
                    key={c.id}
                    class={`vt-row call-row${i === active ? ' active' : ''}`}
                    role="row"
                    aria-rowindex={i + 1}
                    aria-selected={i === active}
                    data-call-id={c.id}
                    style={style}
                    onClick={() => {
                      setActive(i);
                      open(c);
                    }}
                  >
                    <div role="gridcell" class="vt-cell col-select" onClick={(e) => e.stopPropagation()}>
                      <input
                        type="checkbox"
                        aria-label={`Tick call ${c.id}`}
                        checked={selected.has(c.id)}
                        onChange={() => toggleSelected(c.id)}
                      />
                    </div>
                    {COLUMNS.map((col) => (
                      <div key={col.id} role="gridcell" class={`vt-cell col-${col.id}${col.num ? ' num' : ''}`}>
                        {col.cell(c)}
                      </div>
                    ))}
                  </div>
                );
              })}
            </div>
          </div>
        )}
      </div>
    </div>
  );
}
