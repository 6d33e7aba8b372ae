import { createHash } from 'node:crypto';
import { agentTraceSpans, conversationTraces, spansContaining, type AgentSpanRow } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * Weave 0.54's agents view over the calls of OTLP spans (libs/query repositories/agents.ts):
 * a trace as a chat (the user's messages, the assistant's answers, tool calls, agent starts, in
 * time order), a conversation (thread) as one chat per turn (trace), its spans, and a search of
 * its messages. The reference's agents family is newer than its source weft learned from: the
 * shapes are the vendored 0.54 client's types; what fills them is ours (docs/api.md).
 */

type Status = 'UNSET' | 'OK' | 'ERROR';
type Msg = Record<string, unknown>;

const iso = (ch: string | null) => (ch === null ? null : `${ch.replace(' ', 'T')}Z`);
const ms = (a: string, b: string | null) =>
  b === null ? null : Math.max(0, Math.round(Date.parse(`${b.replace(' ', 'T')}Z`) - Date.parse(`${a.replace(' ', 'T')}Z`)));
const status = (s: string): Status => (s === 'OK' || s === 'ERROR' ? s : 'UNSET');

function parse(s: string | null): Record<string, unknown> {
  if (!s) return {};
  try {
    const v = JSON.parse(s) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return {};
  }
}

/** A message's text: a string, or the text parts of a content list. */
function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        typeof p === 'string' ? p : p && typeof p === 'object' && typeof (p as Msg).text === 'string' ? ((p as Msg).text as string) : '',
      )
      .filter(Boolean)
      .join('\n');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** The one member of an object that holds only `key` (OpenInference's `input.value`), else the object. */
const lone = (v: unknown, key: string): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && key in v ? (v as Msg)[key] : v;
const asText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

const isInvocation = (s: AgentSpanRow) => s.operation === 'invoke_agent' || (s.kind === 'AGENT' && s.agent_attr !== '');
const isTool = (s: AgentSpanRow) => s.operation === 'execute_tool' || s.kind === 'TOOL';
const agentName = (s: AgentSpanRow) => (s.agent_attr !== '' ? s.agent_attr : isInvocation(s) ? s.op_name : '');

function messagesIn(s: AgentSpanRow): { inputs: Msg[]; outputs: Msg[] } {
  const inputs = parse(s.inputs_dump);
  const output = parse(s.output_dump);
  const inMsgs = Array.isArray(inputs.messages) ? (inputs.messages as Msg[]) : [];
  const choices = Array.isArray(output.choices) ? (output.choices as Msg[]) : [];
  const outMsgs = choices.map((c) => (c && typeof c.message === 'object' ? (c.message as Msg) : {}));
  return { inputs: inMsgs, outputs: outMsgs };
}

function common(s: AgentSpanRow): Msg {
  return {
    span_id: s.id,
    started_at: iso(s.started_at),
    agent_name: agentName(s) || null,
    agent_version: s.agent_version || null,
    status_code: status(s.status_code),
    status_message: s.exception,
    error_type: s.exception ? 'error' : null,
  };
}

/** The chat of one trace's spans (oldest first). */
function chatOf(traceId: string, spans: AgentSpanRow[]): Msg {
  const messages: Msg[] = [];
  const seenUser = new Set<string>();
  const toolSpans = spans.some(isTool);
  for (const s of spans) {
    if (isInvocation(s)) {
      const attrs = parse(s.attributes_dump);
      messages.push({
        ...common(s),
        type: 'agent_start',
        agent_start: {
          model: s.model || null,
          status: status(s.status_code),
          system_instructions: typeof attrs.system === 'string' ? attrs.system : null,
          tool_definitions: attrs.tools ? JSON.stringify(attrs.tools) : null,
        },
      });
    }
    if (isTool(s)) {
      const attrs = parse(s.attributes_dump);
      const tool = (attrs.tool ?? {}) as Msg;
      const inputs = parse(s.inputs_dump);
      const output = parse(s.output_dump);
      messages.push({
        ...common(s),
        type: 'tool_call',
        tool_call: {
          tool_name: typeof tool.name === 'string' ? tool.name : s.op_name,
          tool_arguments: asText(lone(inputs, 'input.value')),
          tool_result: s.output_dump === null ? null : asText(lone(lone(output, 'output.value'), 'value')),
          duration_ms: ms(s.started_at, s.ended_at),
          status: status(s.status_code),
          content_refs: [],
        },
      });
      continue;
    }
    const { inputs, outputs } = messagesIn(s);
    if (inputs.length === 0 && outputs.length === 0) continue;
    for (const m of inputs) {
      if (m.role !== 'user') continue;
      const t = text(m.content);
      if (seenUser.has(t)) continue;
      seenUser.add(t);
      messages.push({ ...common(s), type: 'user_message', user_message: { text: t, content_refs: [] } });
    }
    for (const m of outputs) {
      const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Msg[]) : [];
      const t = text(m.content);
      if (t || calls.length === 0)
        messages.push({
          ...common(s),
          type: 'assistant_message',
          assistant_message: {
            text: t,
            model: s.model || null,
            input_tokens: Number(s.input_tokens),
            output_tokens: Number(s.output_tokens),
            duration_ms: ms(s.started_at, s.ended_at),
            status: status(s.status_code),
            reasoning_content: null,
            reasoning_tokens: null,
            input_cost_usd: null,
            output_cost_usd: null,
            total_cost_usd: null,
            content_refs: [],
          },
        });
      // Tool calls the model asked for, when no span of the tool ran (else that span is the message).
      if (!toolSpans)
        for (const c of calls) {
          const fn = (c.function ?? {}) as Msg;
          messages.push({
            ...common(s),
            type: 'tool_call',
            tool_call: {
              tool_name: typeof fn.name === 'string' ? fn.name : null,
              tool_arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? null),
              tool_result: null,
              duration_ms: null,
              status: 'UNSET',
              content_refs: [],
            },
          });
        }
    }
  }
  const root = spans.find((s) => !s.parent_id || !spans.some((p) => p.id === s.parent_id)) ?? spans[0];
  const agent = spans.find(isInvocation);
  const sum = (k: 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_creation_tokens') =>
    spans.reduce((n, s) => n + Number(s[k]), 0);
  const ends = spans
    .map((s) => s.ended_at)
    .filter((e): e is string => e !== null)
    .sort();
  return {
    trace_id: traceId,
    agent_name: agent ? agentName(agent) : null,
    agent_version: agent?.agent_version || null,
    provider: spans.find((s) => s.provider)?.provider ?? null,
    root_span_name: root?.op_name ?? null,
    started_at: root ? iso(root.started_at) : null,
    ended_at: ends.length ? iso(ends[ends.length - 1]!) : null,
    status_code: spans.some((s) => s.status_code === 'ERROR') ? 'ERROR' : root ? status(root.status_code) : 'UNSET',
    total_duration_ms: root ? ms(root.started_at, root.ended_at) : null,
    total_input_tokens: sum('input_tokens'),
    total_output_tokens: sum('output_tokens'),
    total_cache_read_input_tokens: sum('cache_read_tokens'),
    total_cache_creation_input_tokens: sum('cache_creation_tokens'),
    total_reasoning_tokens: 0,
    total_cost_usd: null,
    wb_user_id: null,
    feedback: null,
    messages,
  };
}

/** /agents/traces/chat. */
export async function agentTraceChat(store: Store, projectId: string, traceId: string, signal: AbortSignal): Promise<Msg> {
  return chatOf(traceId, await agentTraceSpans(store, projectId, [traceId], signal));
}

/** /agents/conversations/chat: one chat per turn (trace) of the conversation, oldest first. */
export async function agentConversationChat(
  store: Store,
  b: { project_id: string; conversation_id: string; limit: number; offset: number },
  signal: AbortSignal,
) {
  const traces = await conversationTraces(store, b.project_id, [b.conversation_id], {}, signal);
  const page = traces.slice(b.offset, b.offset + b.limit);
  const spans = await agentTraceSpans(
    store,
    b.project_id,
    page.map((t) => t.trace_id),
    signal,
  );
  return {
    conversation_id: b.conversation_id,
    turns: page.map((t) =>
      chatOf(
        t.trace_id,
        spans.filter((s) => s.trace_id === t.trace_id),
      ),
    ),
    total_turns: traces.length,
    has_more: b.offset + page.length < traces.length,
    limit: b.limit,
    offset: b.offset,
    total_cost_usd: null,
    feedback: null,
  };
}

/** /agents/conversations/spans: each conversation's spans (its turns' traces), scalars only. */
export async function agentConversationSpans(
  store: Store,
  b: { project_id: string; conversation_ids: string[]; started_after?: string | null; started_before?: string | null },
  signal: AbortSignal,
) {
  const traces = await conversationTraces(
    store,
    b.project_id,
    b.conversation_ids,
    { after: b.started_after, before: b.started_before },
    signal,
  );
  if (traces.length === 0) return { conversations: [] };
  const spans = await agentTraceSpans(store, b.project_id, [...new Set(traces.map((t) => t.trace_id))], signal);
  const ids = [...new Set(traces.map((t) => t.thread_id))];
  return {
    conversations: ids.map((id) => {
      const mine = new Set(traces.filter((t) => t.thread_id === id).map((t) => t.trace_id));
      return {
        conversation_id: id,
        spans: spans
          .filter((s) => mine.has(s.trace_id))
          .map((s) => ({
            span_id: s.id,
            trace_id: s.trace_id,
            operation_name: s.operation || s.kind.toLowerCase() || s.op_name,
            duration_ms: ms(s.started_at, s.ended_at) ?? 0,
            status: status(s.status_code),
          })),
        spans_feedback: [],
      };
    }),
  };
}

/** /agents/search: conversations with a message containing the text, newest activity first. */
export async function agentSearch(
  store: Store,
  b: {
    project_id: string;
    query: string;
    agent_name?: string | null;
    conversation_id?: string | null;
    trace_id?: string | null;
    roles?: string[] | null;
    started_after?: string | null;
    started_before?: string | null;
    truncate_content: boolean;
    limit: number;
    offset: number;
  },
  signal: AbortSignal,
) {
  const rows = await spansContaining(
    store,
    {
      projectId: b.project_id,
      text: b.query,
      conversationId: b.conversation_id,
      traceId: b.trace_id,
      after: b.started_after,
      before: b.started_before,
      limit: 5000,
    },
    signal,
  );
  const needle = b.query.toLowerCase();
  interface Matched {
    span_id: string;
    trace_id: string;
    role: string;
    content_preview: string;
    content_digest: string;
    started_at: string;
  }
  const byConversation = new Map<string, { agent: string; last: string; matched: Matched[] }>();
  for (const s of rows) {
    if (b.agent_name && agentName(s) !== b.agent_name) continue;
    const { inputs, outputs } = messagesIn(s);
    const all: Msg[] = [...inputs, ...outputs.map((m): Msg => ({ role: 'assistant', ...m }))];
    const conv = byConversation.get(s.thread_id!) ?? { agent: agentName(s), last: s.started_at, matched: [] };
    for (const m of all) {
      const role = typeof m.role === 'string' ? m.role : '';
      if (b.roles?.length && !b.roles.includes(role)) continue;
      const t = text(m.content);
      if (needle && !t.toLowerCase().includes(needle)) continue;
      if (conv.matched.some((x) => x.content_digest === digestOf(t))) continue;
      conv.matched.push({
        span_id: s.id,
        trace_id: s.trace_id,
        role,
        content_preview: b.truncate_content ? t.slice(0, 200) : t,
        content_digest: digestOf(t),
        started_at: iso(s.started_at)!,
      });
    }
    if (!conv.agent) conv.agent = agentName(s);
    if (s.started_at > conv.last) conv.last = s.started_at;
    if (conv.matched.length) byConversation.set(s.thread_id!, conv);
  }
  // The agent of a conversation whose matching spans do not name it (an LLM span under the agent's): its traces' invocations.
  const unnamed = [...byConversation.values()].some((c) => !c.agent);
  if (unnamed) {
    const traces = [...new Set(rows.filter((s) => byConversation.get(s.thread_id!)?.agent === '').map((s) => s.trace_id))].slice(0, 200);
    for (const s of await agentTraceSpans(store, b.project_id, traces, signal)) {
      const c = s.thread_id ? byConversation.get(s.thread_id) : undefined;
      const conv = c ?? [...byConversation.values()].find((x) => x.matched.some((m) => m.trace_id === s.trace_id));
      if (conv && !conv.agent && isInvocation(s)) conv.agent = agentName(s);
    }
  }
  const results = [...byConversation]
    .sort((x, y) => y[1].last.localeCompare(x[1].last))
    .map(([id, c]) => ({
      conversation_id: id,
      conversation_name: id,
      agent_name: c.agent,
      last_activity: iso(c.last)!,
      matched_messages: c.matched,
    }));
  return { results: results.slice(b.offset, b.offset + b.limit), total_conversations: results.length };
}

const digestOf = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 32);

/** A span as /agents/spans/query lists it. */
export function agentSpan(s: AgentSpanRow): Msg {
  const { inputs, outputs } = messagesIn(s);
  const custom = {
    custom_attrs_string: {} as Msg,
    custom_attrs_int: {} as Msg,
    custom_attrs_float: {} as Msg,
    custom_attrs_bool: {} as Msg,
  };
  const wandb = parse(s.attributes_dump)['wandb.attributes'] ?? parse(s.attributes_dump).custom;
  if (wandb && typeof wandb === 'object')
    for (const [k, v] of Object.entries(wandb as Msg)) {
      if (typeof v === 'string') custom.custom_attrs_string[k] = v;
      else if (typeof v === 'boolean') custom.custom_attrs_bool[k] = v;
      else if (typeof v === 'number') (Number.isInteger(v) ? custom.custom_attrs_int : custom.custom_attrs_float)[k] = v;
    }
  return {
    span_id: s.id,
    trace_id: s.trace_id,
    parent_call_id: s.parent_id,
    span_name: s.op_name,
    operation_name: s.operation || null,
    agent_name: agentName(s) || null,
    agent_version: s.agent_version || null,
    conversation_id: s.thread_id,
    conversation_name: s.thread_id,
    provider_name: s.provider || null,
    request_model: s.model || null,
    started_at: iso(s.started_at),
    ended_at: iso(s.ended_at),
    duration_ms: ms(s.started_at, s.ended_at),
    status_code: status(s.status_code),
    error_type: s.exception ? 'error' : null,
    input_tokens: Number(s.input_tokens),
    output_tokens: Number(s.output_tokens),
    cache_read_input_tokens: Number(s.cache_read_tokens),
    cache_creation_input_tokens: Number(s.cache_creation_tokens),
    input_messages: inputs.map((m) => ({ role: typeof m.role === 'string' ? m.role : '', content: text(m.content), finish_reason: '' })),
    output_messages: outputs.map((m) => ({
      role: typeof m.role === 'string' ? m.role : 'assistant',
      content: text(m.content),
      finish_reason: '',
    })),
    finish_reasons: [],
    artifact_refs: [],
    content_refs: [],
    object_refs: [],
    ...custom,
  };
}
