import type { TextCompletionReq } from '@weft/api';
import { validateCompletionRequest, validateCompletionSampling } from './chat-validation';
import type { CompletionKind } from './completion-front';
import { normalizeUsage, type ResponseIdentity } from './normalize';

export const TEXT_COMPLETION_OP_NAME = 'weave.text_completions_create';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** One choice of a text completion in vLLM's shape (`text`, `logprobs`, `finish_reason`, `stop_reason`). */
function textChoice(raw: unknown, i: number, whole: boolean): Json {
  const c = obj(raw);
  const out: Json = {
    index: typeof c.index === 'number' ? c.index : i,
    text: typeof c.text === 'string' ? c.text : '',
    logprobs: c.logprobs ?? null,
    finish_reason: c.finish_reason ?? null,
    stop_reason: c.stop_reason ?? c.matched_stop ?? null,
  };
  if (whole) {
    out.prompt_logprobs = c.prompt_logprobs ?? null;
    out.token_ids = c.token_ids ?? null;
  } else if (c.token_ids !== undefined) out.token_ids = c.token_ids;
  return out;
}

/** A whole (non-streamed) text_completion, whatever the server's dialect. */
export function normalizeTextCompletion(raw: unknown, ident: ResponseIdentity): Json {
  const r = obj(raw);
  return {
    id: ident.id,
    object: 'text_completion',
    created: typeof r.created === 'number' ? r.created : ident.created,
    model: ident.model,
    choices: arr(r.choices).map((c, i) => textChoice(c, i, true)),
    service_tier: r.service_tier ?? null,
    system_fingerprint: r.system_fingerprint ?? null,
    usage: normalizeUsage(r.usage),
    kv_transfer_params: r.kv_transfer_params ?? null,
  };
}

/** One streamed text_completion chunk; usage split off as for chat chunks. */
export function normalizeTextChunk(raw: Json, ident: ResponseIdentity): { chunk: Json; usage: Json | null; hasChoices: boolean } {
  const choices = arr(raw.choices).map((c, i) => textChoice(c, i, false));
  const chunk: Json = {
    id: ident.id,
    object: 'text_completion',
    created: typeof raw.created === 'number' ? raw.created : ident.created,
    model: ident.model,
    choices,
  };
  return { chunk, usage: normalizeUsage(raw.usage), hasChoices: choices.length > 0 };
}

/** Streamed text chunks folded into the text_completion they add up to (per choice index). */
class TextAggregator {
  private id: unknown = null;
  private created: unknown = null;
  private usage: Json | null = null;
  private readonly choices = new Map<number, { text: string; finishReason: unknown; stopReason: unknown }>();

  constructor(private readonly model: string) {}

  add(chunk: Json): void {
    this.id ??= chunk.id ?? null;
    this.created ??= chunk.created ?? null;
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage as Json;
    for (const raw of arr(chunk.choices)) {
      const c = obj(raw);
      const index = typeof c.index === 'number' ? c.index : 0;
      let acc = this.choices.get(index);
      if (!acc) this.choices.set(index, (acc = { text: '', finishReason: null, stopReason: null }));
      if (typeof c.text === 'string') acc.text += c.text;
      if (c.finish_reason != null) acc.finishReason = c.finish_reason;
      if (c.stop_reason != null) acc.stopReason = c.stop_reason;
    }
  }

  result(): Json {
    const choices = [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ index, text: c.text, logprobs: null, finish_reason: c.finishReason, stop_reason: c.stopReason }));
    return { id: this.id, object: 'text_completion', created: this.created, model: this.model, choices, usage: this.usage };
  }
}

/** `POST /v1/completions` (legacy): a prompt in, a text_completion (or its chunks) out. */
export const textCompletionKind: CompletionKind<TextCompletionReq> = {
  kind: 'completion',
  opName: TEXT_COMPLETION_OP_NAME,
  idPrefix: 'cmpl',
  chunkObject: 'text_completion',
  path: '/completions',
  validate: validateCompletionRequest,
  validateSampling: validateCompletionSampling,
  normalizeWhole: normalizeTextCompletion,
  normalizeChunk: normalizeTextChunk,
  aggregator: (model) => new TextAggregator(model),
};
