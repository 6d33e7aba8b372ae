import { z } from 'zod';
import { jsonObject, projectId } from './common';
import type { RouteSpec } from './spec';

/**
 * Chat completions request as the interface lists it. Field and combination rules that
 * vLLM enforces (with vLLM's messages) are applied by the inference service; this schema
 * checks types only, and unknown fields are tolerated.
 */
const message = z
  .object({
    role: z.string(),
    content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
    name: z.string().optional(),
  })
  .passthrough();

const tool = z
  .object({
    type: z.literal('function'),
    function: z.object({ name: z.string(), description: z.string().optional(), parameters: jsonObject.optional() }).passthrough(),
  })
  .passthrough();

/** OpenAI's sampling and delivery fields, the same in chat and text completions. */
const openAiSamplingFields = {
  logit_bias: z.record(z.string(), z.number()).nullish(),
  max_tokens: z.number().int().nullish(),
  n: z.number().int().nullish(),
  seed: z.number().refine(Number.isInteger, 'Input should be a valid integer').nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish(), continuous_usage_stats: z.boolean().nullish() }).nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  user: z.string().nullish(),
};

/** The serving engine's (vLLM's) request extras that chat and text completions share. */
const servingExtras = {
  use_beam_search: z.boolean().optional(),
  top_k: z.number().int().nullish(),
  min_p: z.number().nullish(),
  repetition_penalty: z.number().nullish(),
  length_penalty: z.number().optional(),
  stop_token_ids: z.array(z.number().int()).nullish(),
  include_stop_str_in_output: z.boolean().optional(),
  ignore_eos: z.boolean().optional(),
  min_tokens: z.number().int().optional(),
  skip_special_tokens: z.boolean().optional(),
  spaces_between_special_tokens: z.boolean().optional(),
  truncate_prompt_tokens: z.number().int().nullish(),
  prompt_logprobs: z.number().int().nullish(),
  allowed_token_ids: z.array(z.number().int()).nullish(),
  add_special_tokens: z.boolean().optional(),
  priority: z.number().int().optional(),
  request_id: z.string().optional(),
  logits_processors: z
    .array(z.union([z.string(), z.object({ qualname: z.string(), args: z.array(z.unknown()).nullish(), kwargs: jsonObject.nullish() })]))
    .nullish(),
  return_tokens_as_token_ids: z.boolean().nullish(),
  return_token_ids: z.boolean().nullish(),
  cache_salt: z.string().nullish(),
  kv_transfer_params: jsonObject.nullish(),
  svc_xargs: jsonObject.nullish(),
};

export const chatCompletionReq = z
  .object({
    messages: z.array(message),
    model: z.string().optional(),
    frequency_penalty: z.number().optional(),
    presence_penalty: z.number().optional(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().nullish(),
    max_completion_tokens: z.number().int().nullish(),
    response_format: z
      .object({
        type: z.string(),
        json_schema: z
          .object({ name: z.string(), description: z.string().optional(), schema: jsonObject.optional(), strict: z.boolean().nullish() })
          .optional(),
      })
      .passthrough()
      .nullish(),
    // int64 (checked by the inference service): zod's int() stops at 2^53.
    tools: z.array(tool).nullish(),
    tool_choice: z.union([z.string(), jsonObject]).nullish(),
    reasoning_effort: z.enum(['low', 'medium', 'high']).nullish(),
    include_reasoning: z.boolean().optional(),
    parallel_tool_calls: z.boolean().nullish(),
    bad_words: z.array(z.string()).optional(),
    echo: z.boolean().optional(),
    add_generation_prompt: z.boolean().optional(),
    continue_final_message: z.boolean().optional(),
    documents: z.array(jsonObject).nullish(),
    chat_template: z.string().nullish(),
    chat_template_kwargs: jsonObject.nullish(),
    mm_processor_kwargs: jsonObject.nullish(),
    structured_outputs: z
      .object({
        json: z.union([z.string(), jsonObject]).nullish(),
        regex: z.string().nullish(),
        choice: z.array(z.string()).nullish(),
        grammar: z.string().nullish(),
        json_object: z.boolean().nullish(),
        disable_fallback: z.boolean().optional(),
        disable_any_whitespace: z.boolean().optional(),
        disable_additional_properties: z.boolean().optional(),
        whitespace_pattern: z.string().nullish(),
        structural_tag: z.string().nullish(),
        _backend: z.string().nullish(),
        _backend_was_auto: z.boolean().optional(),
      })
      .nullish(),
    ...openAiSamplingFields,
    ...servingExtras,
  })
  .passthrough();
export type ChatCompletionReq = z.infer<typeof chatCompletionReq>;

export const chatCompletionRes = z
  .object({
    id: z.string(),
    object: z.string(),
    created: z.number().int(),
    model: z.string(),
    service_tier: z.string().nullish(),
    system_fingerprint: z.string().nullish(),
    usage: z
      .object({
        prompt_tokens: z.number().int(),
        total_tokens: z.number().int(),
        completion_tokens: z.number().int().nullish(),
        prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).nullish(),
      })
      .nullish(),
    prompt_logprobs: z.array(z.unknown()).nullish(),
    prompt_token_ids: z.array(z.number().int()).nullish(),
    kv_transfer_params: jsonObject.nullish(),
    choices: z.array(
      z
        .object({
          index: z.number().int(),
          finish_reason: z.string().nullish(),
          stop_reason: z.union([z.number().int(), z.string()]).nullish(),
          token_ids: z.array(z.number().int()).nullish(),
          message: jsonObject,
          logprobs: jsonObject.nullish(),
        })
        .passthrough(),
    ),
  })
  .passthrough();

/**
 * The legacy `POST /v1/completions` request (vLLM's CompletionRequest): types only, like the
 * chat request; vLLM's value rules are the inference service's. Unknown fields are tolerated.
 */
const tokenIds = z.array(z.number().int());
export const textCompletionReq = z
  .object({
    model: z.string().nullish(),
    prompt: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)]).nullish(),
    best_of: z.number().int().nullish(),
    echo: z.boolean().nullish(),
    frequency_penalty: z.number().nullish(),
    logprobs: z.number().int().nullish(),
    presence_penalty: z.number().nullish(),
    suffix: z.string().nullish(),
    response_format: z.object({ type: z.string() }).passthrough().nullish(),
    ...openAiSamplingFields,
    ...servingExtras,
  })
  .passthrough();
export type TextCompletionReq = z.infer<typeof textCompletionReq>;

/** `POST /v1/embeddings`: passed through to the model's server; only what routing and tracing need is checked. */
export const embeddingReq = z
  .object({
    model: z.string().nullish(),
    input: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)]),
    encoding_format: z.enum(['float', 'base64']).nullish(),
    dimensions: z.number().int().nullish(),
    user: z.string().nullish(),
  })
  .passthrough();
export type EmbeddingReq = z.infer<typeof embeddingReq>;

export const completionsCreateReq = z.object({
  project_id: projectId,
  inputs: z
    .object({
      model: z.string().min(1),
      messages: z.array(z.unknown()).default([]),
      timeout: z.number().nullish(),
      temperature: z.number().nullish(),
      top_p: z.number().nullish(),
      n: z.number().int().nullish(),
      stop: z.union([z.string(), z.array(z.string())]).nullish(),
      max_completion_tokens: z.number().int().nullish(),
      max_tokens: z.number().int().nullish(),
      modalities: z.array(z.unknown()).nullish(),
      presence_penalty: z.number().nullish(),
      frequency_penalty: z.number().nullish(),
      stream: z.boolean().nullish(),
      logit_bias: jsonObject.nullish(),
      user: z.string().nullish(),
      response_format: jsonObject.nullish(),
      seed: z.number().int().nullish(),
      tools: z.array(z.unknown()).nullish(),
      tool_choice: z.union([z.string(), jsonObject]).nullish(),
      logprobs: z.boolean().nullish(),
      top_logprobs: z.number().int().nullish(),
      parallel_tool_calls: z.boolean().nullish(),
      extra_headers: jsonObject.nullish(),
      functions: z.array(z.unknown()).nullish(),
      function_call: z.string().nullish(),
      api_version: z.string().nullish(),
    })
    .passthrough(),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
  track_llm_call: z.boolean().default(true),
  /** Newer reference versions: place the recorded call in an existing trace. */
  trace_id: z.string().nullish(),
  parent_id: z.string().nullish(),
});
export type CompletionsCreateReq = z.infer<typeof completionsCreateReq>;
export const completionsCreateRes = z.object({ response: jsonObject, svc_call_id: z.string().nullable() });

export const modelCreateReq = z.object({
  project: z.string().min(1),
  name: z.string().min(1),
  base_model: z.string().min(1),
  entity: z.string().min(1).optional(),
  return_existing: z.boolean().default(false),
});
export const modelRecord = z.object({
  id: z.string(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullable().optional(),
});

export { projectId };

/**
 * `POST /v1/responses` (OpenAI Responses API): forwarded to the model's server as sent. Types of
 * what weft reads (routing, streaming, the recorded conversation) are checked here; unknown
 * fields pass through.
 */
const responseInputItem = z.object({ type: z.string().optional(), role: z.string().optional() }).passthrough();
const responseTool = z
  .object({ type: z.string(), name: z.string().optional(), parameters: jsonObject.nullish() })
  .passthrough()
  .refine((t) => t.type !== 'function' || typeof t.name === 'string', { message: 'a function tool needs a name', path: ['name'] });
export const responsesReq = z
  .object({
    model: z.string().min(1).nullish(),
    input: z.union([z.string(), z.array(responseInputItem)]),
    instructions: z.string().nullish(),
    previous_response_id: z.string().min(1).nullish(),
    tools: z.array(responseTool).nullish(),
    tool_choice: z.union([z.string(), jsonObject]).nullish(),
    stream: z.boolean().nullish(),
    max_output_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    store: z.boolean().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
  })
  .passthrough();
export type ResponsesReq = z.infer<typeof responsesReq>;

/** The OpenAI-compatible front beyond the interface's chat completions (legacy completions, embeddings, responses). */
export const inferenceRouteSpecs = {
  textCompletions: {
    path: '/v1/completions',
    summary: 'Create a (legacy, prompt) completion (OpenAI-compatible)',
    auth: 'bearer',
    service: 'inference',
    request: textCompletionReq,
  },
  embeddings: {
    path: '/v1/embeddings',
    summary: 'Create embeddings (OpenAI-compatible, passed through)',
    auth: 'bearer',
    service: 'inference',
    request: embeddingReq,
  },
  responsesCreate: {
    path: '/v1/responses',
    summary: 'Create a model response (OpenAI Responses API, forwarded; streamed as its SSE events)',
    auth: 'bearer',
    service: 'inference',
    request: responsesReq,
    stream: 'sse',
  },
} as const satisfies Record<string, RouteSpec>;
