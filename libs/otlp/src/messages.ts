import { getPath } from './attributes';
import { isResponsesInput, isResponsesResponse, responsesChoices, responsesMessages } from './responses-items';
import { isObject, type Loose } from './values';

/**
 * One reading of a span's conversation, whatever convention carried it: OpenAI chat messages
 * (`{role, content, tool_calls?, tool_call_id?}`), the format the UI, analytics and playground
 * read. Sources: OpenInference `llm.input_messages`/`llm.output_messages`, the GenAI semconv
 * `gen_ai.input.messages`/`gen_ai.output.messages` (parts) with `gen_ai.system_instructions`,
 * OpenLLMetry's `gen_ai.prompt`/`gen_ai.completion` lists, the Vercel AI SDK's `ai.prompt` /
 * `ai.response`, and Responses API items (`input.value`
 * holding input items or a request with them, `output.value` holding a response).
 */
export interface ChatMessage {
  role: string;
  content: string | unknown[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface ToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatChoice {
  index: number;
  message: ChatMessage;
  finish_reason: string | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Tool-call arguments are a JSON string in OpenAI's format; attribute expansion parsed them. */
const argumentsText = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '{}' : JSON.stringify(v));

/** Content as OpenAI sends it: a string when it is all text, else the list of parts. */
function contentOf(parts: unknown[]): string | unknown[] | null {
  if (parts.length === 0) return null;
  if (parts.every((p) => isObject(p) && p.type === 'text' && typeof p.text === 'string')) {
    return parts.map((p) => (p as { text: string }).text).join('');
  }
  return parts;
}

function toolCallOf(id: unknown, name: unknown, args: unknown): ToolCall {
  const call: ToolCall = { type: 'function', function: { name: str(name) ?? '', arguments: argumentsText(args) } };
  const callId = str(id);
  if (callId) call.id = callId;
  return call;
}

function withToolCalls(m: ChatMessage, calls: ToolCall[]): ChatMessage {
  if (calls.length > 0) m.tool_calls = calls;
  return m;
}

/** OpenInference: `[{message: {role, content | contents[].message_content, tool_calls[].tool_call, tool_call_id, name}}]`. */
function fromOpenInference(list: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const item of list) {
    const m = isObject(item) && isObject(item.message) ? item.message : null;
    if (!m) continue;
    let content: string | unknown[] | null = typeof m.content === 'string' ? m.content : null;
    if (content === null && Array.isArray(m.contents)) {
      content = contentOf(
        m.contents.map((c) => {
          const mc = isObject(c) && isObject(c.message_content) ? c.message_content : {};
          if (mc.type === 'text' || typeof mc.text === 'string') return { type: 'text', text: String(mc.text ?? '') };
          if (mc.type === 'image') return { type: 'image_url', image_url: { url: String(getPath(mc, 'image.image.url') ?? '') } };
          return mc;
        }),
      );
    }
    const calls = Array.isArray(m.tool_calls)
      ? m.tool_calls.map((t) => {
          const tc = isObject(t) && isObject(t.tool_call) ? t.tool_call : {};
          const fn = isObject(tc.function) ? tc.function : {};
          return toolCallOf(tc.id, fn.name, fn.arguments);
        })
      : [];
    const msg: ChatMessage = withToolCalls({ role: str(m.role) ?? 'user', content }, calls);
    if (str(m.tool_call_id)) msg.tool_call_id = str(m.tool_call_id);
    if (str(m.name)) msg.name = str(m.name);
    out.push(msg);
  }
  return out;
}

/**
 * GenAI semconv parts: `[{role, parts: [{type: text|tool_call|tool_call_response|…}], finish_reason?}]`.
 * A message holding tool responses becomes one OpenAI `tool` message per response.
 */
function fromGenAi(list: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of list) {
    if (!isObject(m)) continue;
    const role = str(m.role) ?? 'user';
    const parts = Array.isArray(m.parts) ? m.parts.filter(isObject) : [];
    const content: unknown[] = [];
    const calls: ToolCall[] = [];
    for (const p of parts) {
      if (p.type === 'text') content.push({ type: 'text', text: typeof p.content === 'string' ? p.content : JSON.stringify(p.content) });
      else if (p.type === 'tool_call') calls.push(toolCallOf(p.id, p.name, p.arguments));
      else if (p.type === 'tool_call_response') {
        const response = typeof p.response === 'string' ? p.response : JSON.stringify(p.response ?? null);
        const tool: ChatMessage = { role: 'tool', content: response };
        if (str(p.id)) tool.tool_call_id = str(p.id);
        out.push(tool);
      } else content.push(p);
    }
    if (content.length === 0 && calls.length === 0 && parts.some((p) => p.type === 'tool_call_response')) continue;
    out.push(withToolCalls({ role, content: contentOf(content) }, calls));
  }
  return out;
}

/** OpenLLMetry (and any list already in OpenAI's shape): `[{role, content, tool_calls[{id, name, arguments}]}]`. */
function fromOpenAiLike(list: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of list) {
    if (!isObject(m)) continue;
    const calls = Array.isArray(m.tool_calls)
      ? m.tool_calls.filter(isObject).map((t) => {
          const fn = isObject(t.function) ? t.function : t;
          return toolCallOf(t.id, fn.name, fn.arguments);
        })
      : [];
    const content =
      typeof m.content === 'string' || Array.isArray(m.content) ? m.content : m.content == null ? null : JSON.stringify(m.content);
    const msg: ChatMessage = withToolCalls({ role: str(m.role) ?? 'assistant', content }, calls);
    if (str(m.tool_call_id)) msg.tool_call_id = str(m.tool_call_id);
    if (str(m.name)) msg.name = str(m.name);
    out.push(msg);
  }
  return out;
}

/**
 * A flattened list: an array, or the object attribute expansion leaves when the indexes do not
 * start at 0 (OpenInference numbers input messages from 1 when there are no instructions, index
 * 0 being theirs), read in index order. Null for anything else.
 */
function indexedList(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  if (keys.length === 0 || !keys.every((k) => /^(0|[1-9]\d{0,8})$/.test(k))) return null;
  return keys
    .map(Number)
    .sort((a, b) => a - b)
    .map((i) => v[String(i)]);
}

/** Responses API input items in `input.value`: the items, or a request holding them (`{input, instructions}`). */
function responsesInputOf(tree: Loose): ChatMessage[] | null {
  const v = getPath(tree, 'input.value');
  if (isResponsesInput(v)) return responsesMessages({ input: v }) as unknown as ChatMessage[];
  if (isObject(v) && typeof v.model === 'string' && (isResponsesInput(v.input) || typeof v.input === 'string')) {
    return responsesMessages({
      input: v.input,
      instructions: typeof v.instructions === 'string' ? v.instructions : null,
    }) as unknown as ChatMessage[];
  }
  return null;
}

/** An AI SDK tool result's `output` (`{type: text|json|error-text|…, value}`) as the tool message's text. */
function aiToolOutput(o: unknown): string {
  if (isObject(o) && 'value' in o) return typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? null);
  return typeof o === 'string' ? o : JSON.stringify(o ?? null);
}

/**
 * The Vercel AI SDK's model messages (`ai.prompt.messages`): content a string or parts
 * (`text`, `tool-call` {toolCallId, toolName, input}, `tool-result` {toolCallId, output}, files…).
 * A tool message becomes one OpenAI `tool` message per result.
 */
function fromAiSdk(list: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of list) {
    if (!isObject(m)) continue;
    const role = str(m.role) ?? 'user';
    if (typeof m.content === 'string') {
      out.push({ role, content: m.content });
      continue;
    }
    const parts = Array.isArray(m.content) ? m.content.filter(isObject) : [];
    const content: unknown[] = [];
    const calls: ToolCall[] = [];
    for (const p of parts) {
      if (p.type === 'text' || p.type === 'reasoning') content.push({ type: p.type, text: typeof p.text === 'string' ? p.text : '' });
      else if (p.type === 'tool-call') calls.push(toolCallOf(p.toolCallId, p.toolName, p.input ?? p.args));
      else if (p.type === 'tool-result') {
        const tool: ChatMessage = { role: 'tool', content: aiToolOutput(p.output ?? p.result) };
        if (str(p.toolCallId)) tool.tool_call_id = str(p.toolCallId);
        out.push(tool);
      } else content.push(p);
    }
    if (content.length === 0 && calls.length === 0 && parts.some((p) => p.type === 'tool-result')) continue;
    out.push(withToolCalls({ role, content: contentOf(content) }, calls));
  }
  return out;
}

/** The AI SDK's prompt (`ai.prompt`): `{system?, prompt}` or `{system?, messages}` on the operation spans, `{messages}` on the model calls. */
function aiSdkPrompt(tree: Loose): ChatMessage[] | null {
  const prompt = getPath(tree, 'ai.prompt');
  if (!isObject(prompt)) return null;
  const out: ChatMessage[] = [];
  if (typeof prompt.system === 'string' && prompt.system !== '') out.push({ role: 'system', content: prompt.system });
  if (Array.isArray(prompt.messages)) out.push(...fromAiSdk(prompt.messages));
  else if (typeof prompt.prompt === 'string') out.push({ role: 'user', content: prompt.prompt });
  else if (Array.isArray(prompt.prompt)) out.push(...fromAiSdk(prompt.prompt));
  else return null;
  return out;
}

/** The AI SDK's answer: `ai.response.text` (or `.object`), `ai.response.toolCalls`, `ai.response.finishReason`. */
function aiSdkChoices(tree: Loose): ChatChoice[] | null {
  const r = getPath(tree, 'ai.response');
  if (!isObject(r)) return null;
  const text = typeof r.text === 'string' ? r.text : r.object !== undefined ? JSON.stringify(r.object) : null;
  const calls = Array.isArray(r.toolCalls)
    ? r.toolCalls.filter(isObject).map((t) => toolCallOf(t.toolCallId, t.toolName, t.input ?? t.args))
    : [];
  if (text === null && calls.length === 0) return null;
  const finish = str(r.finishReason)?.replace(/-/g, '_') ?? null;
  return [{ index: 0, message: withToolCalls({ role: 'assistant', content: text }, calls), finish_reason: finish }];
}

const nonEmpty = <T>(list: T[]): T[] | null => (list.length > 0 ? list : null);

/** The GenAI `gen_ai.system_instructions` (parts, or a plain string) as a leading system message. */
function systemInstructions(tree: Loose): ChatMessage | null {
  const v = getPath(tree, 'gen_ai.system_instructions');
  if (typeof v === 'string' && v !== '') return { role: 'system', content: v };
  if (!Array.isArray(v)) return null;
  const text = v
    .map((p) => (isObject(p) && typeof p.content === 'string' ? p.content : typeof p === 'string' ? p : ''))
    .filter(Boolean)
    .join('\n');
  return text ? { role: 'system', content: text } : null;
}

/** The span's input conversation as OpenAI chat messages, or null when it carries none. */
export function inputMessages(tree: Loose): ChatMessage[] | null {
  const oi = indexedList(getPath(tree, 'llm.input_messages'));
  if (oi) return nonEmpty(fromOpenInference(oi));
  const genai = getPath(tree, 'gen_ai.input.messages');
  if (Array.isArray(genai)) {
    const system = systemInstructions(tree);
    return nonEmpty([...(system ? [system] : []), ...fromGenAi(genai)]);
  }
  const prompt = getPath(tree, 'gen_ai.prompt');
  if (Array.isArray(prompt) && prompt.every((m) => isObject(m) && ('role' in m || 'content' in m))) return nonEmpty(fromOpenAiLike(prompt));
  const ai = aiSdkPrompt(tree);
  if (ai) return nonEmpty(ai);
  const responses = responsesInputOf(tree);
  return responses ? nonEmpty(responses) : null;
}

/** The span's output as OpenAI chat choices, or null when it carries none. */
export function outputChoices(tree: Loose): ChatChoice[] | null {
  const asChoices = (msgs: ChatMessage[], finish: (i: number) => unknown): ChatChoice[] | null =>
    nonEmpty(msgs.map((message, index) => ({ index, message, finish_reason: str(finish(index)) ?? null })));
  const oi = indexedList(getPath(tree, 'llm.output_messages'));
  if (oi) return asChoices(fromOpenInference(oi), () => undefined);
  const genai = getPath(tree, 'gen_ai.output.messages');
  if (Array.isArray(genai)) {
    const msgs = genai.filter(isObject);
    return asChoices(fromGenAi(msgs), (i) => msgs[i]?.finish_reason);
  }
  const completion = getPath(tree, 'gen_ai.completion');
  if (Array.isArray(completion) && completion.every(isObject)) {
    return asChoices(fromOpenAiLike(completion), (i) => (completion[i] as Loose).finish_reason);
  }
  const ai = aiSdkChoices(tree);
  if (ai) return ai;
  const response = getPath(tree, 'output.value');
  if (isResponsesResponse(response)) return nonEmpty(responsesChoices(response) as unknown as ChatChoice[]);
  return null;
}

/** Chat messages (not OpenAI's shape) from old-style GenAI event bodies; shared with the logs path. */
export function messageFromGenAiEvent(name: string, body: unknown): { input?: ChatMessage; choice?: ChatChoice } | null {
  const b = isObject(body) ? body : typeof body === 'string' ? { content: body } : {};
  const role = {
    'gen_ai.system.message': 'system',
    'gen_ai.user.message': 'user',
    'gen_ai.assistant.message': 'assistant',
    'gen_ai.tool.message': 'tool',
  }[name];
  if (role) {
    const [m] = fromOpenAiLike([{ ...b, role: str(b.role) ?? role, tool_call_id: b.tool_call_id ?? (role === 'tool' ? b.id : undefined) }]);
    return m ? { input: m } : null;
  }
  if (name === 'gen_ai.choice') {
    const message = isObject(b.message) ? b.message : {};
    const [m] = fromOpenAiLike([{ ...message, role: str(message.role) ?? 'assistant', tool_calls: b.tool_calls ?? message.tool_calls }]);
    return m
      ? { choice: { index: typeof b.index === 'number' ? b.index : 0, message: m, finish_reason: str(b.finish_reason) ?? null } }
      : null;
  }
  return null;
}
