import { JsonView } from './json-view';

/** One chat message, whatever the dialect it came in (OpenAI chat, GenAI semconv parts, Anthropic blocks). */
export interface ChatMessage {
  role: string;
  parts: MessagePart[];
}
export type MessagePart =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; name: string; args: unknown; id?: string }
  | { kind: 'tool_result'; value: unknown; id?: string }
  | { kind: 'other'; value: unknown };

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function partsOf(m: Record<string, unknown>): MessagePart[] {
  const out: MessagePart[] = [];
  const content = m.content;
  if (typeof content === 'string') out.push({ kind: 'text', text: content });
  else if (Array.isArray(content)) for (const c of content) out.push(partOf(c));
  if (Array.isArray(m.parts)) for (const c of m.parts) out.push(partOf(c));
  if (Array.isArray(m.tool_calls)) {
    for (const t of m.tool_calls) {
      const fn = isObj(t) && isObj(t.function) ? t.function : {};
      out.push({
        kind: 'tool_call',
        name: String(fn.name ?? '?'),
        args: parseMaybe(fn.arguments),
        id: isObj(t) ? (t.id as string) : undefined,
      });
    }
  }
  if (m.role === 'tool' && typeof m.tool_call_id === 'string' && out.length === 1 && out[0]!.kind === 'text') {
    return [{ kind: 'tool_result', value: parseMaybe((out[0] as { text: string }).text), id: m.tool_call_id }];
  }
  return out;
}

function partOf(c: unknown): MessagePart {
  if (typeof c === 'string') return { kind: 'text', text: c };
  if (!isObj(c)) return { kind: 'other', value: c };
  const type = c.type;
  if ((type === 'text' || type === 'input_text' || type === 'output_text') && typeof (c.content ?? c.text) === 'string')
    return { kind: 'text', text: String(c.content ?? c.text) };
  if (type === 'tool_call' || type === 'tool_use' || type === 'function_call')
    return { kind: 'tool_call', name: String(c.name ?? '?'), args: parseMaybe(c.arguments ?? c.input), id: c.id as string | undefined };
  if (type === 'tool_call_response' || type === 'tool_result')
    return { kind: 'tool_result', value: c.response ?? c.result ?? c.content, id: (c.id ?? c.tool_use_id) as string | undefined };
  return { kind: 'other', value: c };
}

function parseMaybe(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** A list of chat messages, or null when `v` is not one. */
export function asMessages(v: unknown): ChatMessage[] | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  if (!v.every((m) => isObj(m) && typeof m.role === 'string' && ('content' in m || 'parts' in m || 'tool_calls' in m))) return null;
  return (v as Record<string, unknown>[]).map((m) => ({ role: String(m.role), parts: partsOf(m) }));
}

/**
 * The conversation inside a call's inputs or output: OpenAI `messages` / `choices[].message`,
 * GenAI semconv `gen_ai.input.messages` / `gen_ai.output.messages`, `gen_ai.prompt`/`completion`
 * lists. Null when there is none (the caller shows JSON).
 */
export function findConversation(v: unknown): ChatMessage[] | null {
  const direct = asMessages(v);
  if (direct) return direct;
  if (!isObj(v)) return null;
  for (const key of [
    'messages',
    'gen_ai.input.messages',
    'gen_ai.output.messages',
    'gen_ai.prompt',
    'gen_ai.completion',
    'llm.input_messages',
    'llm.output_messages',
  ]) {
    const m = asMessages(v[key]);
    if (m) return m;
  }
  if (Array.isArray(v.choices)) {
    const msgs = v.choices.map((c) => (isObj(c) ? c.message : null)).filter(isObj);
    const m = asMessages(msgs);
    if (m) return m;
  }
  if (v.type === 'message' && typeof v.role === 'string') return asMessages([v]);
  return null;
}

export function Conversation({ messages }: { messages: ChatMessage[] }) {
  return (
    <div class="conversation">
      {messages.map((m, i) => (
        <div key={i} class={`message role-${m.role}`}>
          <div class="message-role">{m.role}</div>
          <div class="message-body">
            {m.parts.length === 0 ? <span class="muted">(empty)</span> : null}
            {m.parts.map((p, j) => {
              switch (p.kind) {
                case 'text':
                  return (
                    <p key={j} class="message-text">
                      {p.text}
                    </p>
                  );
                case 'tool_call':
                  return (
                    <div key={j} class="tool-call">
                      <span class="tool-label">tool call</span> <code>{p.name}</code>
                      <JsonView value={p.args} />
                    </div>
                  );
                case 'tool_result':
                  return (
                    <div key={j} class="tool-call">
                      <span class="tool-label">tool result</span>
                      <JsonView value={p.value} />
                    </div>
                  );
                default:
                  return <JsonView key={j} value={p.value} />;
              }
            })}
          </div>
        </div>
      ))}
    </div>
  );
}
