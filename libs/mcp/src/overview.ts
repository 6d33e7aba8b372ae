import { z } from 'zod';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { fitValue, DEFAULT_BUDGET } from './budget';
import { evaluateOps } from './tools/evaluations';
import { opShort, projectIdArg, type ApiCall, type ToolContext } from './tools/shared';

type Row = Record<string, unknown>;
const DAY_MS = 86_400_000;
const METRICS = ['count', 'errors', 'error_rate', 'latency_p50_ms', 'latency_p95_ms', 'total_tokens', 'cost'];

/** A regression worth naming: the rate or the median latency of the last day against the six before. */
const ERROR_RATE_STEP = 0.05;
const LATENCY_FACTOR = 1.5;
const MIN_CALLS = 5;

const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/**
 * A project at a glance, for the resource and the prompt: its ops over the last 7 days (volume,
 * errors, latency, tokens, cost, from /analytics/query), the ops whose error rate or median
 * latency got worse in the last day than in the six before, and its latest evaluation runs.
 */
export async function projectOverview(ctx: ToolContext, projectId: string, now = Date.now()): Promise<Row> {
  const iso = (t: number) => new Date(t).toISOString();
  const query = (from: number, to: number) =>
    ctx.api.post<{ rows: Row[]; totals?: Row }>('/analytics/query', {
      project_id: projectId,
      metrics: METRICS,
      dimensions: ['op_name'],
      from: iso(from),
      to: iso(to),
      order_by: [{ field: 'count', direction: 'desc' }],
      limit: 50,
      totals: true,
    });
  const evals = await ctx.api.lines<ApiCall>('/calls/stream_query', {
    project_id: projectId,
    filter: { op_names: evaluateOps(projectId) },
    sort_by: [{ field: 'started_at', direction: 'desc' }],
    limit: 5,
  });
  // One after the other: analytics runs in the heavy lane, a few at once per project and key
  // (WEFT_HEAVY_PER_PROJECT); one answer should not take them all.
  const week = await query(now - 7 * DAY_MS, now);
  const lastDay = await query(now - DAY_MS, now);
  const before = await query(now - 7 * DAY_MS, now - DAY_MS);
  const earlier = new Map(before.rows.map((r) => [String(r.op_name), r]));
  const regressions: Row[] = [];
  for (const now1 of lastDay.rows) {
    const was = earlier.get(String(now1.op_name));
    if (!was || num(now1.count) < MIN_CALLS || num(was.count) < MIN_CALLS) continue;
    const op = opShort(String(now1.op_name));
    if (num(now1.error_rate) - num(was.error_rate) >= ERROR_RATE_STEP)
      regressions.push({ op, what: 'error_rate', last_day: now1.error_rate, six_days_before: was.error_rate });
    if (num(was.latency_p50_ms) > 0 && num(now1.latency_p50_ms) >= LATENCY_FACTOR * num(was.latency_p50_ms))
      regressions.push({ op, what: 'latency_p50_ms', last_day: now1.latency_p50_ms, six_days_before: was.latency_p50_ms });
  }
  return {
    project_id: projectId,
    window: { from: iso(now - 7 * DAY_MS), to: iso(now) },
    totals_7d: week.totals ?? null,
    ops_7d: week.rows.map((r) => ({ ...r, op_name: opShort(String(r.op_name)) })),
    regressions_last_day: regressions,
    latest_evaluations: evals.map((c) => ({
      call_id: c.id,
      started_at: c.started_at,
      summary: fitValue(c.output, 600),
      url: ctx.links.call(projectId, c.id),
    })),
    url: ctx.links.project(projectId),
    analytics_url: ctx.links.analytics(projectId),
  };
}

export function registerOverview(server: McpServer, ctx: ToolContext): void {
  server.registerResource(
    'project_overview',
    new ResourceTemplate('weft://projects/{entity}/{project}/overview', {
      list: async () => {
        const { projects } = await ctx.api.post<{ projects: { project_id: string }[] }>('/projects/list', { limit: 100 });
        return {
          resources: projects.map((p) => ({
            uri: `weft://projects/${p.project_id}/overview`,
            name: `${p.project_id} overview`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Project overview',
      description:
        "A project's ops over the last 7 days (calls, errors, latency, tokens, cost), its regressions of the last day and latest evaluations",
      mimeType: 'application/json',
    },
    async (uri, vars) => {
      const projectId = `${String(vars.entity)}/${String(vars.project)}`;
      const overview = fitValue(await projectOverview(ctx, projectId), DEFAULT_BUDGET);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(overview) }] };
    },
  );

  server.registerPrompt(
    'project_overview',
    {
      title: 'Review a project',
      description: "Start a review of a project's health with its overview: what fails, what slowed, how evaluations went",
      argsSchema: { project_id: z.string().describe(projectIdArg.description ?? 'entity/project') },
    },
    async ({ project_id }) => {
      const overview = fitValue(await projectOverview(ctx, project_id), DEFAULT_BUDGET);
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text:
                `Here is the overview of the weft project ${project_id} (last 7 days):\n\n${JSON.stringify(overview)}\n\n` +
                'Summarise its health: the ops that fail most or got slower, and how the latest evaluations went. ' +
                'Look closer with the weft tools (search_calls with status "error", get_trace, compare_evaluations), and link the calls you cite.',
            },
          },
        ],
      };
    },
  );
}
