import type { Store } from '@weft/store';
import { Params } from '../params';

/**
 * Weave 0.54's agents view, read from the calls weft stores for OTLP spans (GenAI semantic
 * conventions and OpenInference; libs/otlp maps `gen_ai.agent.name`/`agent.name` to
 * `attributes.agent`, `gen_ai.operation.name` to `attributes.operation`, the span kind to
 * `attributes.kind`, a conversation/session id to `thread_id`). An agent invocation is a span whose
 * operation is `invoke_agent` (named by its agent, else its span name), or an `AGENT` span naming
 * its agent (OpenInference's OpenAI Agents SDK marks its workflow root `AGENT` too, unnamed);
 * an agent's totals are over the traces it was invoked in (spans, tokens).
 */

/** One span (call) as the agents view reads it. */
export interface AgentSpanRow {
  id: string;
  trace_id: string;
  parent_id: string | null;
  thread_id: string | null;
  op_name: string;
  started_at: string;
  ended_at: string | null;
  exception: string | null;
  agent_attr: string;
  operation: string;
  kind: string;
  agent_version: string;
  status_code: string;
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  attributes_dump: string | null;
  inputs_dump: string | null;
  output_dump: string | null;
}

const SPAN_COLUMNS = `s.id AS id, ifNull(s.trace_id, '') AS trace_id, s.parent_id AS parent_id, s.thread_id AS thread_id, ifNull(s.op_name, '') AS op_name,
    s.started_at AS started_at, e.ended_at AS ended_at, e.exception AS exception,
    JSONExtractString(ifNull(s.attributes_dump, '{}'), 'agent') AS agent_attr,
    JSONExtractString(ifNull(s.attributes_dump, '{}'), 'operation') AS operation,
    upper(JSONExtractString(ifNull(s.attributes_dump, '{}'), 'kind')) AS kind,
    JSONExtractString(ifNull(s.attributes_dump, '{}'), 'provider') AS provider,
    JSONExtractString(ifNull(s.attributes_dump, '{}'), 'model') AS model,
    JSONExtractString(ifNull(s.otel_dump, '{}'), 'attributes', 'gen_ai', 'agent', 'version') AS agent_version,
    multiIf(JSONExtractString(ifNull(s.otel_dump, '{}'), 'status', 'code') != '', JSONExtractString(ifNull(s.otel_dump, '{}'), 'status', 'code'),
      ifNull(e.exception, '') != '', 'ERROR', 'UNSET') AS status_code,
    arraySum(arrayMap(u -> u.3, ifNull(e.usage, []))) AS input_tokens,
    arraySum(arrayMap(u -> u.4, ifNull(e.usage, []))) AS output_tokens,
    arraySum(arrayMap(u -> u.6, ifNull(e.usage, []))) AS cache_read_tokens,
    arraySum(arrayMap(u -> u.7, ifNull(e.usage, []))) AS cache_creation_tokens`;

/** The project's live spans (calls) matching `where` on calls_starts (alias-free columns), with their ends. */
function spansSql(pid: string, where: string[], withBodies: boolean): string {
  const bodies = withBodies ? ', s.attributes_dump AS attributes_dump, s.inputs_dump AS inputs_dump, e.output_dump AS output_dump' : '';
  return `SELECT ${SPAN_COLUMNS}${bodies}
    FROM (SELECT * FROM calls_starts FINAL WHERE project_id = ${pid}${where.length ? ` AND ${where.join(' AND ')}` : ''}) AS s
    LEFT JOIN (SELECT id, ended_at, exception, usage, output_dump FROM calls_ends FINAL WHERE project_id = ${pid}) AS e ON e.id = s.id
    WHERE s.id NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${pid})
    SETTINGS join_use_nulls = 1`;
}

const IS_INVOCATION = `(operation = 'invoke_agent' OR (kind = 'AGENT' AND agent_attr != ''))`;
const AGENT_NAME = `if(agent_attr != '', agent_attr, op_name)`;

export interface AgentTotalsRow {
  agent_name: string;
  agent_version: string;
  invocation_count: number;
  error_count: number;
  total_duration_ms: number;
  first_seen: string | null;
  last_seen: string | null;
  span_count: number;
  total_input_tokens: number;
  total_output_tokens: number;
}

/** Agents (or one agent's versions, with `agentName`) and their totals, with the count of all groups. */
export async function agentTotals(
  store: Store,
  q: { projectId: string; agentName?: string | null; byVersion: boolean; order: string; limit: number; offset: number },
  signal?: AbortSignal,
): Promise<{ rows: AgentTotalsRow[]; total: number }> {
  const p = new Params();
  const pid = p.str(q.projectId);
  const spans = spansSql(pid, [], false);
  const nameCond = q.agentName ? ` AND agent_name = ${p.str(q.agentName)}` : '';
  const key = q.byVersion ? 'agent_name, agent_version' : 'agent_name';
  const inv = `SELECT *, ${AGENT_NAME} AS agent_name FROM (${spans}) WHERE ${IS_INVOCATION}${nameCond}`;
  const sql = `SELECT a.agent_name AS agent_name, ${q.byVersion ? 'a.agent_version' : "''"} AS agent_version, a.invocation_count AS invocation_count,
      a.error_count AS error_count, a.total_duration_ms AS total_duration_ms, a.first_seen AS first_seen, a.last_seen AS last_seen,
      ifNull(t.span_count, 0) AS span_count, ifNull(t.input_tokens, 0) AS total_input_tokens, ifNull(t.output_tokens, 0) AS total_output_tokens,
      count() OVER () AS total
    FROM (SELECT ${key}, count() AS invocation_count, countIf(status_code = 'ERROR') AS error_count,
        toInt64(sum(if(ended_at IS NULL, 0, dateDiff('millisecond', started_at, assumeNotNull(ended_at))))) AS total_duration_ms,
        min(started_at) AS first_seen, max(ifNull(ended_at, started_at)) AS last_seen
      FROM (${inv}) GROUP BY ${key}) AS a
    LEFT JOIN (SELECT ${q.byVersion ? 'i.agent_name AS agent_name, i.agent_version AS agent_version' : 'i.agent_name AS agent_name'}, count() AS span_count,
        sum(b.input_tokens) AS input_tokens, sum(b.output_tokens) AS output_tokens
      FROM (SELECT DISTINCT ${key}, trace_id FROM (${inv})) AS i
      INNER JOIN (SELECT trace_id, input_tokens, output_tokens FROM (${spans})) AS b ON b.trace_id = i.trace_id
      GROUP BY ${key}) AS t ON ${q.byVersion ? 't.agent_name = a.agent_name AND t.agent_version = a.agent_version' : 't.agent_name = a.agent_name'}
    ORDER BY ${q.order}
    LIMIT ${p.int(q.limit)} OFFSET ${p.int(q.offset)}`;
  const rows = await store.rows<AgentTotalsRow & { total: number }>(sql, p.values, { name: 'agents.totals', signal });
  return { rows, total: rows.length ? Number(rows[0]!.total) : 0 };
}

/** The spans of some traces (oldest first), with their bodies. */
export async function agentTraceSpans(store: Store, projectId: string, traceIds: string[], signal?: AbortSignal): Promise<AgentSpanRow[]> {
  if (traceIds.length === 0) return [];
  const p = new Params();
  const sql = `SELECT * FROM (${spansSql(p.str(projectId), [`trace_id IN ${p.strArray(traceIds)}`], true)}) ORDER BY started_at, id`;
  return store.rows<AgentSpanRow>(sql, p.values, { name: 'agents.traceSpans', signal });
}

/** The traces of conversations (thread ids), each with its first start, oldest first. */
export async function conversationTraces(
  store: Store,
  projectId: string,
  conversationIds: string[],
  window: { after?: string | null; before?: string | null },
  signal?: AbortSignal,
): Promise<{ thread_id: string; trace_id: string; started_at: string }[]> {
  const p = new Params();
  const conds = [`thread_id != ''`, `trace_id IS NOT NULL`];
  if (conversationIds?.length) conds.push(`thread_id IN ${p.strArray(conversationIds)}`);
  if (window.after) conds.push(`started_at >= parseDateTime64BestEffort(${p.str(window.after)}, 6)`);
  if (window.before) conds.push(`started_at < parseDateTime64BestEffort(${p.str(window.before)}, 6)`);
  const pid = p.str(projectId);
  return store.rows(
    // The first start is named `first` inside: as `started_at` it would shadow the column in WHERE.
    `SELECT thread_id, trace_id, first AS started_at FROM (
      SELECT assumeNotNull(thread_id) AS thread_id, assumeNotNull(trace_id) AS trace_id, min(started_at) AS first
      FROM calls_starts FINAL WHERE project_id = ${pid} AND ${conds.join(' AND ')}
        AND id NOT IN (SELECT id FROM calls_deleted WHERE project_id = ${pid})
      GROUP BY thread_id, trace_id ORDER BY thread_id, first LIMIT 10000)`,
    p.values,
    { name: 'agents.conversationTraces', signal },
  );
}

/** Spans whose inputs or output contain a text (case-insensitive), newest first, with their bodies. */
export async function spansContaining(
  store: Store,
  q: {
    projectId: string;
    text: string;
    conversationId?: string | null;
    traceId?: string | null;
    after?: string | null;
    before?: string | null;
    limit: number;
  },
  signal?: AbortSignal,
): Promise<AgentSpanRow[]> {
  const p = new Params();
  const conds = [`thread_id != ''`];
  if (q.text) {
    const t = p.str(q.text);
    conds.push(
      `(positionCaseInsensitiveUTF8(ifNull(inputs_dump, ''), ${t}) > 0 OR id IN (SELECT id FROM calls_ends WHERE project_id = ${p.str(q.projectId)} AND positionCaseInsensitiveUTF8(ifNull(output_dump, ''), ${t}) > 0))`,
    );
  }
  if (q.conversationId) conds.push(`thread_id = ${p.str(q.conversationId)}`);
  if (q.traceId) conds.push(`trace_id = ${p.str(q.traceId)}`);
  if (q.after) conds.push(`started_at >= parseDateTime64BestEffort(${p.str(q.after)}, 6)`);
  if (q.before) conds.push(`started_at < parseDateTime64BestEffort(${p.str(q.before)}, 6)`);
  const sql = `SELECT * FROM (${spansSql(p.str(q.projectId), conds, true)}) ORDER BY started_at DESC LIMIT ${p.int(q.limit)}`;
  return store.rows<AgentSpanRow>(sql, p.values, { name: 'agents.spansContaining', signal });
}

/** OTLP spans started in a window (newest first), with their bodies. */
export async function otelSpansIn(
  store: Store,
  q: { projectId: string; after?: string | null; before?: string | null; limit: number; offset: number },
  signal?: AbortSignal,
): Promise<{ rows: AgentSpanRow[]; total: number }> {
  const p = new Params();
  const conds = ['otel_dump IS NOT NULL'];
  if (q.after) conds.push(`started_at >= parseDateTime64BestEffort(${p.str(q.after)}, 6)`);
  if (q.before) conds.push(`started_at < parseDateTime64BestEffort(${p.str(q.before)}, 6)`);
  const sql = `SELECT *, count() OVER () AS total FROM (${spansSql(p.str(q.projectId), conds, true)})
    ORDER BY started_at DESC, id LIMIT ${p.int(q.limit)} OFFSET ${p.int(q.offset)}`;
  const rows = await store.rows<AgentSpanRow & { total: number }>(sql, p.values, { name: 'agents.otelSpans', signal });
  return { rows, total: rows.length ? Number(rows[0]!.total) : 0 };
}

/** OTLP spans per time bucket: spans, invocations, errors, tokens. */
export async function otelSpanBuckets(
  store: Store,
  q: { projectId: string; start: string; end: string; granularity: number },
  signal?: AbortSignal,
): Promise<
  { timestamp: string; span_count: number; invocation_count: number; error_count: number; input_tokens: number; output_tokens: number }[]
> {
  const p = new Params();
  const conds = [
    'otel_dump IS NOT NULL',
    `started_at >= parseDateTime64BestEffort(${p.str(q.start)}, 6)`,
    `started_at < parseDateTime64BestEffort(${p.str(q.end)}, 6)`,
  ];
  const g = p.int(q.granularity);
  return store.rows(
    `SELECT toStartOfInterval(started_at, toIntervalSecond(${g})) AS timestamp, count() AS span_count, countIf(${IS_INVOCATION}) AS invocation_count,
        countIf(status_code = 'ERROR') AS error_count, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
      FROM (${spansSql(p.str(q.projectId), conds, false)}) GROUP BY timestamp ORDER BY timestamp`,
    p.values,
    { name: 'agents.spanBuckets', signal },
  );
}
