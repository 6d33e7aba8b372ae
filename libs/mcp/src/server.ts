import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION } from '@weft/core';
import { UiLinks } from './links';
import { registerOverview } from './overview';
import { registerCallTools } from './tools/calls';
import { registerDatasetTools } from './tools/datasets';
import { registerEvaluationTools } from './tools/evaluations';
import { registerFeedbackTools } from './tools/feedback';
import { registerMetricTools } from './tools/metrics';
import { registerProjectTools } from './tools/projects';
import { registerThreadTools } from './tools/threads';
import { registerTraceTools } from './tools/trace';
import { WeftApi, type Send } from './weft-api';

/** The tools' names, fixed (issue 52): clients and the docs name them. */
export const TOOL_NAMES = [
  'list_projects',
  'search_calls',
  'get_call',
  'get_trace',
  'get_thread',
  'query_metrics',
  'list_evaluations',
  'compare_evaluations',
  'list_datasets',
  'get_dataset_rows',
  'add_feedback',
  'add_calls_to_dataset',
] as const;

const INSTRUCTIONS =
  "weft stores traces of LLM and agent programs (Weave-compatible). Start with list_projects; every tool takes project_id as 'entity/project'. " +
  'search_calls finds calls, get_trace shows a call tree with timings, errors, tokens and cost, get_call reads one call (and one field whole). ' +
  'Answers are JSON within a character budget (max_chars); lists continue with next_cursor. Every id comes with a link into the weft UI.';

/**
 * weft's MCP server: the tools, the project overview (resource and prompt), answering through
 * `send` (weft's HTTP API as the caller) with links into the UI at `uiBase`. One per session:
 * the Streamable HTTP endpoint makes one per request (stateless), `weft mcp` one per process.
 */
export function createMcpServer(o: { send: Send; uiBase: string }): McpServer {
  const server = new McpServer({ name: 'weft', version: VERSION }, { instructions: INSTRUCTIONS });
  const ctx = { api: new WeftApi(o.send), links: new UiLinks(o.uiBase) };
  registerProjectTools(server, ctx);
  registerCallTools(server, ctx);
  registerTraceTools(server, ctx);
  registerThreadTools(server, ctx);
  registerMetricTools(server, ctx);
  registerEvaluationTools(server, ctx);
  registerDatasetTools(server, ctx);
  registerFeedbackTools(server, ctx);
  registerOverview(server, ctx);
  return server;
}
