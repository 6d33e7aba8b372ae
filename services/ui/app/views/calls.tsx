import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { post, postJsonl } from '../api';
import { callsQueryBody, filterFromParams, FilterError, rootsOnly, type CallsFilter } from '../calls-filter';
import { rootsToCheck, tracesWithErrors } from '../child-errors';
import { rolledUpUsage, rootsWithoutUsage, type RolledUsage } from '../rolled-usage';
import { AddToDataset } from '../components/add-to-dataset';
import { ColumnsMenu } from '../components/columns-menu';
import { ExportMenu } from '../components/export-menu';
import { FilterBar } from '../components/filter-bar';
import { Layout } from '../components/layout';
import { SavedViewsBar } from '../components/saved-views-bar';
import { Empty, ErrorBox, Loading } from '../components/states';
import { callCost, callStatus, callTokens, fmtCost, fmtInt, fmtMs, fmtTime, latencyMs, opLabel } from '../format';
import { navigate, projectHref, type Route } from '../route';
import { DEFAULT_SORT, paramsOf, stateOf, type CallsViewState, type SortSpec } from '../saved-views';
import { lookUpUsers } from '../users';
import { UserName } from '../components/user-name';
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
/** Live refresh: the first page and the count asked again this often (two requests), while the tab is visible. */
export const LIVE_INTERVAL_MS = 5000;
/** Calls one "Add to dataset" takes at most (the calls query's limit of ids). */
const MAX_SELECTED = 1000;

/** What a cell knows beyond its call. */
interface CellContext {
  projectId: string;
  /** A call under this trace root failed (its own status says success). */
  childError: boolean;
  /** An OTLP trace root's usage with its descendants' (its own span carries none). */
  rolledUp?: RolledUsage;
}

/** A trace root's total, marked as its trace's (Σ). */
const rolled = (text: string) => (
  <span class="rolled-up" title="The whole trace's usage: this span's and its descendants'">
    Σ {text}
  </span>
);

interface Column {
  id: string;
  label: string;
  /** The API's sort field (tokens and cost: the server's sums over models); none: not sortable. */
  sort?: string;
  num?: boolean;
  /** Its grid track, wide and below 1000 px (null: not shown there). */
  width: [string, string | null];
  cell: (c: Call, ctx: CellContext) => preact.ComponentChildren;
}

export const COLUMNS: Column[] = [
  {
    id: 'op',
    label: 'Op',
    sort: 'op_name',
    width: ['minmax(140px, 2fr)', 'minmax(110px, 2fr)'],
    cell: (c) => <span title={c.op_name}>{opLabel(c.op_name)}</span>,
  },
  {
    id: 'name',
    label: 'Display name',
    sort: 'display_name',
    width: ['minmax(120px, 2fr)', 'minmax(70px, 1fr)'],
    cell: (c) => c.display_name ?? <span class="muted">—</span>,
  },
  {
    id: 'status',
    label: 'Status',
    sort: 'summary.weave.status',
    width: ['110px', '104px'],
    cell: (c, ctx) => <StatusBadge status={ctx.childError ? 'descendant_error' : callStatus(c)} />,
  },
  { id: 'started', label: 'Started', sort: 'started_at', width: ['215px', '215px'], cell: (c) => fmtTime(c.started_at) },
  {
    id: 'latency',
    label: 'Latency',
    sort: 'summary.weave.latency_ms',
    num: true,
    width: ['100px', '76px'],
    cell: (c) => fmtMs(latencyMs(c)),
  },
  {
    id: 'tokens',
    label: 'Tokens',
    sort: 'summary.weave.total_tokens',
    num: true,
    width: ['80px', '64px'],
    cell: (c, ctx) => (callTokens(c) === null && ctx.rolledUp ? rolled(fmtInt(ctx.rolledUp.tokens)) : fmtInt(callTokens(c))),
  },
  {
    id: 'cost',
    label: 'Cost',
    sort: 'summary.weave.total_cost',
    num: true,
    // Wide enough for a rolled-up cost of a few millionths (`Σ $0.000012`) at 1440 px.
    width: ['128px', null],
    cell: (c, ctx) =>
      callCost(c) === null && ctx.rolledUp?.cost !== null && ctx.rolledUp?.cost !== undefined
        ? rolled(fmtCost(ctx.rolledUp.cost))
        : fmtCost(callCost(c)),
  },
  {
    id: 'feedback',
    label: 'Feedback',
    width: ['110px', '90px'],
    cell: (c) => <FeedbackCell list={((c.summary?.weave as Record<string, unknown> | undefined)?.feedback ?? []) as Feedback[]} />,
  },
  {
    id: 'user',
    label: 'User',
    sort: 'svc_user_id',
    width: ['minmax(90px, 1fr)', null],
    cell: (c, ctx) => <UserCell id={c.svc_user_id} {...ctx} />,
  },
];
const COLUMN_IDS = COLUMNS.map((c) => c.id);
/** The row's checkbox. */
const SELECT_WIDTH: [string, string] = ['34px', '30px'];

/** A user by name when weft knows it (a member of the project's entity), else the id, short (the page looked the names up). */
function UserCell({ id, projectId }: { id: string | null | undefined; projectId: string }) {
  if (!id) return <span class="muted">—</span>;
  return <UserName id={id} projectId={projectId} />;
}

/** Reactions and notes of a call, counted (the summary as text in `data-feedback` and the tooltip). */
function FeedbackCell({ list }: { list: Feedback[] }) {
  const { reactions, notes, scores, results } = feedbackCounts(list);
  if (reactions.length === 0 && notes === 0 && scores === 0 && results === 0) return <span class="muted">—</span>;
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
      {results ? (
        <span title={`${results} scorer result${results === 1 ? '' : 's'} (monitors, apply_scorer)`}>
          <span class="score-star">⚖</span>
          {results}
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
function parseSort(s: string | null): SortSpec {
  if (!s) return DEFAULT_SORT;
  const [field, dir] = s.split(':');
  return { field: field || 'started_at', direction: dir === 'asc' ? 'asc' : 'desc' };
}

/** A saved view as /obj/read returns it. */
export interface SavedViewObject {
  object_id: string;
  digest: string;
  val: { label?: string; view_type?: string; definition?: Record<string, unknown> };
}

export function CallsView({ projectId, route }: { projectId: string; route: Route }) {
  const filter = filterFromParams(route.params);
  const sort = parseSort(route.params.get('sort'));
  const hidden = (route.params.get('hide') ?? '').split(',').filter((id) => COLUMN_IDS.includes(id));
  const state: CallsViewState = { filter, sort, hidden };
  const viewId = route.params.get('view') ?? undefined;
  const show = (s: CallsViewState, view = viewId) => navigate(projectHref(projectId, ['calls'], { ...paramsOf(s), view }));
  // Live refresh is the user's choice for this tab, kept across filters (not in the URL: a shared link does not poll).
  const [live, setLive] = useState(false);
  // A saved view (`?view=<object id>`) opens as its filter, sort and columns, written into the URL (which then has a sort).
  const [saves, setSaves] = useState(0);
  const saved = useAsync(
    (signal) =>
      viewId
        ? post<{ obj: SavedViewObject }>('/obj/read', { project_id: projectId, object_id: viewId, digest: 'latest' }, signal).then(
            (r) => r.obj,
          )
        : Promise.resolve(null),
    [projectId, viewId, saves],
  );
  const opening = !!viewId && !route.params.get('sort');
  useEffect(() => {
    if (!opening || !saved.data) return;
    const { state: opened } = stateOf(saved.data.val.definition ?? {}, projectId, COLUMN_IDS);
    navigate(projectHref(projectId, ['calls'], { ...paramsOf(opened), view: viewId }), { replace: true });
  }, [opening, saved.data]);
  // The Feedback filter is a lookup in the feedback first; the table then asks for those calls.
  const feedbackCalls = useAsync(
    (signal) => (filter.feedback && !opening ? callIdsWithFeedback(projectId, filter.feedback, signal) : Promise.resolve(undefined)),
    [projectId, filter.feedback, opening],
  );
  const ready = !feedbackCalls.loading && !feedbackCalls.error;
  // The table's data depends on the filter and sort, not on the columns shown or the view's name.
  const tableKey = [...route.params.entries()]
    .filter(([k]) => k !== 'hide' && k !== 'view')
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return (
    <Layout projectId={projectId} tab="calls">
      <SavedViewsBar
        projectId={projectId}
        state={state}
        view={saved.data ?? null}
        columns={COLUMNS}
        onOpen={(id) => navigate(projectHref(projectId, ['calls'], { view: id }))}
        onSaved={(id) => {
          setSaves((n) => n + 1);
          show(state, id);
        }}
        onClose={() => show(state, undefined)}
      />
      {saved.error ? <ErrorBox error={saved.error} /> : null}
      {opening ? (
        saved.error ? null : (
          <Loading what="the saved view" />
        )
      ) : (
        <>
          <FilterBar key={projectId} value={filter} onApply={(f) => show({ ...state, filter: f })} />
          {filter.feedback && feedbackCalls.loading ? <Loading what="feedback" /> : null}
          {feedbackCalls.error ? <ErrorBox error={feedbackCalls.error} /> : null}
          {ready && feedbackCalls.data?.ids.length === 0 ? <Empty title="No calls have that feedback" /> : null}
          {ready && feedbackCalls.data?.truncated ? (
            <p class="muted">The {MAX_FEEDBACK_CALLS.toLocaleString('en-US')} calls with the latest such feedback.</p>
          ) : null}
          {!filter.feedback || (ready && feedbackCalls.data?.ids.length) ? (
            <CallsTable
              key={`${projectId}|${tableKey}`}
              projectId={projectId}
              filter={filter}
              callIds={feedbackCalls.data?.ids}
              sort={sort}
              hidden={hidden}
              live={live}
              onLive={setLive}
              onHidden={(h) => show({ ...state, hidden: h })}
              onSort={(field) =>
                show({ ...state, sort: { field, direction: sort.field === field && sort.direction === 'desc' ? 'asc' : 'desc' } })
              }
            />
          ) : null}
        </>
      )}
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
  hidden,
  live,
  onLive,
  onHidden,
  onSort,
}: {
  projectId: string;
  filter: CallsFilter;
  /** Only these calls (the Feedback filter's). */
  callIds?: string[];
  sort: SortSpec;
  /** Column ids not shown. */
  hidden: string[];
  /** Live refresh on. */
  live: boolean;
  onLive: (on: boolean) => void;
  onHidden: (hidden: string[]) => void;
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
  const countNow = useRef<number | null>(null);
  countNow.current = count;
  const [error, setError] = useState<unknown>(body instanceof FilterError ? body : null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [active, setActive] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<{ objectId: string; digest: string; rows: number } | null>(null);
  const [lastRefresh, setLastRefresh] = useState<Date | null>(null);
  /** Trace roots whose traces have a failed call (child-errors.ts), and the traces asked about. */
  const childErrors = useRef(new Set<string>());
  const checkedTraces = useRef(new Set<string>());
  /** OTLP trace roots' usage with their descendants' (rolled-usage.ts), by root id. */
  const rolledUp = useRef(new Map<string, RolledUsage>());
  const scroller = useRef<HTMLDivElement>(null);
  const columns = COLUMNS.filter((c) => !hidden.includes(c.id));

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
   * What a loaded page needs besides itself, asked once per page and never retried: the names of
   * its users, and whether its OTLP roots' traces have a failed call.
   */
  const annotatePage = (rows: Call[]) => {
    const signal = abort.current.signal;
    lookUpUsers(
      projectId,
      rows.map((c) => c.svc_user_id),
      signal,
    ).then(
      (named) => named && rerender(),
      () => {},
    );
    const roots = rootsToCheck(rows).filter((c) => !checkedTraces.current.has(c.trace_id));
    for (const c of roots) checkedTraces.current.add(c.trace_id);
    tracesWithErrors(projectId, roots, signal).then(
      (failed) => {
        if (failed.size === 0) return;
        for (const t of failed) childErrors.current.add(t);
        rerender();
      },
      () => {},
    );
    rolledUpUsage(
      projectId,
      rootsWithoutUsage(rows).filter((c) => !rolledUp.current.has(c.id)),
      signal,
    ).then(
      (usage) => {
        if (usage.size === 0) return;
        for (const [id, u] of usage) rolledUp.current.set(id, u);
        rerender();
      },
      () => {},
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
        annotatePage(rows);
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

  // Live refresh: every LIVE_INTERVAL_MS (the tab visible, the previous answer in) the first page
  // and the count again; when either changed, the first page is replaced and the others are
  // fetched again as they come into view. The first error stops it (and shows).
  useEffect(() => {
    if (!live || body instanceof FilterError) return;
    let waiting = false;
    const timer = setInterval(() => {
      if (waiting || failed.current || document.hidden || pages.current.get(0) === 'loading') return;
      waiting = true;
      const signal = abort.current.signal;
      Promise.all([
        postJsonl<Call>('/calls/stream_query', pageRequest(0, body), signal),
        post<{ count: number }>('/calls/query_stats', body, signal),
      ]).then(
        ([rows, stats]) => {
          waiting = false;
          setLastRefresh(new Date());
          const before = pages.current.get(0);
          if (JSON.stringify(before) === JSON.stringify(rows) && stats.count === countNow.current) return;
          pages.current = new Map([[0, rows]]);
          checkedTraces.current = new Set();
          childErrors.current = new Set();
          rolledUp.current = new Map();
          annotatePage(rows);
          setCount(stats.count);
          rerender();
        },
        (e) => {
          waiting = false;
          if (e.name === 'AbortError') return;
          failed.current = true;
          onLive(false);
          setError(e);
        },
      );
    }, LIVE_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [live]);

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
  const loadedCalls = () => [...pages.current.values()].flatMap((p) => (p === 'loading' ? [] : p));
  const open = (c: Call) => navigate(projectHref(projectId, ['trace', c.trace_id], { call: c.id }));
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else if (next.size < MAX_SELECTED) next.add(id);
    setSelected(next);
  };
  const allLoaded = loadedCalls();
  const allSelected = allLoaded.length > 0 && allLoaded.every((c) => selected.has(c.id));

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
    else if (e.key === 'Enter' || e.key === 'x') {
      const c = rowAt(active);
      if (c && c !== 'loading') {
        if (e.key === 'x') toggle(c.id);
        else open(c);
      }
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
  // The grid's tracks for the columns shown (below 1000 px, cost and user are not: style.css).
  const tracks = (narrow: boolean) =>
    [SELECT_WIDTH[narrow ? 1 : 0], ...columns.map((c) => c.width[narrow ? 1 : 0]).filter((w): w is string => w !== null)].join(' ');
  const gridVars = { '--vt-cols': tracks(false), '--vt-cols-narrow': tracks(true) } as Record<string, string>;
  return (
    <div class="calls">
      <div class="table-meta" aria-live="polite">
        {count === null ? 'Counting calls…' : `${fmtInt(count)} call${count === 1 ? '' : 's'}`}
        <span class="muted">
          {' '}
          · sorted by {sort.field} {sort.direction}
          <span class="keys-hint"> · ↑↓ to move, Enter to open, x to select</span>
        </span>
        <label class="check live-toggle" title={`Ask for new calls every ${LIVE_INTERVAL_MS / 1000} s while this tab is visible`}>
          <input type="checkbox" checked={live} onChange={(e) => onLive((e.target as HTMLInputElement).checked)} /> Live
        </label>
        {live ? (
          <span class="muted live-note">{lastRefresh ? `updated ${fmtTime(lastRefresh.toISOString())}` : 'refreshing every 5 s'}</span>
        ) : null}
        <span class="spacer" />
        {selected.size ? (
          <span class="selection" role="group" aria-label="Selected calls">
            <strong>{fmtInt(selected.size)} selected</strong>
            <button type="button" class="primary" onClick={() => setAdding(true)}>
              Add to dataset…
            </button>
            {selected.size > MAX_QUEUE_ADD_CALLS ? (
              <span class="muted"> (at most {fmtInt(MAX_QUEUE_ADD_CALLS)} go in a queue at a time)</span>
            ) : (
              <AddToQueue projectId={projectId} callIds={[...selected]} />
            )}
            <button type="button" class="link" onClick={() => setSelected(new Set())}>
              Clear selection
            </button>
          </span>
        ) : null}
        <ColumnsMenu columns={COLUMNS} hidden={hidden} onChange={onHidden} />
        {body instanceof FilterError ? null : (
          <ExportMenu path="/calls/export" body={{ ...body, sort_by: [sort] }} fallbackName={`${projectId.replace('/', '-')}-calls`} />
        )}
      </div>
      {added ? (
        <p class="notice" role="status">
          Added {fmtInt(added.rows)} row{added.rows === 1 ? '' : 's'} to{' '}
          <a href={projectHref(projectId, ['objects', added.objectId], { v: added.digest })}>
            {added.objectId} <code>{added.digest.slice(0, 10)}</code>
          </a>
          <button type="button" class="link" aria-label="Dismiss" onClick={() => setAdded(null)}>
            ✕
          </button>
        </p>
      ) : null}
      {adding ? (
        <AddToDataset
          projectId={projectId}
          callIds={[...selected]}
          onClose={() => setAdding(false)}
          onDone={(r) => {
            setAdding(false);
            setSelected(new Set());
            setAdded(r);
          }}
        />
      ) : null}
      <div class="vt" role="grid" aria-rowcount={total} aria-label="Calls" style={gridVars}>
        <div class="vt-head vt-row" role="row">
          <div role="columnheader" class="vt-cell col-select">
            <input
              type="checkbox"
              aria-label="Select the loaded calls"
              checked={allSelected}
              onChange={() => setSelected(allSelected ? new Set() : new Set(allLoaded.slice(0, MAX_SELECTED).map((c) => c.id)))}
            />
          </div>
          {columns.map((col) => (
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
                const ctx: CellContext = {
                  projectId,
                  childError: !c.parent_id && childErrors.current.has(c.trace_id) && callStatus(c) === 'success',
                  rolledUp: rolledUp.current.get(c.id),
                };
                return (
                  <div
                    key={c.id}
                    class={`vt-row call-row${i === active ? ' active' : ''}${selected.has(c.id) ? ' picked' : ''}`}
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
                        aria-label={`Select call ${c.id}`}
                        checked={selected.has(c.id)}
                        onChange={() => toggle(c.id)}
                      />
                    </div>
                    {columns.map((col) => (
                      <div key={col.id} role="gridcell" class={`vt-cell col-${col.id}${col.num ? ' num' : ''}`}>
                        {col.cell(c, ctx)}
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
