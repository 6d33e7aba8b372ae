import type { ChatCompletionReq, TextCompletionReq } from '@weft/api';
import { badRequestError, validationError } from './openai-errors';

/**
 * vLLM's (v0.11) checks of a chat completion request, with its messages, so clients see the
 * errors a vLLM server would give them. Types are already checked by the contract schema;
 * these are the value and combination rules:
 *  - the request validators (pydantic `mode="before"`): type `Bad Request`;
 *  - the SamplingParams and serving-layer checks: type `BadRequestError`.
 * Both are 400. Like vLLM's validators they look only at the keys the client sent.
 * Returns the request with vLLM's silent rewrites applied (tool_choice defaults).
 * This covers the validators; `validateSampling` the rest.
 */
export function validateChatRequest(req: ChatCompletionReq): ChatCompletionReq {
  const out: ChatCompletionReq = { ...req };
  checkStreamOptions(req);
  checkLogprobs(req);
  checkStructuredOutputs(req);
  checkToolUsage(out);
  checkGenerationPrompt(req);
  checkCacheSalt(req);
  checkRanges(req);
  return out;
}

/**
 * vLLM's SamplingParams and serving-layer checks, which it runs after resolving the model
 * (so an unknown model is a 404 before any of these).
 */
export function validateSampling(req: ChatCompletionReq): void {
  checkSamplingParams(req);
}

/**
 * vLLM's request validators of the legacy `/v1/completions` (CompletionRequest): the prompt,
 * logprobs, stream options, cache salt and ranges; `suffix` is refused as vLLM's server does.
 */
export function validateCompletionRequest(req: TextCompletionReq): TextCompletionReq {
  const shared = req as unknown as ChatCompletionReq; // the members both requests have, same rules
  if (req.prompt === undefined || req.prompt === null) {
    throw validationError('At least one of `prompt` or `prompt_embeds` must be set.', 'prompt');
  }
  checkStreamOptions(shared);
  const p = req.prompt_logprobs;
  if (p !== null && p !== undefined) {
    if (req.stream && (p > 0 || p === -1))
      throw validationError('`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs');
    if (p < 0 && p !== -1) throw validationError('`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs');
  }
  if (typeof req.logprobs === 'number' && req.logprobs < 0 && req.logprobs !== -1) {
    throw validationError('`logprobs` must be a positive value or -1.', 'logprobs');
  }
  checkCacheSalt(shared);
  checkRanges(shared);
  return { ...req };
}

/** The legacy completion's sampling and serving checks, after the model is resolved. */
export function validateCompletionSampling(req: TextCompletionReq): void {
  if (req.suffix !== undefined && req.suffix !== null) throw badRequestError('suffix is not currently supported', 'suffix');
  checkSamplingParams(req as unknown as ChatCompletionReq);
}

const INT64 = 2 ** 63;

function checkStreamOptions(r: ChatCompletionReq): void {
  // Python truthiness: `{}` and null pass.
  if (r.stream_options && Object.keys(r.stream_options).length > 0 && !r.stream) {
    throw validationError('Stream options can only be defined when `stream=True`.', 'stream_options');
  }
}

function checkLogprobs(r: ChatCompletionReq): void {
  const p = r.prompt_logprobs;
  if (p !== null && p !== undefined) {
    if (r.stream && (p > 0 || p === -1)) {
      throw validationError('`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs');
    }
    if (p < 0 && p !== -1) throw validationError('`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs');
  }
  const t = r.top_logprobs;
  if (t !== null && t !== undefined) {
    if (t < 0 && t !== -1) throw validationError('`top_logprobs` must be a positive value or -1.', 'top_logprobs');
    if ((t === -1 || t > 0) && !r.logprobs) {
      throw validationError('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    }
  }
}

function checkStructuredOutputs(r: ChatCompletionReq): void {
  const so = r.structured_outputs;
  if (!so) return;
  const kinds = [so.json, so.regex, so.choice].filter((v) => v !== null && v !== undefined).length;
  if (kinds > 1) {
    throw validationError(
      "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
      'structured_outputs',
    );
  }
  const tc = r.tool_choice;
  if (kinds === 1 && tc && typeof tc === 'object') {
    throw validationError('You can only either use constraints for structured outputs or tools, not both.', 'structured_outputs');
  }
}

const CORRECT_TOOL_CHOICE = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';

function checkToolUsage(r: ChatCompletionReq): void {
  if (r.tool_choice === undefined && r.tools && r.tools.length > 0) {
    r.tool_choice = 'auto';
    return;
  }
  const tc = r.tool_choice;
  if (tc === undefined || tc === null || tc === 'none') return;
  if (r.tools === undefined || r.tools === null) {
    throw validationError('When using `tool_choice`, `tools` must be set.', 'tool_choice');
  }
  if (typeof tc === 'string' && tc !== 'auto' && tc !== 'required') {
    throw validationError(
      `Invalid value for \`tool_choice\`: ${pyStr(tc)}! Only named tools, "none", "auto" or "required" are supported.`,
      'tool_choice',
    );
  }
  if (tc === 'required' && r.tools.length === 0) {
    // vLLM ≤0.11 quietly turns this into "no tools".
    r.tool_choice = 'none';
    delete r.tools;
    return;
  }
  if (typeof tc === 'object') {
    const fn = (tc as Record<string, unknown>).function;
    if (!fn || typeof fn !== 'object' || Array.isArray(fn)) {
      throw validationError(`Invalid value for \`function\`: \`${pyStr(fn)}\` in \`tool_choice\`! ${CORRECT_TOOL_CHOICE}`, 'tool_choice');
    }
    if (!('name' in fn)) {
      throw validationError(`Expected field \`name\` in \`function\` in \`tool_choice\`! ${CORRECT_TOOL_CHOICE}`, 'tool_choice');
    }
    const name = (fn as Record<string, unknown>).name;
    if (typeof name !== 'string' || name.length === 0) {
      throw validationError(
        `Invalid \`name\` in \`function\`: \`${pyStr(name)}\` in \`tool_choice\`! ${CORRECT_TOOL_CHOICE}`,
        'tool_choice',
      );
    }
    if (!r.tools.some((t) => t.function.name === name)) {
      throw validationError('The tool specified in `tool_choice` does not match any of the specified `tools`', 'tool_choice');
    }
  }
}

function checkGenerationPrompt(r: ChatCompletionReq): void {
  if (r.continue_final_message && r.add_generation_prompt) {
    throw validationError('Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'continue_final_message');
  }
}

function checkCacheSalt(r: ChatCompletionReq): void {
  if (r.cache_salt !== undefined && r.cache_salt !== null && (typeof r.cache_salt !== 'string' || r.cache_salt === '')) {
    throw validationError("Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt');
  }
}

/** pydantic field constraints (int64 seed, truncate_prompt_tokens >= -1). */
function checkRanges(r: ChatCompletionReq): void {
  if (typeof r.seed === 'number') {
    if (r.seed > INT64) throw validationError('seed: Input should be less than or equal to 9223372036854775807', 'seed');
    if (r.seed < -INT64) throw validationError('seed: Input should be greater than or equal to -9223372036854775808', 'seed');
  }
  if (typeof r.truncate_prompt_tokens === 'number' && r.truncate_prompt_tokens < -1) {
    throw validationError('truncate_prompt_tokens: Input should be greater than or equal to -1', 'truncate_prompt_tokens');
  }
}

/** SamplingParams._verify_args and the serving layer's checks. */
function checkSamplingParams(r: ChatCompletionReq): void {
  const n = r.n ?? 1;
  if (n < 1) throw badRequestError(`n must be at least 1, got ${n}.`, 'n');
  for (const k of ['presence_penalty', 'frequency_penalty'] as const) {
    const v = r[k];
    if (typeof v === 'number' && (v < -2 || v > 2)) throw badRequestError(`${k} must be in [-2, 2], got ${pyFloat(v)}.`, k);
  }
  if (typeof r.repetition_penalty === 'number' && r.repetition_penalty <= 0) {
    throw badRequestError(`repetition_penalty must be greater than zero, got ${pyFloat(r.repetition_penalty)}.`, 'repetition_penalty');
  }
  if (typeof r.temperature === 'number' && r.temperature < 0) {
    throw badRequestError(`temperature must be non-negative, got ${pyFloat(r.temperature)}.`, 'temperature');
  }
  if (typeof r.top_p === 'number' && (r.top_p <= 0 || r.top_p > 1)) {
    throw badRequestError(`top_p must be in (0, 1], got ${pyFloat(r.top_p)}.`, 'top_p');
  }
  if (typeof r.top_k === 'number' && r.top_k < -1) {
    throw badRequestError(`top_k must be 0 (disable), or at least 1, got ${r.top_k}.`, 'top_k');
  }
  if (typeof r.min_p === 'number' && (r.min_p < 0 || r.min_p > 1)) {
    throw badRequestError(`min_p must be in [0, 1], got ${pyFloat(r.min_p)}.`, 'min_p');
  }
  const maxTokens = r.max_completion_tokens ?? r.max_tokens;
  if (typeof maxTokens === 'number' && maxTokens < 1) {
    throw badRequestError(
      `max_tokens must be at least 1, got ${maxTokens}.`,
      r.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
    );
  }
  if (typeof r.min_tokens === 'number') {
    if (r.min_tokens < 0) throw badRequestError(`min_tokens must be greater than or equal to 0, got ${r.min_tokens}.`, 'min_tokens');
    if (typeof maxTokens === 'number' && r.min_tokens > maxTokens) {
      throw badRequestError(`min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${r.min_tokens}.`, 'min_tokens');
    }
  }
  // Greedy sampling (temperature ~0) has one possible answer, so several are refused.
  if (!r.use_beam_search && typeof r.temperature === 'number' && r.temperature < 1e-5 && n > 1) {
    throw badRequestError(`n must be 1 when using greedy sampling, got ${n}.`, 'n');
  }
  if (r.logits_processors && r.logits_processors.length > 0) {
    throw badRequestError(
      'The `logits_processors` argument is not supported by this server. See --logits-processor-pattern engine argument for more information.',
      'logits_processors',
    );
  }
}

/** vLLM's engine check, made per routed model: priorities need priority scheduling. */
export function priorityError(priority: number) {
  return badRequestError(`Got priority ${priority} but Priority scheduling is not enabled.`, 'priority');
}

/** How Python prints a float (`3.0`, not `3`), so the messages read as vLLM's. */
function pyFloat(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** How Python's str() prints a JSON value inside an f-string. */
function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  return pyRepr(v);
}

function pyRepr(v: unknown): string {
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  return pyStr(v);
}
