import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, clip, clipped, fitPage, fitValue, type ClipOptions } from '../budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../cursor';
import {
  answer,
  cursorArg,
  dropEmpty,
  latencyOf,
  limitArg,
  maxCharsArg,
  opShort,
  projectIdArg,
  statusOf,
  type ApiCall,
  type ToolContext,
} from './shared';

/** Most calls of one trace read (a bound on one answer's work; the HTTP API's usage routes stop at 10,000 too). */
export const TRACE_MAX_CALLS = 10_000;
/** What a trace's node shows of its inputs and output. */
const NODE_CLIP: ClipOptions = { maxString: 100, maxItems: 5, maxDepth: 3 };
const NODE_IO_CHARS = 300;
/** The tree is read without inputs and outputs: they are read for one page of nodes at a time. */
const TREE_COLUMNS = [
  'id',
  'op_name',
  'display_name',
  'trace_id',
  'parent_id',
  'thread_id',
  'started_at',
  'ended_at',
  'exception',
  'summary',
];

interface ModelUsage {
  requests: number;
  total_tokens: number;
  prompt_tokens_total_cost: number | null;
  completion_tokens_total_cost: number | null;
}

/** Tokens and USD of a call with its descendants, from /trace/usage's per-model figures. */
function rollup(perModel: Record<string, ModelUsage> | undefined): { tokens: number; cost: number | null } {
  let tokens = 0;
  let cost: number | null = null;
  for (const u of Object.values(perModel ?? {})) {
    tokens += u.total_tokens;
    const c = (u.prompt_tokens_total_cost ?? 0) + (u.completion_tokens_total_cost ?? 0);
    if (u.prompt_tokens_total_cost !== null || u.completion_tokens_total_cost !== null) cost = (cost ?? 0) + c;
  }
  return { tokens, cost };
}

interface Node {
  call: ApiCall;
  depth: number;
  children: number;
}

/** The calls in depth-first order (children by start time), each with its depth; calls whose parent is not in the trace are roots. */
export function depthFirst(calls: ApiCall[]): Node[] {
  const ids = new Set(calls.map((c) => c.id));
  const kids = new Map<string, ApiCall[]>();
  const roots: ApiCall[] = [];
  for (const c of calls) {
    if (c.parent_id && ids.has(c.parent_id)) {
      const list = kids.get(c.parent_id) ?? [];
      list.push(c);
      kids.set(c.parent_id, list);
    } else roots.push(c);
  }
  const byStart = (a: ApiCall, b: ApiCall) => a.started_at.localeCompare(b.started_at) || a.id.localeCompare(b.id);
  const out: Node[] = [];
  const stack: Node[] = roots
    .sort(byStart)
    .reverse()
    .map((call) => ({ call, depth: 0, children: kids.get(call.id)?.length ?? 0 }));
  while (stack.length) {
    const node = stack.pop()!;
    out.push(node);
    const children = (kids.get(node.call.id) ?? []).sort(byStart);
    for (let i = children.length - 1; i >= 0; i--) {
      const c = children[i]!;
      stack.push({ call: c, depth: node.depth + 1, children: kids.get(c.id)?.length ?? 0 });
    }
  }
  return out;
}

export function registerTraceTools(server: McpServer, ctx: ToolContext): void {
  const args = {
    project_id: projectIdArg,
    trace_id: z.string().min(1).describe("the trace's id (a call's trace_id)"),
    include_io: z.boolean().default(true).describe("show each call's inputs and output, clipped (false: more calls per page)"),
    limit: limitArg(200, 1000, 'calls of the tree'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'get_trace',
    {
      title: 'Get a trace',
      description:
        "A trace as its call tree, depth first: each call's depth, op, status, start offset and duration (ms), error, and tokens and cost rolled up " +
        `with its descendants, inputs/output clipped to ${NODE_IO_CHARS} characters. The trace's totals come first. ` +
        'Big traces page with next_cursor; read one call whole with get_call (and one field whole with its `field`).',
      inputSchema: args,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('get_trace', a, a.cursor);
      const filter = { trace_ids: [a.trace_id] };
      const [calls, usage] = await Promise.all([
        ctx.api.lines<ApiCall>('/calls/stream_query', {
          project_id: a.project_id,
          filter,
          columns: TREE_COLUMNS,
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit: TRACE_MAX_CALLS,
        }),
        ctx.api.post<{ call_usage: Record<string, Record<string, ModelUsage>> }>('/trace/usage', {
          project_id: a.project_id,
          filter,
          include_costs: true,
          limit: TRACE_MAX_CALLS,
        }),
      ]);
      if (calls.length === 0) throw new ArgumentError('trace_id', `no trace ${a.trace_id} in project ${a.project_id}`);
      const nodes = depthFirst(calls);
      const t0 = Math.min(...calls.map((c) => Date.parse(c.started_at)));
      const ends = calls.map((c) => (c.ended_at ? Date.parse(c.ended_at) : NaN)).filter((t) => !Number.isNaN(t));
      const roots = nodes.filter((n) => n.depth === 0);
      const totals = roots.map((r) => rollup(usage.call_usage[r.call.id]));
      const root = roots[0]!.call;
      const head = dropEmpty({
        trace_id: a.trace_id,
        root_op: opShort(root.op_name),
        root_call_id: root.id,
        status: statusOf(root),
        started_at: root.started_at,
        duration_ms: ends.length ? Math.max(...ends) - t0 : null,
        calls: calls.length,
        errors: calls.filter((c) => statusOf(c) === 'error').length,
        running: calls.filter((c) => !c.ended_at).length,
        tokens: totals.reduce((s, t) => s + t.tokens, 0),
        cost_usd: totals.some((t) => t.cost !== null) ? totals.reduce((s, t) => s + (t.cost ?? 0), 0) : null,
        read_at_most: calls.length >= TRACE_MAX_CALLS ? `${TRACE_MAX_CALLS} calls: the trace may have more` : null,
        url: ctx.links.trace(a.project_id, a.trace_id),
      });
      if (offset > nodes.length) throw new ArgumentError('cursor', 'past the end of the trace');
      // The page's candidates: no more than could fit if every node were small.
      const candidates = nodes.slice(offset, offset + Math.min(a.limit, Math.ceil(a.max_chars / 120)));
      const io = a.include_io
        ? await readIo(
            ctx,
            a.project_id,
            candidates.map((n) => n.call.id),
          )
        : new Map<string, ApiCall>();
      const lines = candidates.map((n) => {
        const c = n.call;
        const u = rollup(usage.call_usage[c.id]);
        const withIo = io.get(c.id);
        return dropEmpty({
          id: c.id,
          depth: n.depth,
          op: opShort(c.op_name),
          display_name: c.display_name,
          status: statusOf(c),
          start_ms: Date.parse(c.started_at) - t0,
          duration_ms: latencyOf(c),
          error: c.exception ? clip(c.exception, { ...NODE_CLIP, maxString: 300 }) : null,
          tokens: u.tokens || null,
          cost_usd: u.cost,
          children: n.children || null,
          inputs: withIo?.inputs === undefined ? undefined : fitValue(withIo.inputs, NODE_IO_CHARS, NODE_CLIP),
          output: withIo?.output === undefined || withIo.output === null ? undefined : fitValue(withIo.output, NODE_IO_CHARS, NODE_CLIP),
        });
      });
      const page = { trace: head, offset };
      return answer(
        fitPage(page, lines, a.max_chars, (n) => {
          const next = offset + n;
          const shown = lines.slice(0, n);
          return {
            ...page,
            calls: shown,
            ...(next < nodes.length ? { next_cursor: encodeCursor('get_trace', a, next), calls_left: nodes.length - next } : {}),
            budget: budgetNote(a.max_chars, clipped(shown)),
            // One template instead of a link per node: a page holds more of the tree.
            call_url_template: ctx.links.call(a.project_id, '{id}').replace('%7Bid%7D', '{id}'),
          };
        }),
      );
    },
  );
}

/** Inputs and output of these calls, 100 at a time (only a page's worth is ever read). */
async function readIo(ctx: ToolContext, projectId: string, ids: string[]): Promise<Map<string, ApiCall>> {
  const out = new Map<string, ApiCall>();
  for (let i = 0; i < ids.length; i += 100) {
    const batch = ids.slice(i, i + 100);
    const calls = await ctx.api.lines<ApiCall>('/calls/stream_query', {
      project_id: projectId,
      filter: { call_ids: batch },
      columns: ['id', 'inputs', 'output'],
      limit: batch.length,
    });
    for (const c of calls) out.set(c.id, c);
  }
  return out;
}
