import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { analyticsQueryReq, METRIC_BUCKETS } from '@weft/api';
import { budgetNote, fitPage } from '../budget';
import { decodeCursor, encodeCursor } from '../cursor';
import { answer, cursorArg, maxCharsArg, opNamesFor, projectIdArg, type ToolContext } from './shared';

// The catalogue's words are the HTTP API's own (libs/api), so the tool and /analytics/query never disagree.
const shape = analyticsQueryReq.shape;

export function registerMetricTools(server: McpServer, ctx: ToolContext): void {
  const args = {
    project_id: projectIdArg,
    metrics: z.array(z.string().min(1)).min(1).max(30).describe(`metrics: ${shape.metrics.description}`),
    dimensions: z.array(z.string().min(1)).max(6).default([]).describe(`group by: ${shape.dimensions.description}`),
    from: z
      .string()
      .optional()
      .describe(shape.from.description ?? 'calls started at or after (ISO 8601)'),
    to: z
      .string()
      .optional()
      .describe(shape.to.description ?? 'calls started before (ISO 8601)'),
    bucket: z
      .enum(METRIC_BUCKETS)
      .optional()
      .describe(shape.bucket.description ?? 'width of the time dimension'),
    op_name: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(50)])
      .optional()
      .describe('only calls of this op (name or ref)'),
    query: z.record(z.string(), z.unknown()).optional().describe("more conditions in the HTTP API's query language (the `$expr` body)"),
    top: z
      .object({ dimension: z.string().min(1), n: z.number().int().min(1).max(1000) })
      .optional()
      .describe(shape.top.description ?? 'keep the n values with the most calls'),
    order_by: z
      .array(z.object({ field: z.string().min(1), direction: z.enum(['asc', 'desc']).default('desc') }))
      .max(8)
      .optional()
      .describe(shape.order_by.description ?? 'order of the rows'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(200)
      .describe('most rows computed (default 200); `truncated` says when more matched'),
    cursor: cursorArg,
    max_chars: maxCharsArg,
  };
  server.registerTool(
    'query_metrics',
    {
      title: 'Query metrics',
      description:
        "Metrics over a project's calls, grouped by dimensions and time (weft's analytics, POST /analytics/query): counts, errors, error rate, " +
        'latency quantiles, tokens, cost, or aggregates of any JSON path. E.g. metrics ["count","error_rate","latency_p95_ms"] by ["op_name"], ' +
        'or ["cost"] by ["time","model"] with bucket "day". Totals over every matched call come with the rows.',
      inputSchema: args,
      annotations: { readOnlyHint: true },
    },
    async (a) => {
      const offset = decodeCursor('query_metrics', a, a.cursor);
      const body = {
        project_id: a.project_id,
        metrics: a.metrics,
        dimensions: a.dimensions,
        ...(a.from ? { from: a.from } : {}),
        ...(a.to ? { to: a.to } : {}),
        ...(a.bucket ? { bucket: a.bucket } : {}),
        ...(a.op_name ? { filter: { op_names: [a.op_name].flat().flatMap((op) => opNamesFor(a.project_id, op)) } } : {}),
        ...(a.query ? { query: { $expr: a.query } } : {}),
        ...(a.top ? { top: a.top } : {}),
        ...(a.order_by ? { order_by: a.order_by } : {}),
        limit: a.limit,
        totals: true,
      };
      const r = await ctx.api.post<{
        rows: Record<string, unknown>[];
        truncated: boolean;
        bucket_seconds?: number;
        totals?: Record<string, number | null>;
      }>('/analytics/query', body);
      const head = {
        project_id: a.project_id,
        rows_total: r.rows.length,
        truncated: r.truncated,
        ...(r.bucket_seconds ? { bucket_seconds: r.bucket_seconds } : {}),
        totals: r.totals,
        offset,
        url: ctx.links.analytics(a.project_id),
      };
      const rest = r.rows.slice(offset);
      return answer(
        fitPage(head, rest, a.max_chars, (n) => {
          const next = offset + n;
          return {
            ...head,
            rows: rest.slice(0, n),
            ...(next < r.rows.length ? { next_cursor: encodeCursor('query_metrics', a, next) } : {}),
            budget: budgetNote(a.max_chars, false),
          };
        }),
      );
    },
  );
}
