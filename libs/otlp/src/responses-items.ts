/**
 * The chat reading of a Responses API exchange, so that it reads as a conversation like a chat
 * completion does: `instructions` + `input` items as OpenAI chat `messages`, the response's
 * output items as `choices[0].message` (text joined, function calls as `tool_calls`). Used by
 * the `/v1/responses` front for the calls it records, and by the span mapping for spans that
 * carry Responses API items (the Agents SDK's `response` spans).
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** A message's content: a string stays one; a list of text parts is joined; anything else is kept as sent. */
function contentOf(content: unknown): unknown {
  if (!Array.isArray(content)) return content ?? null;
  const texts = content.map((p) => {
    const part = obj(p);
    return (part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') && typeof part.text === 'string'
      ? part.text
      : null;
  });
  return texts.every((t) => t !== null) ? texts.join('') : content;
}

const toolCallOf = (item: Json) => ({
  id: item.call_id ?? item.id,
  type: 'function',
  function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}) },
});

/** A reasoning item's summary (or content) texts, joined; null when it has none. */
function reasoningText(item: Json): string | null {
  const texts = [item.summary, item.content]
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .map((p) => obj(p).text)
    .filter((t): t is string => typeof t === 'string' && t !== '');
  return texts.length > 0 ? texts.join('\n') : null;
}

/**
 * `instructions` and `input` as chat messages: function calls and their outputs as assistant
 * tool calls and tool messages; a reasoning item as an assistant message holding one
 * `{type: 'reasoning', text}` part (chat messages have no place of their own for it).
 */
export function responsesMessages(req: { instructions?: string | null; input: unknown }): Json[] {
  const messages: Json[] = [];
  if (typeof req.instructions === 'string') messages.push({ role: 'system', content: req.instructions });
  if (typeof req.input === 'string') {
    messages.push({ role: 'user', content: req.input });
    return messages;
  }
  for (const raw of Array.isArray(req.input) ? req.input : []) {
    const item = obj(raw);
    const type = item.type ?? 'message';
    if (type === 'message') messages.push({ role: item.role, content: contentOf(item.content) });
    else if (type === 'function_call') {
      // Consecutive calls are one assistant turn, as chat completions carry them.
      const last = messages.at(-1);
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) (last.tool_calls as Json[]).push(toolCallOf(item));
      else messages.push({ role: 'assistant', content: null, tool_calls: [toolCallOf(item)] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', content: contentOf(item.output), tool_call_id: item.call_id });
    } else if (type === 'reasoning') {
      const text = reasoningText(item);
      if (text !== null) messages.push({ role: 'assistant', content: [{ type: 'reasoning', text }] });
    }
  }
  return messages;
}

/** A response's output items as one chat choice; an empty list when the response has no output (failed, cut short). */
export function responsesChoices(response: Json): Json[] {
  const output = Array.isArray(response.output) ? response.output.map(obj) : [];
  if (output.length === 0) return [];
  const texts: string[] = [];
  const toolCalls: Json[] = [];
  for (const item of output) {
    if (item.type === 'message') {
      const c = contentOf(item.content);
      if (typeof c === 'string') texts.push(c);
    } else if (item.type === 'function_call') toolCalls.push(toolCallOf(item));
  }
  const incomplete = response.status === 'incomplete';
  return [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: texts.length > 0 ? texts.join('') : null,
        tool_calls: toolCalls.length > 0 ? toolCalls : null,
      },
      finish_reason: toolCalls.length > 0 ? 'tool_calls' : incomplete ? 'length' : 'stop',
    },
  ];
}

const ITEM_TYPES = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);

/**
 * Whether `v` is a list of Responses API input items: every entry an object that is one of the
 * item types, or an untyped `{role, content}` message (the API's shorthand).
 */
export function isResponsesInput(v: unknown): v is unknown[] {
  if (!Array.isArray(v) || v.length === 0) return false;
  let typed = false;
  for (const raw of v) {
    const item = obj(raw);
    if (typeof item.type === 'string') {
      if (!ITEM_TYPES.has(item.type)) return false;
      typed = true;
    } else if (typeof item.role !== 'string' || !('content' in item)) return false;
  }
  // A list of plain {role, content} messages is chat's shape too; only typed items say "Responses".
  return typed;
}

/** Whether `v` is a Responses API response object (`object: 'response'` with its output items). */
export function isResponsesResponse(v: unknown): v is Json {
  const r = obj(v);
  return r.object === 'response' && Array.isArray(r.output);
}
