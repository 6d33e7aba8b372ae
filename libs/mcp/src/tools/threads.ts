import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { budgetNote, clipped, fitPage } from '../budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../cursor';
import { answer, callLine, cursorArg, limitArg, maxCharsArg, projectIdArg, type ApiCall, type ToolContext } from './shared';

interface ApiThread {
  thread_id: string;
  turn_count: number;
  start_time: string;
  last_updated: string;
  p50_turn_duration_ms: number | null;
  p99_turn_duration_ms: number | null;
}

/** A turn is a thread's call that is its own turn (turn_id = id), as the HTTP API's thread statistics count them. */
const TURNS = { $expr: { $eq: [{ $getField: 'turn_id' }, { $getField: 'id' }] } };

export function registerThreadTools(server: McpServer, ctx: ToolContext): void {
  const args = {
    project_id: projectIdArg,
    thread_id: z.string().min(1).describe("the thread's id (a call's thread_id)"),
    limit: limitArg(20, 100, 'turns'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'get_thread',
    {
      title: 'Get a thread',
      description:
        "A thread (a conversation or agent session) as its turns in order: each turn's input, output, status, latency, tokens, cost and trace, " +
        "with the thread's turn count and p50/p99 turn duration. Open a turn's work with get_trace on its trace_id.",
      inputSchema: args,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('get_thread', a, a.cursor);
      const filter = { thread_ids: [a.thread_id] };
      const [threads, turns] = await Promise.all([
        ctx.api.lines<ApiThread>('/threads/stream_query', { project_id: a.project_id, filter }),
        ctx.api.lines<ApiCall>('/calls/stream_query', {
          project_id: a.project_id,
          filter,
          query: TURNS,
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit: a.limit,
          offset,
          include_costs: true,
        }),
      ]);
      const thread = threads[0];
      if (!thread) throw new ArgumentError('thread_id', `no thread ${a.thread_id} in project ${a.project_id}`);
      const head = {
        thread: { ...thread, url: ctx.links.thread(a.project_id, a.thread_id) },
        offset,
      };
      const lines = turns.map((c) => callLine(c, ctx.links, { maxString: 500, maxItems: 10, maxDepth: 4 }));
      return answer(
        fitPage(head, lines, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            turns: lines.slice(0, n),
            ...(next < thread.turn_count ? { next_cursor: encodeCursor('get_thread', a, next) } : {}),
            budget: budgetNote(a.max_chars, clipped(lines.slice(0, n))),
          };
        }),
      );
    },
  );
}
