/**
 * Folds streamed chat.completion.chunk objects into the chat.completion they add up to, as
 * the reference does when it records a streamed completion: per choice index, content and
 * reasoning joined, tool-call fragments merged by their index with arguments concatenated,
 * calls that never got an id or a name dropped.
 */

type Json = Record<string, unknown>;

interface ToolCallAcc {
  id?: string;
  type: string;
  name?: string;
  arguments: string;
}

interface ChoiceAcc {
  role: string;
  content: string;
  reasoning: string;
  hasReasoning: boolean;
  toolCalls: Map<number, ToolCallAcc>;
  finishReason: unknown;
}

export class StreamAggregator {
  private id: unknown = null;
  private created: unknown = null;
  private systemFingerprint: unknown = null;
  private serviceTier: unknown = null;
  private usage: Json | null = null;
  private readonly choices = new Map<number, ChoiceAcc>();

  constructor(private readonly model: string) {}

  add(chunk: Json): void {
    this.id ??= chunk.id ?? null;
    this.created ??= chunk.created ?? null;
    if (chunk.system_fingerprint != null) this.systemFingerprint = chunk.system_fingerprint;
    if (chunk.service_tier != null) this.serviceTier = chunk.service_tier;
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage as Json;
    for (const raw of (Array.isArray(chunk.choices) ? chunk.choices : []) as Json[]) {
      const index = typeof raw.index === 'number' ? raw.index : 0;
      let acc = this.choices.get(index);
      if (!acc) {
        acc = { role: 'assistant', content: '', reasoning: '', hasReasoning: false, toolCalls: new Map(), finishReason: null };
        this.choices.set(index, acc);
      }
      const delta = (raw.delta ?? {}) as Json;
      if (typeof delta.role === 'string') acc.role = delta.role;
      if (typeof delta.content === 'string') acc.content += delta.content;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string') {
        acc.reasoning += reasoning;
        acc.hasReasoning = true;
      }
      for (const [i, t] of ((Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as Json[]).entries()) {
        const ti = typeof t.index === 'number' ? t.index : i;
        let tc = acc.toolCalls.get(ti);
        if (!tc) acc.toolCalls.set(ti, (tc = { type: 'function', arguments: '' }));
        if (typeof t.id === 'string') tc.id = t.id;
        const fn = (t.function ?? {}) as Json;
        if (typeof fn.name === 'string') tc.name = fn.name;
        if (typeof fn.arguments === 'string') tc.arguments += fn.arguments;
      }
      if (raw.finish_reason != null) acc.finishReason = raw.finish_reason;
    }
  }

  get usageSeen(): Json | null {
    return this.usage;
  }

  result(): Json {
    const choices = [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => {
        const tools = [...c.toolCalls.entries()]
          .sort(([a], [b]) => a - b)
          .filter(([, t]) => t.id && t.name)
          .map(([, t]) => ({ id: t.id, type: t.type, function: { name: t.name, arguments: t.arguments } }));
        return {
          index,
          message: {
            role: c.role,
            content: tools.length > 0 && c.content === '' ? null : c.content,
            tool_calls: tools.length > 0 ? tools : null,
            function_call: null,
            reasoning_content: c.hasReasoning ? c.reasoning : null,
          },
          finish_reason: c.finishReason,
        };
      });
    return {
      id: this.id,
      created: this.created,
      model: this.model,
      object: 'chat.completion',
      system_fingerprint: this.systemFingerprint,
      choices,
      usage: this.usage,
      service_tier: this.serviceTier,
    };
  }
}
