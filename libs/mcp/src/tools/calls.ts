import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, clipped, DETAIL_CLIP, fitPage, fitValue, jsonSize } from '../budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../cursor';
import {
  answer,
  callLine,
  costOf,
  cursorArg,
  latencyOf,
  limitArg,
  maxCharsArg,
  opNamesFor,
  opShort,
  projectIdArg,
  statusOf,
  tokensOf,
  type ApiCall,
  type ToolContext,
} from './shared';

const timestampArg = (what: string) =>
  z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 time, e.g. 2026-01-31T12:00:00Z')
    .optional()
    .describe(what);

export const searchCallsArgs = {
  project_id: projectIdArg,
  op_name: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(50)])
    .optional()
    .describe('the op: its name ("pipeline"), or the op ref; several to match any'),
  status: z.enum(['success', 'error', 'running', 'descendant_error']).optional().describe("the call's status"),
  started_after: timestampArg('calls started at or after this time (ISO 8601)'),
  started_before: timestampArg('calls started before this time (ISO 8601)'),
  text: z.string().min(1).max(1000).optional().describe("case-insensitive text that the call's inputs or output contain"),
  trace_id: z.string().min(1).optional().describe('only the calls of this trace'),
  thread_id: z.string().min(1).optional().describe('only the calls of this thread'),
  parent_id: z.string().min(1).optional().describe('only the children of this call'),
  trace_roots_only: z.boolean().optional().describe('only root calls (one per trace)'),
  feedback: z
    .object({
      type: z.string().min(1).describe('feedback type: wandb.reaction.1, wandb.note.1, wandb.annotation.<spec name>, or * for any'),
      path: z.string().min(1).optional().describe('a path in the payload: emoji, note, value'),
      equals: z.union([z.string(), z.number(), z.boolean()]).optional().describe('the value at path (absent: the call has such feedback)'),
    })
    .optional()
    .describe('only calls with this feedback'),
  query: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'more conditions in the HTTP API\'s query language (the `$expr` body), e.g. {"$gt": [{"$getField": "summary.weave.latency_ms"}, {"$literal": 1000}]}',
    ),
  sort_by: z
    .array(z.object({ field: z.string().min(1), direction: z.enum(['asc', 'desc']).default('desc') }))
    .max(3)
    .optional()
    .describe('order (default started_at desc); fields as the HTTP API: started_at, summary.weave.latency_ms, op_name, …'),
  limit: limitArg(20, 100, 'calls'),
  cursor: cursorArg,
  max_chars: maxCharsArg,
};
type SearchArgs = z.infer<z.ZodObject<typeof searchCallsArgs>>;

const field = (name: string) => ({ $getField: name });
const lit = (v: unknown) => ({ $literal: v });

/** The HTTP API's filter and query ($expr) for a search's arguments. */
export function callsQuery(a: Omit<SearchArgs, 'limit' | 'cursor' | 'max_chars' | 'sort_by'>): {
  filter: Record<string, unknown>;
  query?: { $expr: unknown };
} {
  const filter: Record<string, unknown> = {};
  if (a.op_name) filter.op_names = [a.op_name].flat().flatMap((op) => opNamesFor(a.project_id, op));
  if (a.trace_id) filter.trace_ids = [a.trace_id];
  if (a.thread_id) filter.thread_ids = [a.thread_id];
  if (a.parent_id) filter.parent_ids = [a.parent_id];
  if (a.trace_roots_only) filter.trace_roots_only = true;
  const conds: unknown[] = [];
  if (a.status) conds.push({ $eq: [field('summary.weave.status'), lit(a.status)] });
  if (a.started_after) conds.push({ $gte: [field('started_at'), lit(a.started_after)] });
  if (a.started_before) conds.push({ $lt: [field('started_at'), lit(a.started_before)] });
  if (a.text) {
    const contains = (f: string) => ({ $contains: { input: field(f), substr: lit(a.text), case_insensitive: true } });
    conds.push({ $or: [contains('inputs'), contains('output')] });
  }
  if (a.feedback) {
    const at = `feedback.[${a.feedback.type}].payload${a.feedback.path ? `.${a.feedback.path}` : ''}`;
    conds.push(
      a.feedback.equals === undefined ? { $convert: { input: field(at), to: 'exists' } } : { $eq: [field(at), lit(a.feedback.equals)] },
    );
  }
  if (a.query) conds.push(a.query);
  const expr = conds.length === 0 ? undefined : conds.length === 1 ? conds[0] : { $and: conds };
  return { filter, ...(expr ? { query: { $expr: expr } } : {}) };
}

/** The value at a dotted path of a call (`inputs.messages.0.content`); undefined when absent. */
export function valueAtPath(root: unknown, path: string): unknown {
  let cur = root;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) ? cur[Number(k)] : (cur as Record<string, unknown>)[k];
  }
  return cur;
}

export async function readCall(ctx: ToolContext, projectId: string, callId: string): Promise<ApiCall> {
  const { call } = await ctx.api.post<{ call: ApiCall | null }>('/call/read', { project_id: projectId, id: callId, include_costs: true });
  if (!call) throw new ArgumentError('call_id', `no call ${callId} in project ${projectId}`);
  return call;
}

export function registerCallTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'search_calls',
    {
      title: 'Search calls',
      description:
        'Find calls (op executions) in a project by op, status, time range, text in inputs/output, trace, thread, parent or feedback; ' +
        'newest first unless sort_by says otherwise. Each call comes with status, latency, tokens, cost, clipped inputs/output and a UI link; ' +
        '`total` counts every match. Page with next_cursor. Open one with get_call, its whole trace with get_trace.',
      inputSchema: searchCallsArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('search_calls', a, a.cursor);
      const q = callsQuery(a);
      const body = { project_id: a.project_id, ...q };
      const [{ count }, calls] = await Promise.all([
        ctx.api.post<{ count: number }>('/calls/query_stats', body),
        ctx.api.lines<ApiCall>('/calls/stream_query', {
          ...body,
          sort_by: a.sort_by ?? [{ field: 'started_at', direction: 'desc' }],
          limit: a.limit,
          offset,
          include_costs: true,
        }),
      ]);
      const lines = calls.map((c) => callLine(c, ctx.links));
      const head = { project_id: a.project_id, total: count, offset };
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            calls: lines.slice(0, n),
            ...(next < count ? { next_cursor: encodeCursor('search_calls', a, next) } : {}),
            budget: budgetNote(a.max_chars, clipped(lines.slice(0, n))),
          };
        }),
      );
    },
  );

  const getCallArgs = {
    project_id: projectIdArg,
    call_id: z.string().min(1).describe("the call's id"),
    field: z
      .string()
      .min(1)
      .optional()
      .describe(
        'read this one field whole instead, as text paged by next_cursor: a dotted path such as inputs.messages.0.content, output, exception',
      ),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'get_call',
    {
      title: 'Get a call',
      description:
        "One call in full: op, status, timings, inputs, output, exception, attributes, summary (tokens, cost), its number of children and UI links. Long values are clipped to the answer's budget and marked …[+N]; " +
        'to read one whole, call again with `field` (e.g. "inputs.messages", "output"): its text is returned page by page.',
      inputSchema: getCallArgs,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const call = await readCall(ctx, a.project_id, a.call_id);
      if (a.field) {
        const value = valueAtPath(call, a.field);
        if (value === undefined) throw new ArgumentError('field', `call ${a.call_id} has no field ${a.field}`);
        const text = typeof value === 'string' ? value : JSON.stringify(value);
        const offset = decodeCursor('get_call', a, a.cursor);
        const size = Math.max(1_000, a.max_chars - 400);
        const chunk = textChunk(text, offset, size);
        const next = offset + chunk.length;
        return answer({
          call_id: a.call_id,
          field: a.field,
          encoding: typeof value === 'string' ? 'text' : 'json',
          total_chars: text.length,
          offset,
          text: chunk,
          ...(next < text.length ? { next_cursor: encodeCursor('get_call', a, next) } : {}),
        });
      }
      if (a.cursor) throw new ArgumentError('cursor', 'get_call pages only a `field`');
      const { count: children } = await ctx.api.post<{ count: number }>('/calls/query_stats', {
        project_id: a.project_id,
        filter: { parent_ids: [a.call_id] },
      });
      const head = {
        id: call.id,
        op: opShort(call.op_name),
        op_name: call.op_name,
        display_name: call.display_name,
        status: statusOf(call),
        started_at: call.started_at,
        ended_at: call.ended_at,
        latency_ms: latencyOf(call),
        trace_id: call.trace_id,
        parent_id: call.parent_id,
        thread_id: call.thread_id,
        turn_id: call.turn_id,
        children,
        tokens: tokensOf(call),
        cost_usd: costOf(call),
        url: ctx.links.call(a.project_id, call.id),
        trace_url: ctx.links.trace(a.project_id, call.trace_id, call.id),
      };
      // The rest shares what the budget leaves, the exception first (it explains an error).
      const parts: [string, unknown][] = [
        ['exception', call.exception],
        ['inputs', call.inputs],
        ['output', call.output],
        ['summary', call.summary],
        ['attributes', call.attributes],
      ].filter(([, v]) => v !== null && v !== undefined) as [string, unknown][];
      const build = (room: number) => {
        const rest: Record<string, unknown> = {};
        let left = room;
        let cut = false;
        for (const [i, [k, v]] of parts.entries()) {
          // An even share of what is left: what a small part does not use goes to the next.
          const share = Math.max(200, Math.floor(left / (parts.length - i)));
          const fitted = fitValue(v, share, DETAIL_CLIP);
          if (jsonSize(fitted) < jsonSize(v)) cut = true;
          rest[k] = fitted;
          left -= jsonSize(fitted);
        }
        return { ...head, ...rest, budget: budgetNote(a.max_chars, cut) };
      };
      let room = a.max_chars - jsonSize(head) - 300;
      let out = build(room);
      // Keys and separators are not in the shares: take any excess off and fit again.
      for (let i = 0; i < 4 && jsonSize(out) > a.max_chars; i++) out = build((room -= jsonSize(out) - a.max_chars + 100));
      return answer(out);
    },
  );
}

/**
 * Text from `offset` whose JSON (escapes included) is at most `size` characters, never ending
 * inside a surrogate pair.
 */
export function textChunk(text: string, offset: number, size: number): string {
  let chunk = text.slice(offset, offset + size);
  for (let escaped = JSON.stringify(chunk).length; escaped > size && chunk.length > 1; escaped = JSON.stringify(chunk).length)
    chunk = chunk.slice(0, Math.max(1, Math.floor((chunk.length * size) / escaped) - 1));
  const last = chunk.charCodeAt(chunk.length - 1);
  if (chunk.length > 1 && last >= 0xd800 && last <= 0xdbff) chunk = chunk.slice(0, -1);
  return chunk;
}
