import { post, postJsonl } from './api';
import type { Thread } from './types';

/** Weave 0.54's agents family (docs/api.md, "Weave 0.54's routes"), as the Agents view reads it. */
export interface Agent {
  agent_name: string;
  invocation_count: number;
  error_count: number;
  span_count: number;
  total_duration_ms: number;
  total_input_tokens: number;
  total_output_tokens: number;
  first_seen: string | null;
  last_seen: string | null;
}

export interface ChatMessage {
  type: 'user_message' | 'assistant_message' | 'tool_call' | 'agent_handoff' | 'agent_start' | 'context_compacted';
  span_id: string | null;
  started_at: string | null;
  agent_name: string | null;
  status_code: string | null;
  user_message?: { text: string } | null;
  assistant_message?: {
    text: string;
    model: string | null;
    input_tokens: number | null;
    output_tokens: number | null;
    duration_ms: number | null;
  } | null;
  tool_call?: { tool_name: string | null; tool_arguments: string | null; tool_result: string | null; duration_ms: number | null } | null;
  agent_start?: { model: string | null; system_instructions: string | null } | null;
}

export interface TraceChat {
  trace_id: string;
  agent_name: string | null;
  agent_version: string | null;
  root_span_name: string | null;
  started_at: string | null;
  status_code: string | null;
  total_duration_ms: number | null;
  total_input_tokens: number;
  total_output_tokens: number;
  messages: ChatMessage[];
}

export interface ConversationChat {
  conversation_id: string;
  turns: TraceChat[];
  total_turns: number;
  has_more: boolean;
}

export interface ConversationSpan {
  span_id: string;
  trace_id: string;
  operation_name: string;
  duration_ms: number;
  status: string;
}

export const listAgents = (projectId: string, signal?: AbortSignal) =>
  post<{ agents: Agent[]; total_count: number }>('/agents/query', { project_id: projectId, limit: 200 }, signal);

/** The project's conversations (its threads), most recently active first. */
export const listConversations = (projectId: string, signal?: AbortSignal) =>
  postJsonl<Thread>(
    '/threads/stream_query',
    { project_id: projectId, sort_by: [{ field: 'last_updated', direction: 'desc' }], limit: 200 },
    signal,
  );

export const conversationChat = (projectId: string, conversationId: string, signal?: AbortSignal) =>
  post<ConversationChat>('/agents/conversations/chat', { project_id: projectId, conversation_id: conversationId, limit: 200 }, signal);

export const conversationSpans = (projectId: string, conversationId: string, signal?: AbortSignal) =>
  post<{ conversations: { conversation_id: string; spans: ConversationSpan[] }[] }>(
    '/agents/conversations/spans',
    { project_id: projectId, conversation_ids: [conversationId] },
    signal,
  );
