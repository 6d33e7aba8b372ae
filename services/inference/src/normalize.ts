import { randomBytes } from 'node:crypto';

/**
 * Upstream answers → the interface's (vLLM v0.11's) shapes, whatever the server's dialect:
 * the id is ours (`chatcmpl-<request_id>`), the model is the name the client asked for,
 * `reasoning` becomes `reasoning_content`, SGLang's `matched_stop` becomes `stop_reason`,
 * tool-call arguments are JSON text, server extras (`timings`, ...) are dropped, and usage
 * has `total_tokens` even when the server left it out.
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export interface ResponseIdentity {
  /** `chatcmpl-<request_id>`. */
  id: string;
  /** The model name the client used. */
  model: string;
  created: number;
}

export function normalizeUsage(u: unknown): Json | null {
  if (!u || typeof u !== 'object') return null;
  const x = u as Json;
  const prompt = Number(x.prompt_tokens ?? 0);
  const completion = Number(x.completion_tokens ?? 0);
  const details = obj(x.prompt_tokens_details);
  return {
    prompt_tokens: prompt,
    total_tokens: typeof x.total_tokens === 'number' ? x.total_tokens : prompt + completion,
    completion_tokens: completion,
    prompt_tokens_details: typeof details.cached_tokens === 'number' ? { cached_tokens: details.cached_tokens } : null,
  };
}

function toolCalls(v: unknown, streaming: boolean): Json[] {
  return arr(v).map((raw, i) => {
    const t = obj(raw);
    const fn = obj(t.function);
    const out: Json = {};
    if (streaming) out.index = typeof t.index === 'number' ? t.index : i;
    if (t.id !== undefined || !streaming) out.id = typeof t.id === 'string' ? t.id : `chatcmpl-tool-${randomBytes(16).toString('hex')}`;
    if (t.type !== undefined || !streaming) out.type = 'function';
    const f: Json = {};
    if (fn.name !== undefined) f.name = fn.name;
    if (fn.arguments !== undefined) f.arguments = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments);
    else if (!streaming) f.arguments = '{}';
    out.function = f;
    return out;
  });
}

const reasoningOf = (m: Json): string | null => {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' ? r : null;
};

/** A whole (non-streamed) chat.completion. */
export function normalizeCompletion(raw: unknown, ident: ResponseIdentity): Json {
  const r = obj(raw);
  return {
    id: ident.id,
    object: 'chat.completion',
    created: typeof r.created === 'number' ? r.created : ident.created,
    model: ident.model,
    choices: arr(r.choices).map((rc, i) => {
      const c = obj(rc);
      const m = obj(c.message);
      const reasoning = reasoningOf(m);
      return {
        index: typeof c.index === 'number' ? c.index : i,
        message: {
          role: typeof m.role === 'string' ? m.role : 'assistant',
          content: typeof m.content === 'string' ? m.content : null,
          refusal: m.refusal ?? null,
          annotations: m.annotations ?? null,
          audio: m.audio ?? null,
          function_call: m.function_call ?? null,
          tool_calls: toolCalls(m.tool_calls, false),
          reasoning_content: reasoning,
          reasoning,
        },
        logprobs: c.logprobs ?? null,
        finish_reason: c.finish_reason ?? null,
        stop_reason: c.stop_reason ?? c.matched_stop ?? null,
        token_ids: c.token_ids ?? null,
      };
    }),
    service_tier: r.service_tier ?? null,
    system_fingerprint: r.system_fingerprint ?? null,
    usage: normalizeUsage(r.usage),
    prompt_logprobs: r.prompt_logprobs ?? null,
    prompt_token_ids: r.prompt_token_ids ?? null,
    kv_transfer_params: r.kv_transfer_params ?? null,
  };
}

function normalizeDelta(d: Json): Json {
  const out: Json = {};
  if (typeof d.role === 'string') out.role = d.role;
  if (d.content !== undefined) out.content = d.content;
  const reasoning = reasoningOf(d);
  if (reasoning !== null) out.reasoning_content = reasoning;
  if (d.refusal !== undefined && d.refusal !== null) out.refusal = d.refusal;
  if (Array.isArray(d.tool_calls) && d.tool_calls.length > 0) out.tool_calls = toolCalls(d.tool_calls, true);
  if (d.function_call !== undefined && d.function_call !== null) out.function_call = d.function_call;
  return out;
}

/**
 * One streamed chunk. `usage` is split off: the stream writer decides whether the client
 * sees it (include_usage / continuous_usage_stats) and where.
 */
export function normalizeChunk(raw: Json, ident: ResponseIdentity): { chunk: Json; usage: Json | null; hasChoices: boolean } {
  const choices = arr(raw.choices).map((rc, i) => {
    const c = obj(rc);
    const out: Json = {
      index: typeof c.index === 'number' ? c.index : i,
      delta: normalizeDelta(obj(c.delta)),
      logprobs: c.logprobs ?? null,
      finish_reason: c.finish_reason ?? null,
    };
    const stop = c.stop_reason ?? c.matched_stop;
    if (c.finish_reason && stop !== undefined) out.stop_reason = stop;
    if (c.token_ids !== undefined) out.token_ids = c.token_ids;
    return out;
  });
  const chunk: Json = {
    id: ident.id,
    object: 'chat.completion.chunk',
    created: typeof raw.created === 'number' ? raw.created : ident.created,
    model: ident.model,
    choices,
  };
  if (raw.prompt_token_ids !== undefined) chunk.prompt_token_ids = raw.prompt_token_ids;
  return { chunk, usage: normalizeUsage(raw.usage), hasChoices: choices.length > 0 };
}

export interface UpstreamErrorInfo {
  message: string;
  type: string | null;
  param: string | null;
}

/**
 * An upstream error body in any of the shapes servers use: `{error:{...}}` (vLLM ≥0.10.1,
 * OpenAI, llama.cpp, Ollama), flat `{object:"error", message}` (SGLang, old vLLM),
 * `{error:"text", error_type?}` (vLLM auth, TGI), FastAPI's `{detail}`, or plain text.
 */
export function parseUpstreamError(body: unknown, fallback: string): UpstreamErrorInfo {
  let v = body;
  if (typeof body === 'string') {
    try {
      v = JSON.parse(body);
    } catch {
      return { message: body.trim() || fallback, type: null, param: null };
    }
  }
  const o = obj(v);
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  if (o.error && typeof o.error === 'object') {
    const e = obj(o.error);
    return { message: str(e.message) ?? JSON.stringify(e), type: str(e.type), param: str(e.param) };
  }
  if (typeof o.error === 'string') return { message: o.error, type: str(o.error_type), param: null };
  if (typeof o.message === 'string') return { message: o.message, type: str(o.type), param: str(o.param) };
  if (o.detail !== undefined)
    return { message: typeof o.detail === 'string' ? o.detail : JSON.stringify(o.detail), type: null, param: null };
  return { message: fallback, type: null, param: null };
}
