import { expect } from 'vitest';
import type { Client } from './client';

/**
 * A project for the UI tests, written through the API as clients write it: an SDK-shaped agent
 * trace (root → chat completion with messages and usage → tool call that failed), a thread of
 * three turns, an OTLP GenAI trace, a dataset (table + object) referenced by a call, a project
 * price, and feedback.
 */
export interface Seeded {
  project: string;
  traceId: string;
  rootId: string;
  chatId: string;
  toolId: string;
  threadId: string;
  turnIds: string[];
  otelTraceId: string;
  datasetDigest: string;
  tableDigest: string;
  callCount: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');
const uuid = (n: number) => `0199aaaa-0000-7000-8000-${String(n).padStart(12, '0')}`;

export async function seedUiProject(api: Client, project: string): Promise<Seeded> {
  const t0 = Date.now() - 30 * 60_000;
  const ok = async (path: string, body: unknown) => {
    const r = await api.post(path, body);
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    return r.body;
  };

  // A project price for our own model, so costs come from it, not only from the defaults.
  await ok('/cost/create', { project_id: project, costs: { 'acme-llm': { prompt_token_cost: 0.00001, completion_token_cost: 0.00003 } } });

  // The dataset: a table and a Dataset object pointing at it.
  const rows = Array.from({ length: 30 }, (_, i) => ({ question: `What is ${i} + ${i}?`, answer: String(2 * i) }));
  const table = await ok('/table/create', { table: { project_id: project, rows } });
  const ds = await ok('/obj/create', {
    obj: {
      project_id: project,
      object_id: 'arith-qa',
      val: {
        _type: 'Dataset',
        _class_name: 'Dataset',
        _bases: ['Object', 'BaseModel'],
        name: 'arith-qa',
        rows: `weave:///${project}/table/${table.digest}`,
      },
    },
  });
  const datasetRef = `weave:///${project}/object/arith-qa:${ds.digest}`;

  // The SDK-shaped trace: agent.run → openai.chat.completions.create, search (fails), format_answer.
  const traceId = uuid(900);
  const rootId = uuid(1),
    chatId = uuid(2),
    toolId = uuid(3),
    fmtId = uuid(4);
  const messages = [
    { role: 'system', content: 'You answer arithmetic questions.' },
    { role: 'user', content: 'What is 2 + 2?' },
  ];
  const batch = [
    {
      id: rootId,
      parent: null,
      op: 'agent.run',
      at: 0,
      end: 4200,
      inputs: { question: 'What is 2 + 2?', dataset: datasetRef },
      output: { answer: '4' },
      display: 'Answer a question',
    },
    {
      id: chatId,
      parent: rootId,
      op: 'openai.chat.completions.create',
      at: 100,
      end: 2100,
      inputs: { model: 'gpt-4o', messages },
      output: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: 'The answer is 4.' }, finish_reason: 'stop' }],
      },
      usage: { 'gpt-4o': { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, requests: 1 } },
    },
    {
      id: toolId,
      parent: rootId,
      op: 'search',
      at: 2200,
      end: 3000,
      inputs: { query: '2 + 2' },
      output: null,
      exception: 'TimeoutError: search backend did not answer in 800 ms',
    },
    {
      id: fmtId,
      parent: rootId,
      op: 'format_answer',
      at: 3100,
      end: 4100,
      inputs: { raw: 'The answer is 4.' },
      output: '4',
      usage: { 'acme-llm': { prompt_tokens: 1000, completion_tokens: 200, requests: 1 } },
    },
  ];
  await ok('/call/upsert_batch', {
    batch: batch.flatMap((c) => [
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id: c.id,
            trace_id: traceId,
            parent_id: c.parent,
            op_name: c.op,
            display_name: c.display ?? null,
            started_at: iso(t0 + c.at),
            inputs: c.inputs,
            attributes: { weave: { client_version: '0.52.0', source: 'python-sdk' } },
          },
        },
      },
      {
        mode: 'end',
        req: {
          end: {
            project_id: project,
            id: c.id,
            ended_at: iso(t0 + c.end),
            output: c.output,
            exception: c.exception ?? null,
            summary: c.usage ? { usage: c.usage } : {},
          },
        },
      },
    ]),
  });
  await ok('/feedback/replace', {
    project_id: project,
    svc_ref: `weave:///${project}/call/${rootId}`,
    feedback_type: 'wandb.reaction.1',
    payload: { emoji: '👍' },
    feedback_id: uuid(800),
  });
  await ok('/feedback/replace', {
    project_id: project,
    svc_ref: `weave:///${project}/call/${rootId}`,
    feedback_type: 'wandb.note.1',
    payload: { note: 'correct and fast' },
    feedback_id: uuid(801),
  });

  // A thread of three turns, each a root call with a chat child.
  const threadId = 'support-thread-1';
  const turnIds: string[] = [];
  const questions = ['Hi, my order is late.', 'It is order 1234.', 'Thanks!'];
  const answers = ['Sorry to hear that. What is the order number?', 'Order 1234 ships tomorrow.', 'You are welcome.'];
  const threadBatch: unknown[] = [];
  questions.forEach((q, i) => {
    const turn = uuid(100 + i),
      child = uuid(200 + i),
      tr = uuid(910 + i);
    turnIds.push(turn);
    const at = t0 + 60_000 + i * 20_000;
    const dur = 800 + i * 400;
    threadBatch.push(
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id: turn,
            trace_id: tr,
            op_name: 'support.turn',
            thread_id: threadId,
            turn_id: turn,
            started_at: iso(at),
            inputs: { message: q },
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: project, id: turn, ended_at: iso(at + dur), output: { reply: answers[i] }, summary: {} } } },
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id: child,
            trace_id: tr,
            parent_id: turn,
            op_name: 'openai.chat.completions.create',
            thread_id: threadId,
            turn_id: turn,
            started_at: iso(at + 50),
            inputs: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] },
            attributes: {},
          },
        },
      },
      {
        mode: 'end',
        req: {
          end: {
            project_id: project,
            id: child,
            ended_at: iso(at + dur - 50),
            output: { choices: [{ message: { role: 'assistant', content: answers[i] } }] },
            summary: { usage: { 'gpt-4o-mini': { prompt_tokens: 40 + i, completion_tokens: 12, requests: 1 } } },
          },
        },
      },
    );
  });
  await ok('/call/upsert_batch', { batch: threadBatch });

  // An OTLP GenAI trace (OTLP/JSON on the standard path): invoke_agent → chat (tool call) → execute_tool.
  const otelTraceId = '5b8efff798038103d269b633813fc60c';
  const ns = (ms: number) => String(BigInt(t0 + 120_000 + ms) * 1_000_000n);
  const attr = (key: string, v: string | number) => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });
  const spans = [
    {
      spanId: 'a1a1a1a1a1a1a1a1',
      name: 'invoke_agent weather-bot',
      s: 0,
      e: 2600,
      attrs: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'weather-bot')],
    },
    {
      spanId: 'b2b2b2b2b2b2b2b2',
      parent: 'a1a1a1a1a1a1a1a1',
      name: 'chat gpt-4o',
      s: 100,
      e: 1300,
      attrs: [
        attr('gen_ai.operation.name', 'chat'),
        attr('gen_ai.request.model', 'gpt-4o'),
        attr('gen_ai.response.model', 'gpt-4o'),
        attr('gen_ai.usage.input_tokens', 80),
        attr('gen_ai.usage.output_tokens', 25),
        attr('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }])),
        attr(
          'gen_ai.output.messages',
          JSON.stringify([
            { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
          ]),
        ),
      ],
    },
    {
      spanId: 'c3c3c3c3c3c3c3c3',
      parent: 'a1a1a1a1a1a1a1a1',
      name: 'execute_tool get_weather',
      s: 1400,
      e: 2500,
      attrs: [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', 'get_weather'),
        attr('input.value', '{"city": "Paris"}'),
        attr('output.value', '{"temp_c": 18}'),
      ],
    },
  ];
  const otlp = {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'weather-bot')] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: spans.map((s) => ({
              traceId: otelTraceId,
              spanId: s.spanId,
              parentSpanId: s.parent ?? '',
              name: s.name,
              kind: 1,
              startTimeUnixNano: ns(s.s),
              endTimeUnixNano: ns(s.e),
              attributes: s.attrs,
              status: {},
            })),
          },
        ],
      },
    ],
  };
  const r = await api.post('/otel/v1/traces', otlp, { project_id: project });
  expect(r.status, r.text).toBe(200);

  return {
    project,
    traceId,
    rootId,
    chatId,
    toolId,
    threadId,
    turnIds,
    otelTraceId,
    datasetDigest: ds.digest,
    tableDigest: table.digest,
    callCount: batch.length + threadBatch.length / 2 + spans.length,
  };
}
