/**
 * The chat reading of a Responses API exchange, recorded beside the request and the answer so
 * that a traced `/v1/responses` call reads as a conversation like a chat completion does:
 * `instructions` + `input` items as OpenAI chat `messages`, the response's output items as
 * `choices[0].message` (text joined, function calls as `tool_calls`).
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

/** `instructions` and `input` as chat messages (function calls and their outputs as assistant tool calls and tool messages). */
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
