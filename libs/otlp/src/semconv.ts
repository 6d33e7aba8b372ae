import { getPath } from './attributes';
import { isObject, setOwn } from './values';

/**
 * Where the instrumentation conventions put inputs, outputs, token usage and call metadata:
 * the GenAI semantic conventions (`gen_ai.*`), OpenInference (`input.value`, `llm.*`),
 * OpenLLMetry/Traceloop (`traceloop.*`, flattened `gen_ai.prompt.N.*`), Vercel AI, MLflow,
 * and the reference's own `wandb.*` keys. The first key present wins, in the reference's
 * order, except that `gen_ai.input.messages`/`gen_ai.output.messages` (the current GenAI
 * conventions) are looked at where the reference looks at Logfire's use of them.
 */
export const INPUT_KEYS = [
  'ai.prompt',
  'gen_ai.prompt',
  'input.value',
  'mlflow.spanInputs',
  'gen_ai.input.messages',
  'pydantic_ai.all_messages',
  'traceloop.entity.input',
  'gcp.vertex.agent.tool_call_args',
  'gcp.vertex.agent.llm_request',
  'events.gen_ai.user.message',
  // GenAI execute_tool spans and the AI SDK's ai.toolCall spans (our additions, after the reference's keys).
  'gen_ai.tool.call.arguments',
  'ai.toolCall.args',
  'input',
  'inputs',
] as const;

export const OUTPUT_KEYS = [
  'ai.response',
  'gen_ai.completion',
  'output.value',
  'gen_ai.output.messages',
  'mlflow.spanOutputs',
  'final_result',
  'gen_ai.content.completion',
  'traceloop.entity.output',
  'gcp.vertex.agent.tool_response',
  'gcp.vertex.agent.llm_response',
  'events.gen_ai.choice',
  'gen_ai.tool.call.result',
  'ai.toolCall.result',
  'output',
  'outputs',
] as const;

export const USAGE_KEYS: Record<string, readonly string[]> = {
  input_tokens: ['gen_ai.usage.input_tokens', 'ai.usage.inputTokens'],
  prompt_tokens: ['gen_ai.usage.prompt_tokens', 'llm.token_count.prompt', 'ai.usage.promptTokens'],
  completion_tokens: ['gen_ai.usage.completion_tokens', 'llm.token_count.completion', 'ai.usage.completionTokens'],
  output_tokens: ['gen_ai.usage.output_tokens', 'ai.usage.outputTokens'],
  total_tokens: ['llm.usage.total_tokens', 'llm.token_count.total', 'gen_ai.usage.total_tokens', 'ai.usage.totalTokens'],
  // Cached prompt tokens, which the cost query prices separately (our addition to the reference's list).
  cache_read_input_tokens: [
    'gen_ai.usage.cache_read.input_tokens',
    'gen_ai.usage.cache_read_input_tokens',
    'llm.token_count.prompt_details.cache_read',
    'ai.usage.inputTokenDetails.cacheReadTokens',
    'ai.usage.cachedInputTokens',
  ],
  cache_creation_input_tokens: [
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
    'llm.token_count.prompt_details.cache_write',
    'ai.usage.inputTokenDetails.cacheWriteTokens',
  ],
  // Part of the completion tokens (kept for reading, not added to them).
  reasoning_tokens: ['ai.usage.outputTokenDetails.reasoningTokens', 'ai.usage.reasoningTokens'],
};

/**
 * Names of one count: a span may carry a count under several conventions at once (the AI SDK's
 * `ai.usage.promptTokens` beside the GenAI `gen_ai.usage.input_tokens` on one model call).
 * Stored usage adds `prompt_tokens` and `input_tokens` (they are one count under two names), so
 * a span keeps one of them: the first name here.
 */
const SAME_COUNT: readonly [string, string][] = [
  ['input_tokens', 'prompt_tokens'],
  ['output_tokens', 'completion_tokens'],
];

export const ATTRIBUTE_KEYS: Record<string, readonly string[]> = {
  system: ['gen_ai.system', 'llm.system', 'gen_ai.system_instructions', 'system_prompt'],
  kind: ['weave.span.kind', 'traceloop.span.kind', 'openinference.span.kind'],
  model: ['gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name', 'ai.model.id'],
  provider: ['llm.provider', 'gen_ai.provider.name', 'ai.model.provider'],
  model_parameters: ['gen_ai.request', 'llm.invocation_parameters'],
  agent: ['gen_ai.agent.name', 'agent.name'],
  // Replaced by the OpenAI-format definitions when the span offers tools (normalized.ts).
  tools: ['gen_ai.agent.tools'],
  operation: ['gen_ai.operation.name'],
  // Our additions: OpenInference `user.id` on any span, OpenLLMetry's workflow and entity names.
  user: ['user.id', 'enduser.id', 'traceloop.association.properties.user_id', 'ai.telemetry.metadata.userId'],
  workflow: ['traceloop.workflow.name'],
  entity: ['traceloop.entity.name'],
};

/** Conversation/session ids that make a thread, strongest first. */
export const THREAD_KEYS = [
  'wandb.thread_id',
  'gcp.vertex.agent.session_id',
  'gen_ai.conversation.id',
  'session.id',
  'traceloop.association.properties.session_id',
  'traceloop.association.properties.chat_id',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.threadId',
] as const;

/** Python's truthiness, which the reference's "first present key" test uses. */
function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return true;
}

export function firstPresent(tree: Record<string, unknown>, keys: readonly string[]): [string, unknown] | null {
  for (const key of keys) {
    const v = getPath(tree, key);
    if (truthy(v)) return [key, v];
  }
  return null;
}

/** `{<source key>: value}`, unwrapped when the only key is `input(s)` holding a dict (the reference's rule). */
export function extractInputs(tree: Record<string, unknown>): Record<string, unknown> {
  const hit = firstPresent(tree, INPUT_KEYS);
  if (!hit) return {};
  const [key, value] = hit;
  if ((key === 'input' || key === 'inputs') && isObject(value)) return value;
  return { [key]: value };
}

/** Like inputs; `output(s)` is unwrapped whatever its type. Null when the span carries no output. */
export function extractOutput(tree: Record<string, unknown>): unknown {
  const hit = firstPresent(tree, OUTPUT_KEYS);
  if (!hit) return null;
  const [key, value] = hit;
  if (key === 'output' || key === 'outputs') return value;
  // The AI SDK's tool result is JSON text (a string result quoted): stored as the value it was.
  if (key === 'ai.toolCall.result' && typeof value === 'string') {
    try {
      return { [key]: JSON.parse(value) as unknown };
    } catch {
      return { [key]: value };
    }
  }
  return { [key]: value };
}

function toInt(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) {
    const n = Number(v.trim());
    return Number.isSafeInteger(n) ? n : v;
  }
  return v;
}

/** Token counts under the reference's LLMUsageSchema names, total computed when missing, `requests: 1`. */
export function extractUsage(tree: Record<string, unknown>): Record<string, unknown> | null {
  const usage: Record<string, unknown> = {};
  for (const [name, keys] of Object.entries(USAGE_KEYS)) {
    const hit = firstPresent(tree, keys);
    if (hit) usage[name] = toInt(hit[1]);
  }
  if (Object.keys(usage).length === 0) return null;
  for (const [kept, dropped] of SAME_COUNT) if (usage[kept] !== undefined) Reflect.deleteProperty(usage, dropped);
  const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
  if (usage.total_tokens === undefined) {
    if (int(usage.prompt_tokens) && int(usage.completion_tokens)) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    else if (int(usage.input_tokens) && int(usage.output_tokens)) usage.total_tokens = usage.input_tokens + usage.output_tokens;
  }
  usage.requests = 1;
  return usage;
}

/** The mapped call attributes (system, kind, model, ...) plus `wandb.attributes` merged at the root. */
export function extractAttributes(tree: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, keys] of Object.entries(ATTRIBUTE_KEYS)) {
    const hit = firstPresent(tree, keys);
    if (hit) out[name] = hit[1];
  }
  const extra = getPath(tree, 'wandb.attributes');
  // setOwn: a JSON-parsed `__proto__` key must stay data, never become a prototype.
  if (isObject(extra)) for (const k of Object.keys(extra)) setOwn(out, k, extra[k]);
  return out;
}

/** The model name usage is keyed by. */
export function modelName(tree: Record<string, unknown>): string | null {
  const hit = firstPresent(tree, ATTRIBUTE_KEYS.model!);
  return hit && typeof hit[1] === 'string' ? hit[1] : null;
}

export interface WandbKeys {
  displayName: string | null;
  threadId: string | null;
  /** true/false when the span says so; null when it does not. */
  isTurn: boolean | null;
  runId: string | null;
  runStep: number | null;
  runStepEnd: number | null;
}

const str = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null;
const step = (v: unknown): number | null => {
  const n = toInt(v);
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
};

/**
 * The AI SDK's `ai.telemetry.functionId`, on the operation spans (`ai.generateText`,
 * `ai.streamObject`…): the name the user gave the call. The model calls and tool calls under them
 * carry it too, and keep their own names (`ai.generateText.doGenerate`, `ai.toolCall`).
 */
function aiSdkFunctionId(tree: Record<string, unknown>): string | null {
  const op = getPath(tree, 'ai.operationId');
  if (typeof op !== 'string' || op.split('.').length !== 2 || op === 'ai.toolCall') return null;
  return str(getPath(tree, 'ai.telemetry.functionId'));
}

export function extractWandbKeys(tree: Record<string, unknown>): WandbKeys {
  const thread = firstPresent(tree, THREAD_KEYS);
  const isTurnRaw = getPath(tree, 'wandb.is_turn');
  return {
    displayName: (str(getPath(tree, 'wandb.display_name')) ?? aiSdkFunctionId(tree))?.slice(0, 1024) ?? null,
    threadId: thread ? str(thread[1]) : null,
    isTurn:
      isTurnRaw === undefined || isTurnRaw === null
        ? getPath(tree, 'gcp.vertex.agent.session_id') !== undefined
          ? true
          : null
        : truthy(isTurnRaw) && isTurnRaw !== 'false',
    runId: str(getPath(tree, 'wandb.wb_run_id')),
    runStep: step(getPath(tree, 'wandb.wb_run_step')),
    runStepEnd: step(getPath(tree, 'wandb.wb_run_step_end')),
  };
}
