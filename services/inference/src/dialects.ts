import { validationError } from './openai-errors';
import type { Dialect } from './upstreams';

/**
 * What each upstream dialect accepts in a chat completion request, and how the interface's
 * (vLLM's) fields translate into it. Fields a dialect has no equivalent for are dropped, as
 * litellm's `drop_params` does, except where dropping would silently change the answer
 * (a structured-output constraint, several choices): those are refused by `unsupported()`.
 */

/** OpenAI's newer chat-only fields (no completions equivalent, no vLLM one). */
const OPENAI_CHAT_EXTRAS = ['reasoning_effort', 'service_tier', 'metadata', 'store', 'modalities', 'audio', 'prediction'];

const OPENAI_FIELDS = [
  'messages',
  'model',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'presence_penalty',
  'response_format',
  'seed',
  'stop',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  ...OPENAI_CHAT_EXTRAS,
];

const VLLM_EXTRA = [
  'include_reasoning',
  'use_beam_search',
  'top_k',
  'min_p',
  'repetition_penalty',
  'length_penalty',
  'stop_token_ids',
  'include_stop_str_in_output',
  'ignore_eos',
  'min_tokens',
  'skip_special_tokens',
  'spaces_between_special_tokens',
  'truncate_prompt_tokens',
  'prompt_logprobs',
  'allowed_token_ids',
  'bad_words',
  'echo',
  'add_generation_prompt',
  'continue_final_message',
  'add_special_tokens',
  'documents',
  'chat_template',
  'chat_template_kwargs',
  'mm_processor_kwargs',
  'structured_outputs',
  'priority',
  'request_id',
  'logits_processors',
  'return_tokens_as_token_ids',
  'return_token_ids',
  'cache_salt',
  'kv_transfer_params',
  'vllm_xargs',
  // later vLLM releases (tolerated by newer upstreams)
  'thinking_token_budget',
  'logprob_token_ids',
  'session_id',
  'truncation_side',
  'return_prompt_text',
  'stream_interval',
  'repetition_detection',
  'ec_transfer_params',
  'media_io_kwargs',
];

const SGLANG_EXTRA = [
  'top_k',
  'min_p',
  'repetition_penalty',
  'min_tokens',
  'stop_token_ids',
  'ignore_eos',
  'skip_special_tokens',
  'spaces_between_special_tokens',
  'no_stop_trim',
  'continue_final_message',
  'chat_template_kwargs',
  'separate_reasoning',
  'stream_reasoning',
  'regex',
  'ebnf',
  'json_schema',
  'rid',
  'priority',
  'lora_path',
];

const LLAMACPP_EXTRA = [
  'top_k',
  'min_p',
  'repeat_penalty',
  'grammar',
  'json_schema',
  'ignore_eos',
  'min_keep',
  'typical_p',
  'chat_template_kwargs',
  'cache_prompt',
];

const OLLAMA_FIELDS = [
  'model',
  'messages',
  'temperature',
  'top_p',
  'max_tokens',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'response_format',
  'tools',
  'tool_choice',
  'stream',
  'stream_options',
  'reasoning_effort',
  'logprobs',
  'top_logprobs',
];

const ACCEPTED: Record<Dialect, Set<string>> = {
  vllm: new Set([...OPENAI_FIELDS, ...VLLM_EXTRA]),
  sglang: new Set([...OPENAI_FIELDS, ...SGLANG_EXTRA]),
  llamacpp: new Set([...OPENAI_FIELDS, ...LLAMACPP_EXTRA]),
  ollama: new Set(OLLAMA_FIELDS),
  openai: new Set(OPENAI_FIELDS),
};

/** The legacy `/v1/completions` request: a prompt instead of messages, and its own few fields. */
const OPENAI_COMPLETION_FIELDS = [
  'model',
  'prompt',
  'best_of',
  'echo',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'max_tokens',
  'n',
  'presence_penalty',
  'seed',
  'stop',
  'stream',
  'stream_options',
  'suffix',
  'temperature',
  'top_p',
  'user',
];
const CHAT_ONLY = new Set([
  'messages',
  'max_completion_tokens',
  'top_logprobs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  ...OPENAI_CHAT_EXTRAS,
  'include_reasoning',
  'add_generation_prompt',
  'continue_final_message',
  'documents',
  'chat_template',
  'chat_template_kwargs',
  'mm_processor_kwargs',
]);
const OLLAMA_COMPLETION_FIELDS = [
  'model',
  'prompt',
  'temperature',
  'top_p',
  'max_tokens',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'stream',
  'stream_options',
  'suffix',
  'echo',
];

/** Each dialect's completion fields: the OpenAI ones plus its own extras, minus what only chat has. */
const completionFields = (extra: string[]) => new Set([...OPENAI_COMPLETION_FIELDS, ...extra.filter((f) => !CHAT_ONLY.has(f))]);
const ACCEPTED_COMPLETION: Record<Dialect, Set<string>> = {
  vllm: completionFields(VLLM_EXTRA),
  sglang: completionFields(SGLANG_EXTRA),
  llamacpp: completionFields(LLAMACPP_EXTRA),
  ollama: new Set(OLLAMA_COMPLETION_FIELDS),
  openai: new Set(OPENAI_COMPLETION_FIELDS),
};

/** What a request asks for: a chat completion or a legacy (prompt) completion. */
export type RequestKind = 'chat' | 'completion';

/** Dialects that return one choice only (llama.cpp errors, Ollama ignores `n`). */
const SINGLE_CHOICE: ReadonlySet<Dialect> = new Set(['llamacpp', 'ollama']);

type Json = Record<string, unknown>;

/**
 * A request feature the dialect cannot honour, as `[field, reason]`, or null. Checked before
 * forwarding so the client gets a clear 400 rather than a quietly different answer.
 */
export function unsupported(dialect: Dialect, req: Json): [string, string] | null {
  const n = typeof req.n === 'number' ? req.n : 1;
  if (n > 1 && SINGLE_CHOICE.has(dialect)) return ['n', `n=${n}: this model's server (${dialect}) returns one choice only`];
  const so = req.structured_outputs as Json | null | undefined;
  if (so) {
    const supported: Record<Dialect, string[]> = {
      vllm: ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'],
      sglang: ['json', 'regex', 'choice', 'grammar', 'json_object'],
      llamacpp: ['json', 'grammar', 'json_object'],
      ollama: ['json', 'json_object'],
      openai: ['json', 'json_object'],
    };
    for (const [k, v] of Object.entries(so)) {
      if (
        ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'].includes(k) &&
        v !== null &&
        v !== undefined &&
        v !== false
      ) {
        if (!supported[dialect].includes(k))
          return [`structured_outputs.${k}`, `structured_outputs.${k} is not supported by this model's server (${dialect})`];
      }
    }
  }
  return null;
}

/**
 * The body sent upstream: the client's request translated to the dialect and filtered to
 * the fields it accepts. `stream_options.include_usage` is always asked for when streaming,
 * so usage can be recorded; the client only sees usage if it asked (see stream normalising).
 */
export function upstreamRequest(dialect: Dialect, req: Json, opts: { stream: boolean; requestId: string; kind?: RequestKind }): Json {
  const src: Json = { ...req };
  if ('svc_xargs' in src) {
    src.vllm_xargs = src.svc_xargs;
    delete src.svc_xargs;
  }
  src.stream = opts.stream;
  if (opts.stream) {
    const clientOpts = (req.stream_options ?? {}) as Json;
    const so: Json = { include_usage: true };
    if (dialect === 'vllm' && clientOpts.continuous_usage_stats) so.continuous_usage_stats = true;
    src.stream_options = so;
  } else {
    delete src.stream_options;
  }
  translate(dialect, src, opts.requestId);
  const accepted = (opts.kind === 'completion' ? ACCEPTED_COMPLETION : ACCEPTED)[dialect];
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) if (accepted.has(k) && v !== undefined) out[k] = v;
  return out;
}

function translate(dialect: Dialect, r: Json, requestId: string): void {
  const so = (r.structured_outputs ?? null) as Json | null;
  const jsonConstraint = so?.json ?? null;
  switch (dialect) {
    case 'vllm':
      r.request_id = requestId;
      return;
    case 'sglang':
      r.rid = requestId;
      if (so) {
        if (typeof so.regex === 'string') r.regex = so.regex;
        if (Array.isArray(so.choice)) r.regex = (so.choice as string[]).map(escapeRegex).join('|');
        if (typeof so.grammar === 'string') r.ebnf = so.grammar;
        if (jsonConstraint !== null) r.json_schema = typeof jsonConstraint === 'string' ? jsonConstraint : JSON.stringify(jsonConstraint);
        if (so.json_object) r.response_format = { type: 'json_object' };
      }
      return;
    case 'llamacpp':
      if (r.repetition_penalty !== undefined && r.repetition_penalty !== null) r.repeat_penalty = r.repetition_penalty;
      if (r.max_completion_tokens != null) {
        r.max_tokens = r.max_completion_tokens;
        delete r.max_completion_tokens;
      }
      if (so) {
        if (typeof so.grammar === 'string') r.grammar = so.grammar;
        if (jsonConstraint !== null) r.json_schema = schemaObject(jsonConstraint);
        if (so.json_object) r.response_format = { type: 'json_object' };
      }
      return;
    case 'ollama':
    case 'openai':
      if (dialect === 'ollama' && r.max_completion_tokens != null) r.max_tokens = r.max_completion_tokens;
      if (so) {
        if (jsonConstraint !== null) {
          const schema = schemaObject(jsonConstraint);
          r.response_format = { type: 'json_schema', json_schema: { name: 'structured_output', schema } };
        } else if (so.json_object) r.response_format = { type: 'json_object' };
      }
      return;
  }
}

function schemaObject(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw validationError('structured_outputs.json: must be a JSON schema (object or JSON text)', 'structured_outputs');
  }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
