import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { postJsonl } from '../api';
import { CallDetail } from '../components/call-detail';
import { TraceLogs } from '../components/trace-logs';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading, NoSuchCall } from '../components/states';
import { exceptionHeadline } from '../exception';
import { callLabel, callStatus, fmtMs, fmtTime, micros, type Status } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { Call } from '../types';
import { useAsync } from '../use-async';
import { useBodyKeys } from '../use-body-keys';

/** Most calls of one trace the view loads (a larger trace says it was cut). */
const MAX_TRACE_CALLS = 5000;

interface Node {
  call: Call;
  depth: number;
  children: Node[];
  start: number;
  end: number | null;
}

/** Parent/child tree of a trace's calls, children in start order; orphans (parent not in the trace) are roots. */
function buildTree(calls: Call[]): Node[] {
  const nodes = new Map<string, Node>();
  for (const c of calls)
    nodes.set(c.id, { call: c, depth: 0, children: [], start: micros(c.started_at), end: c.ended_at ? micros(c.ended_at) : null });
  const roots: Node[] = [];
  for (const n of nodes.values()) {
    const parent = n.call.parent_id ? nodes.get(n.call.parent_id) : undefined;
    if (parent && parent !== n) parent.children.push(n);
    else roots.push(n);
  }
  const order = (a: Node, b: Node) => a.start - b.start || a.call.id.localeCompare(b.call.id);
  const walk = (list: Node[], depth: number) => {
    list.sort(order);
    for (const n of list) {
      n.depth = depth;
      walk(n.children, depth + 1);
    }
  };
  walk(roots, 0);
  return roots;
}

/**
 * Each call's status as the trace shows it: a call that did not fail itself but has a failed
 * descendant is a `descendant_error` even when its summary says success (OTLP spans carry no
 * status counts of their children; the Weave SDK's do).
 */
function statusesOf(roots: Node[]): Map<string, Status> {
  const out = new Map<string, Status>();
  const visit = (n: Node): boolean => {
    let childFailed = false;
    for (const c of n.children) if (visit(c)) childFailed = true;
    const own = callStatus(n.call);
    out.set(n.call.id, childFailed && own === 'success' ? 'descendant_error' : own);
    return childFailed || own === 'error';
  };
  roots.forEach(visit);
  return out;
}

function flatten(roots: Node[], collapsed: Set<string>): Node[] {
  const out: Node[] = [];
  const visit = (n: Node) => {
    out.push(n);
    if (!collapsed.has(n.call.id)) n.children.forEach(visit);
  };
  roots.forEach(visit);
  return out;
}

export function TraceView({ projectId, traceId, route }: { projectId: string; traceId: string; route: Route }) {
  const { data, error, loading } = useAsync(
    (signal) =>
      postJsonl<Call>(
        '/calls/stream_query',
        {
          project_id: projectId,
          filter: { trace_ids: [traceId] },
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit: MAX_TRACE_CALLS,
          include_costs: true,
          include_feedback: true,
        },
        signal,
      ),
    [projectId, traceId],
  );
  return (
    <Layout projectId={projectId} tab="calls">
      <div class="crumbs">
        <a href={projectHref(projectId, ['calls'])}>Calls</a> / trace <code>{traceId}</code>
      </div>
      {loading ? <Loading what="trace" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.length === 0 ? (
        <Empty title="No calls in this trace">
          <p>
            Nothing with trace id <code>{traceId}</code> in {projectId}.
          </p>
        </Empty>
      ) : null}
      {data && data.length > 0 ? (
        <Trace calls={data} projectId={projectId} traceId={traceId} selectedId={route.params.get('call')} />
      ) : null}
    </Layout>
  );
}

function Trace({
  calls,
  projectId,
  traceId,
  selectedId,
}: {
  calls: Call[];
  projectId: string;
  traceId: string;
  selectedId: string | null;
}) {
  const roots = useMemo(() => buildTree(calls), [calls]);
  const statuses = useMemo(() => statusesOf(roots), [roots]);
  const [collapsed, setCollapsed] = useState(new Set<string>());
  const rows = flatten(roots, collapsed);
  const selected = calls.find((c) => c.id === selectedId) ?? roots[0]!.call;
  const select = (id: string) => navigate(projectHref(projectId, ['trace', traceId], { call: id }), { replace: true });
  // The time axis: first start to last end (running calls reach the last time seen).
  const t0 = Math.min(...calls.map((c) => micros(c.started_at)));
  const t1 = Math.max(...calls.map((c) => (c.ended_at ? micros(c.ended_at) : micros(c.started_at))), t0 + 1);
  const span = t1 - t0;
  const listRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    listRef.current?.querySelector<HTMLElement>('.tree-row.selected')?.scrollIntoView({ block: 'nearest' });
  }, [selected.id]);

  const toggle = (id: string, open?: boolean) => {
    const next = new Set(collapsed);
    if (open ?? next.has(id)) next.delete(id);
    else next.add(id);
    setCollapsed(next);
  };
  const onKey = (e: KeyboardEvent) => {
    const i = rows.findIndex((r) => r.call.id === selected.id);
    const n = rows[i];
    if (e.key === 'ArrowDown' || e.key === 'j') select(rows[Math.min(rows.length - 1, i + 1)]!.call.id);
    else if (e.key === 'ArrowUp' || e.key === 'k') select(rows[Math.max(0, i - 1)]!.call.id);
    else if (e.key === 'ArrowLeft' && n) {
      if (n.children.length && !collapsed.has(n.call.id)) toggle(n.call.id, false);
      else if (n.call.parent_id && calls.some((c) => c.id === n.call.parent_id)) select(n.call.parent_id);
    } else if (e.key === 'ArrowRight' && n?.children.length) toggle(n.call.id, true);
    else return;
    e.preventDefault();
  };
  useBodyKeys(onKey);
  const errors = calls.filter((c) => c.exception).length;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div class="trace">
      <div class="trace-main">
        <div class="trace-summary">
          <strong>{callLabel(roots[0]!.call)}</strong> · {calls.length} call{calls.length === 1 ? '' : 's'} · {fmtMs(span / 1000)} · started{' '}
          {fmtTime(roots[0]!.call.started_at)}
          {errors ? (
            <span class="badge status-error">
              {errors} error{errors === 1 ? '' : 's'}
            </span>
          ) : null}
          {calls.length >= MAX_TRACE_CALLS ? <span class="muted"> (first {MAX_TRACE_CALLS} calls shown)</span> : null}
        </div>
        <div class="waterfall-head">
          <div class="tree-col">Call</div>
          <div class="bar-col axis">
            {ticks.map((t) => (
              <span key={t} style={{ left: `${t * 100}%` }}>
                {fmtMs((t * span) / 1000)}
              </span>
            ))}
          </div>
        </div>
        <div class="tree" role="tree" aria-label="Calls of the trace" tabIndex={0} onKeyDown={onKey} ref={listRef}>
          {rows.map((n) => {
            const status = statuses.get(n.call.id)!;
            const left = ((n.start - t0) / span) * 100;
            const width = Math.max(0.3, (((n.end ?? t1) - n.start) / span) * 100);
            return (
              <div
                key={n.call.id}
                role="treeitem"
                aria-level={n.depth + 1}
                aria-selected={n.call.id === selected.id}
                aria-expanded={n.children.length ? !collapsed.has(n.call.id) : undefined}
                data-call-id={n.call.id}
                data-depth={n.depth}
                class={`tree-row${n.call.id === selected.id ? ' selected' : ''}${n.call.exception ? ' has-error' : ''}`}
                onClick={() => select(n.call.id)}
              >
                <div class="tree-col" style={{ paddingLeft: `${8 + n.depth * 16}px` }}>
                  {n.children.length ? (
                    <button
                      type="button"
                      class="twisty"
                      tabIndex={-1}
                      aria-label={collapsed.has(n.call.id) ? 'Expand' : 'Collapse'}
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(n.call.id);
                      }}
                    >
                      {collapsed.has(n.call.id) ? '▸' : '▾'}
                    </button>
                  ) : (
                    <span class="twisty-space" />
                  )}
                  <span class={`dot status-${status}`} aria-hidden="true" />
                  <span class="tree-label" title={n.call.op_name}>
                    {callLabel(n.call)}
                  </span>
                  {n.call.exception ? (
                    <span class="error-mark" title={exceptionHeadline(n.call.exception)}>
                      !
                    </span>
                  ) : null}
                </div>
                <div class="bar-col">
                  <div
                    class={`bar status-${status}${n.end === null ? ' running' : ''}`}
                    style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
                    data-start-us={n.start - t0}
                    title={`${fmtMs(((n.end ?? t1) - n.start) / 1000)} from +${fmtMs((n.start - t0) / 1000)}`}
                  />
                  <span class="bar-label" style={{ left: `${Math.min(left + width, 100)}%` }}>
                    {fmtMs(n.end === null ? null : (n.end - n.start) / 1000)}
                  </span>
                </div>
              </div>
            );
          })}
        </div>
        <TraceLogs projectId={projectId} traceId={traceId} calls={calls} onSelect={select} />
      </div>
      <aside class="trace-detail">
        <CallDetail key={selected.id} call={selected} projectId={projectId} status={statuses.get(selected.id)} />
      </aside>
    </div>
  );
}

/** `#/p/…/call/<id>`: finds the call's trace and opens it there. */
export function CallRedirect({ projectId, callId }: { projectId: string; callId: string }) {
  const { data, error, loading } = useAsync(
    (signal) =>
      postJsonl<Call>(
        '/calls/stream_query',
        { project_id: projectId, filter: { call_ids: [callId] }, columns: ['trace_id'], limit: 1 },
        signal,
      ),
    [projectId, callId],
  );
  useEffect(() => {
    if (data?.[0]) navigate(projectHref(projectId, ['trace', data[0].trace_id], { call: callId }), { replace: true });
  }, [data]);
  return (
    <Layout projectId={projectId} tab="calls">
      {loading ? <Loading what="call" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.length === 0 ? <NoSuchCall projectId={projectId} callId={callId} /> : null}
    </Layout>
  );
}
