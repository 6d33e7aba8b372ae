/**
 * The OTLP benchmarks' span mix (bench:otlp, bench:ingest-engine's `BENCH_ROWS=otlp`): a GenAI
 * agent, per trace one agent span (OpenInference input/output, session), three chat spans (GenAI
 * semconv messages ~1 KB, usage, models), two tool spans (OpenLLMetry input/output) and one
 * retriever span, with fresh random ids.
 */
import { randomBytes } from 'node:crypto';

/** The trace and span ids agentTrace made since this was last emptied (bench:otlp finds them in a body to replace them). */
export const madeIds: Buffer[] = [];

type Attr = { key: string; value: Record<string, unknown> };
const s = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
const i = (key: string, v: number): Attr => ({ key, value: { intValue: String(v) } });
const d = (key: string, v: number): Attr => ({ key, value: { doubleValue: v } });

const PROMPT = 'Summarise the following support ticket and propose a next step. '.repeat(8);
let clock = 1_714_564_800_000_000_000n;

/** One agent trace (7 spans) with ids as bytes (protobuf) or hex (JSON). */
function agentTrace(asBytes: boolean): Record<string, unknown>[] {
  const id = (n: number) => {
    const bytes = randomBytes(n);
    madeIds.push(bytes);
    return asBytes ? bytes : bytes.toString('hex');
  };
  const traceId = id(16);
  const root = id(8);
  const t0 = (clock += 5_000_000_000n);
  const span = (spanId: unknown, parent: unknown, name: string, startMs: number, durMs: number, attributes: Attr[], extra = {}) => ({
    traceId,
    spanId,
    parentSpanId: parent,
    name,
    kind: 1,
    startTimeUnixNano: String(t0 + BigInt(startMs) * 1_000_000n + 123n),
    endTimeUnixNano: String(t0 + BigInt(startMs + durMs) * 1_000_000n + 456n),
    attributes,
    status: { code: 1 },
    ...extra,
  });
  const chat = (n: number) =>
    span(id(8), root, 'chat gpt-4o', 100 + n * 900, 850, [
      s('gen_ai.operation.name', 'chat'),
      s('gen_ai.system', 'openai'),
      s('gen_ai.request.model', 'gpt-4o'),
      s('gen_ai.response.model', 'gpt-4o-2024-08-06'),
      d('gen_ai.request.temperature', 0.2),
      i('gen_ai.request.max_tokens', 512),
      i('gen_ai.usage.input_tokens', 900 + n),
      i('gen_ai.usage.output_tokens', 120 + n),
      s(
        'gen_ai.input.messages',
        JSON.stringify([
          { role: 'system', parts: [{ type: 'text', content: 'You are a support agent.' }] },
          { role: 'user', parts: [{ type: 'text', content: PROMPT }] },
        ]),
      ),
      s(
        'gen_ai.output.messages',
        JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'text', content: 'The customer cannot log in; reset the password and follow up.' }],
            finish_reason: 'stop',
          },
        ]),
      ),
    ]);
  const tool = (n: number) =>
    span(id(8), root, 'tool lookup_customer', 2900 + n * 100, 80, [
      s('traceloop.span.kind', 'tool'),
      s('traceloop.entity.name', 'lookup_customer'),
      s('traceloop.entity.input', JSON.stringify({ args: [], kwargs: { customer_id: `c-${n}` } })),
      s('traceloop.entity.output', JSON.stringify({ plan: 'pro', open_tickets: 3 })),
    ]);
  return [
    span(root, undefined, 'support_agent.run', 0, 3500, [
      s('openinference.span.kind', 'AGENT'),
      s('session.id', `sess-${Number(clock % 1000n)}`),
      s('input.value', JSON.stringify({ ticket: PROMPT.slice(0, 200) })),
      s('output.value', 'Password reset link sent.'),
    ]),
    chat(0),
    chat(1),
    chat(2),
    tool(0),
    tool(1),
    span(id(8), root, 'retrieve kb', 50, 40, [
      s('openinference.span.kind', 'RETRIEVER'),
      s('input.value', 'login issues'),
      s('retrieval.documents.0.document.content', 'Reset passwords from the admin page.'),
      s('retrieval.documents.1.document.content', 'Accounts lock after 5 attempts.'),
    ]),
  ];
}

export function exportRequest(spanCount: number, asBytes: boolean): Record<string, unknown> {
  const spans: Record<string, unknown>[] = [];
  while (spans.length < spanCount) spans.push(...agentTrace(asBytes));
  spans.length = spanCount;
  return {
    resourceSpans: [
      {
        resource: { attributes: [s('service.name', 'support-agent'), s('telemetry.sdk.language', 'nodejs')] },
        scopeSpans: [{ scope: { name: 'bench', version: '1.0.0' }, spans }],
      },
    ],
  };
}
