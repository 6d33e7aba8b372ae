import { postJsonl, send } from './api';
import { asMessages, findConversation, type ChatMessage } from './components/messages';
import type { Call } from './types';

/**
 * The playground's reading of an LLM call and its replay through weft's inference front. The
 * stored shapes it reads: OpenAI-style inputs (the Weave SDK's OpenAI integration, weft's own
 * `/v1/chat/completions` calls: `messages`, `model`, `temperature`…) and OTLP calls, whose
 * conversation the server also stores as OpenAI `inputs.messages` whatever convention carried it
 * (GenAI semconv, OpenInference), with the model and request parameters in
 * `attributes.model` / `attributes.model_parameters`.
 */

/** An OpenAI chat message, as sent to `/v1/chat/completions`. */
export interface OpenAiMessage {
  role: string;
  content: string | unknown[] | null;
  name?: string;
  tool_calls?: unknown[];
  tool_call_id?: string;
}

export interface Params {
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
}
export const PARAM_NAMES = ['temperature', 'max_tokens', 'top_p'] as const;

export interface PlaygroundRequest {
  model: string | null;
  messages: OpenAiMessage[];
  params: Params;
  /** Tool definitions the call offered the model (sent again as they were). */
  tools: unknown[] | null;
}

/** The header naming the replayed call; the recorded completion keeps it as `attributes.weft.source_call_id`. */
export const SOURCE_CALL_HEADER = 'x-weft-source-call-id';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A JSON string's value (OpenInference keeps requests and invocation parameters as JSON text). */
function parsed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** The call a replay was made from (set by the inference front from SOURCE_CALL_HEADER). */
export function replayedCallId(call: Pick<Call, 'attributes'>): string | null {
  const weft = (call.attributes as Record<string, unknown> | undefined)?.weft;
  return isObj(weft) && typeof weft.source_call_id === 'string' ? weft.source_call_id : null;
}

/** The UI's reading of a message (parts) back in OpenAI's form. */
function toOpenAi(m: ChatMessage): OpenAiMessage[] {
  const text: string[] = [];
  const calls: unknown[] = [];
  const results: OpenAiMessage[] = [];
  for (const p of m.parts) {
    if (p.kind === 'text') text.push(p.text);
    else if (p.kind === 'tool_call')
      calls.push({
        id: p.id,
        type: 'function',
        function: { name: p.name, arguments: typeof p.args === 'string' ? p.args : JSON.stringify(p.args ?? {}) },
      });
    else if (p.kind === 'tool_result')
      results.push({ role: 'tool', tool_call_id: p.id, content: typeof p.value === 'string' ? p.value : JSON.stringify(p.value) });
    else text.push(JSON.stringify(p.value));
  }
  const out: OpenAiMessage[] = [];
  if (text.length || calls.length || results.length === 0)
    out.push({ role: m.role, content: text.length ? text.join('\n') : null, ...(calls.length ? { tool_calls: calls } : {}) });
  return [...out, ...results];
}

/** The request a call made, as far as it was recorded; null when the call holds no conversation. */
export function requestFromCall(call: Call): PlaygroundRequest | null {
  const inputs = isObj(call.inputs) ? call.inputs : {};
  const attributes = isObj(call.attributes) ? call.attributes : {};
  let messages: OpenAiMessage[] | null = null;
  const direct = Array.isArray(inputs.messages) && asMessages(inputs.messages) ? (inputs.messages as Record<string, unknown>[]) : null;
  if (direct) {
    messages = direct.map((m) => {
      const out: OpenAiMessage = { role: String(m.role), content: (m.content as OpenAiMessage['content']) ?? null };
      if (typeof m.name === 'string') out.name = m.name;
      if (Array.isArray(m.tool_calls) && m.tool_calls.length) out.tool_calls = m.tool_calls;
      if (typeof m.tool_call_id === 'string') out.tool_call_id = m.tool_call_id;
      return out;
    });
  } else {
    const conversation = findConversation(inputs);
    if (conversation) messages = conversation.flatMap(toOpenAi);
  }
  if (!messages) return null;

  // Parameters from the request itself, else what the span recorded of it.
  const sources = [inputs, parsed(inputs['input.value']), parsed(attributes.model_parameters)].filter(isObj);
  const params: Params = {};
  for (const name of PARAM_NAMES) {
    for (const src of sources) {
      const v = src[name] ?? (name === 'max_tokens' ? src.max_completion_tokens : undefined);
      if (typeof v === 'number' && Number.isFinite(v)) {
        params[name] = v;
        break;
      }
    }
  }
  const usageModels = Object.keys((call.summary?.usage as Record<string, unknown> | undefined) ?? {});
  const model =
    [inputs.model, attributes.model, ...sources.map((s) => s.model), usageModels[0]].find(
      (m): m is string => typeof m === 'string' && m !== '',
    ) ?? null;
  const tools =
    [inputs.tools, attributes.tools, ...sources.map((s) => s.tools)].find((t): t is unknown[] => Array.isArray(t) && t.length > 0) ?? null;
  return { model, messages, params, tools };
}

/** The models weft's inference front serves (`GET /v1/models`). */
export async function servedModels(signal?: AbortSignal): Promise<string[]> {
  const r = await send<{ data: { id: string }[] }>('/v1/models', undefined, { method: 'GET', bearer: true, signal });
  return r.data.data.map((m) => m.id);
}

export interface Replay {
  /** The recorded call of the replay (`x-svc-call-id`). */
  callId: string | null;
  response: Record<string, unknown>;
  ms: number;
}

/** Runs the request through `/v1/chat/completions`, traced into the project and linked to the source call. */
export async function runReplay(projectId: string, sourceCallId: string | null, req: PlaygroundRequest): Promise<Replay> {
  const body: Record<string, unknown> = { model: req.model, messages: req.messages, ...req.params };
  if (req.tools) body.tools = req.tools;
  const started = performance.now();
  const r = await send<Record<string, unknown>>('/v1/chat/completions', body, {
    bearer: true,
    headers: { 'x-project-id': projectId, ...(sourceCallId ? { [SOURCE_CALL_HEADER]: sourceCallId } : {}) },
  });
  return { callId: r.headers.get('x-svc-call-id'), response: r.data, ms: performance.now() - started };
}

/** Earlier replays of a call, newest first. */
export function replaysOf(projectId: string, callId: string, signal?: AbortSignal): Promise<Call[]> {
  return postJsonl<Call>(
    '/calls/stream_query',
    {
      project_id: projectId,
      query: { $expr: { $eq: [{ $getField: 'attributes.weft.source_call_id' }, { $literal: callId }] } },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      limit: 20,
      include_costs: true,
    },
    signal,
  );
}
