import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertExportRequest } from '../src/index';

/**
 * Conversion of what the real instrumentations export: fixtures are the OTLP/JSON requests
 * test/instrumentations.test.ts captured from the pinned packages (WEFT_CAPTURE_FIXTURES=1), and
 * hand-written spans for the conventions those runs do not exercise.
 */
const fixture = (name: string) => {
  const r = convertExportRequest(JSON.parse(readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')), { projectId: 'e/p' });
  expect(r.rejectedSpans).toBe(0);
  return r.calls.map((c) => ({ ...c.start, ...c.end }) as any);
};

const T = '5b8efff798038103d269b633813fc60c';
const kv = (key: string, value: unknown) => ({
  key,
  value:
    typeof value === 'string'
      ? { stringValue: value }
      : typeof value === 'boolean'
        ? { boolValue: value }
        : Number.isInteger(value)
          ? { intValue: String(value) }
          : { doubleValue: value },
});
const one = (attrs: [string, unknown][], over: Record<string, unknown> = {}) => {
  const span = {
    traceId: T,
    spanId: 'eee19b7ec3c1b174',
    name: 'op',
    startTimeUnixNano: '1714564800123456789',
    endTimeUnixNano: '1714564801987654321',
    attributes: attrs.map(([k, v]) => kv(k, v)),
    ...over,
  };
  const r = convertExportRequest({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }, { projectId: 'e/p' });
  return { ...r.calls[0]!.start, ...r.calls[0]!.end } as any;
};

const SYSTEM = { role: 'system', content: 'You answer briefly.' };
const USER = { role: 'user', content: 'tools' };
const TOOL_CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

describe('captured from the instrumentations', () => {
  it('openinference-instrumentation-openai 0.1.66: messages, tools, output choices, usage; input.value kept', () => {
    const calls = fixture('openinference');
    const llm = calls.filter((c) => c.attributes.kind === 'LLM');
    expect(llm).toHaveLength(2);
    expect(llm[0].inputs.messages).toEqual([SYSTEM, USER]);
    expect(llm[0].inputs['input.value'].messages).toEqual([SYSTEM, USER]);
    expect(llm[0].output.choices[0].message.tool_calls).toEqual([TOOL_CALL]);
    expect(llm[1].inputs.messages.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
    ]);
    expect(llm[1].output.choices[0].message).toEqual({ role: 'assistant', content: 'Hello from vllm' });
    expect(llm[0].attributes.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ]);
    expect(llm[0].attributes).toMatchObject({ model: 'm-vllm', user: 'user-7', model_parameters: { temperature: 0.5 } });
    expect(llm[0].summary.usage).toEqual({ 'm-vllm': { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, requests: 1 } });
    // The session is set below the app span, which is in the same request: each model call is a turn.
    for (const c of llm) expect([c.thread_id, c.turn_id]).toEqual(['sess-oi', c.id]);
  });

  it('opentelemetry-instrumentation-openai-v2 2.4b0 (latest semconv): parts become OpenAI messages and choices', () => {
    const llm = fixture('genai-span');
    expect(llm).toHaveLength(2);
    expect(llm[0].inputs.messages).toEqual([SYSTEM, USER]);
    expect(llm[0].output.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null, tool_calls: [TOOL_CALL] }, finish_reason: 'tool_calls' },
    ]);
    expect(llm[1].inputs.messages[3]).toEqual({ role: 'tool', content: 'sunny', tool_call_id: 'call_1' });
    expect(llm[1].output.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Hello from vllm' },
      finish_reason: 'stop',
    });
  });

  it('OpenLLMetry opentelemetry-instrumentation-openai 0.62.4 (latest semconv) under a workflow span: tools, messages, choices', () => {
    const calls = fixture('openllmetry');
    const workflow = calls.find((c) => c.parent_id === null)!;
    expect(workflow.attributes).toMatchObject({ kind: 'workflow', workflow: 'weather', entity: 'weather' });
    const llm = calls.filter((c) => c.parent_id === workflow.id);
    expect(llm).toHaveLength(2);
    expect(llm[0].inputs.messages).toEqual([SYSTEM, USER]);
    expect(llm[0].attributes.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: expect.any(Object) } },
    ]);
    expect(llm[0].output.choices[0].message.tool_calls).toEqual([TOOL_CALL]);
    expect(llm[1].output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
  });

  it('openai-agents 0.24 + openinference-instrumentation-openai-agents 2.6: agent, tool, one turn for the run', () => {
    const calls = fixture('agents');
    const root = calls.find((c) => c.parent_id === null);
    expect(calls.every((c) => c.thread_id === 'agents-group-1' && c.turn_id === root.id)).toBe(true);
    expect(calls.find((c) => c.op_name === 'Weather agent').attributes).toMatchObject({ kind: 'AGENT', agent: 'Weather agent' });
    const tool = calls.find((c) => c.attributes.kind === 'TOOL');
    expect(tool.attributes.tool).toMatchObject({ name: 'get_weather', description: 'The weather in a city.' });
    expect(tool.inputs).toEqual({ 'input.value': { city: 'Paris' } });
  });
});

describe('openai-agents without instructions (issue 53, item 1)', () => {
  it('captured: input messages numbered from 1 read as the conversation, on the Responses API and on chat completions', () => {
    const calls = fixture('agents-bare');
    const llm = calls.filter((c) => c.attributes.kind === 'LLM');
    expect(llm).toHaveLength(4);
    for (const [first, second] of [llm.slice(0, 2), llm.slice(2)]) {
      expect(first.inputs.messages).toEqual([USER]);
      expect(second.inputs.messages).toEqual([
        USER,
        { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
        { role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1' },
      ]);
    }
  });

  it('Responses API items in input.value (message, function_call, function_call_output, reasoning) and a response in output.value', () => {
    const items = [
      { role: 'user', content: [{ type: 'input_text', text: 'weather?' }], type: 'message' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'need the tool' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ];
    const response = {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.' }] }],
    };
    const c = one([
      ['openinference.span.kind', 'LLM'],
      ['input.value', JSON.stringify(items)],
      ['output.value', JSON.stringify(response)],
    ]);
    expect(c.inputs.messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'need the tool' }] },
      { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
    ]);
    expect(c.inputs['input.value']).toEqual(items);
    expect(c.output.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Sunny.', tool_calls: null }, finish_reason: 'stop' },
    ]);
    // A request body holding the items, with its instructions.
    const req = one([['input.value', JSON.stringify({ model: 'm', instructions: 'be brief', input: items.slice(0, 1) })]]);
    expect(req.inputs.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
    ]);
    // A list of plain chat messages is not taken for Responses items; an app's own list neither.
    expect(one([['input.value', JSON.stringify([{ role: 'user', content: 'x' }])]]).inputs.messages).toBeUndefined();
    expect(one([['input.value', JSON.stringify([{ type: 'row', a: 1 }])]]).inputs.messages).toBeUndefined();
  });
});

describe('the Vercel AI SDK 6 (issue 53, item 11)', () => {
  it('captured: generations with conversation, answer, tools and usage; tool calls; function ids as names; user and session', () => {
    const calls = fixture('ai-sdk');
    const named = (n: string) => calls.find((c) => c.display_name === n);
    const under = (root: any) => calls.filter((c) => c.parent_id === root.id);
    expect(calls.filter((c) => c.parent_id === null).map((c) => c.display_name)).toEqual(['greet', 'greet-stream', 'weather', 'extract']);
    const usage = { 'm-vllm': { input_tokens: 7, output_tokens: 3, total_tokens: 10, requests: 1 } };
    const [greet] = under(named('greet'));
    expect(greet.inputs.messages).toEqual([
      { role: 'system', content: 'You answer briefly.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(greet.output.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hello from vllm' }, finish_reason: 'stop' }]);
    expect(greet.summary.usage).toEqual(usage);
    expect([greet.attributes.user, greet.thread_id]).toEqual(['user-ai', 'session-ai']);
    const [first, tool, second] = under(named('weather'));
    expect(first.output.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
    ]);
    expect(first.attributes.tools[0].function.name).toBe('get_weather');
    expect(tool.inputs).toEqual({ 'ai.toolCall.args': { city: 'Paris' } });
    expect(tool.output).toEqual({ 'ai.toolCall.result': 'sunny in Paris' });
    expect(tool.attributes.tool).toEqual({ name: 'get_weather', call_id: 'call_1' });
    expect(second.inputs.messages.at(-1)).toEqual({ role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1' });
    // The run's own figures sit on the root (two requests' tokens): own usage subtracts its children's.
    expect(named('weather').summary.usage['m-vllm']).toMatchObject({ input_tokens: 14, output_tokens: 6, total_tokens: 20 });
    // generateObject's model call carries ai.usage.promptTokens and gen_ai.usage.input_tokens: one count.
    expect(under(named('extract'))[0].summary.usage).toEqual(usage);
  });

  it('a count carried under two names is kept under one, whatever the order of the keys', () => {
    const c = one([
      ['ai.usage.promptTokens', 12],
      ['ai.usage.completionTokens', 3],
      ['gen_ai.usage.input_tokens', 12],
      ['gen_ai.usage.output_tokens', 3],
      ['gen_ai.request.model', 'm'],
    ]);
    expect(c.summary.usage).toEqual({ m: { input_tokens: 12, output_tokens: 3, total_tokens: 15, requests: 1 } });
    const ai = one([
      ['ai.usage.inputTokens', 20],
      ['ai.usage.outputTokens', 5],
      ['ai.usage.totalTokens', 25],
      ['ai.usage.cachedInputTokens', 8],
      ['ai.usage.reasoningTokens', 2],
      ['ai.model.id', 'm'],
    ]);
    expect(ai.summary.usage).toEqual({
      m: { input_tokens: 20, output_tokens: 5, total_tokens: 25, cache_read_input_tokens: 8, reasoning_tokens: 2, requests: 1 },
    });
  });
});

describe('conventions not in the captured runs', () => {
  it('GenAI: system instructions, tool definitions, conversation id, agent name, cache-read tokens', () => {
    const c = one([
      ['gen_ai.operation.name', 'chat'],
      ['gen_ai.request.model', 'm'],
      ['gen_ai.system_instructions', '[{"type":"text","content":"be brief"}]'],
      [
        'gen_ai.input.messages',
        '[{"role":"user","parts":[{"type":"text","content":"hi"},{"type":"uri","uri":"http://x/y.png","modality":"image"}]}]',
      ],
      ['gen_ai.tool.definitions', '[{"type":"function","name":"lookup","description":"Look up","parameters":{"type":"object"}}]'],
      ['gen_ai.conversation.id', 'conv-7'],
      ['gen_ai.agent.name', 'Planner'],
      ['gen_ai.usage.input_tokens', 10],
      ['gen_ai.usage.cache_read.input_tokens', 6],
    ]);
    expect(c.inputs.messages).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'uri', uri: 'http://x/y.png', modality: 'image' },
        ],
      },
    ]);
    expect(c.attributes.tools).toEqual([
      { type: 'function', function: { name: 'lookup', description: 'Look up', parameters: { type: 'object' } } },
    ]);
    expect(c.attributes.agent).toBe('Planner');
    expect(c.summary.usage).toEqual({ m: { input_tokens: 10, cache_read_input_tokens: 6, requests: 1 } });
    expect([c.thread_id, c.turn_id]).toEqual(['conv-7', c.id]);
  });

  it('GenAI execute_tool span: the tool and its call id; arguments and result as inputs and output', () => {
    const c = one([
      ['gen_ai.operation.name', 'execute_tool'],
      ['gen_ai.tool.name', 'lookup'],
      ['gen_ai.tool.call.id', 'call_9'],
      ['gen_ai.tool.type', 'function'],
      ['gen_ai.tool.call.arguments', '{"q":"x"}'],
      ['gen_ai.tool.call.result', 'found'],
    ]);
    expect(c.attributes).toEqual({ operation: 'execute_tool', tool: { name: 'lookup', call_id: 'call_9', type: 'function' } });
    expect(c.inputs).toEqual({ 'gen_ai.tool.call.arguments': { q: 'x' } });
    expect(c.output).toEqual({ 'gen_ai.tool.call.result': 'found' });
  });

  it('OpenInference retriever: documents as output.documents; prompt cache reads', () => {
    const c = one([
      ['openinference.span.kind', 'RETRIEVER'],
      ['input.value', 'what is weft'],
      ['retrieval.documents.0.document.id', 'd1'],
      ['retrieval.documents.0.document.content', 'a trace server'],
      ['retrieval.documents.0.document.score', 0.9],
      ['retrieval.documents.1.document.content', 'another'],
      ['llm.token_count.prompt', 5],
      ['llm.token_count.prompt_details.cache_read', 2],
    ]);
    expect(c.output).toEqual({ documents: [{ id: 'd1', content: 'a trace server', score: 0.9 }, { content: 'another' }] });
    expect(c.summary.usage.usage).toMatchObject({ prompt_tokens: 5, cache_read_input_tokens: 2 });
  });

  it('OpenLLMetry: workflow and task names, association properties as user and thread, flattened tool calls', () => {
    const c = one([
      ['traceloop.span.kind', 'task'],
      ['traceloop.workflow.name', 'support'],
      ['traceloop.entity.name', 'answer'],
      ['traceloop.association.properties.session_id', 'chat-3'],
      ['traceloop.association.properties.user_id', 'u-3'],
      ['gen_ai.prompt.0.role', 'user'],
      ['gen_ai.prompt.0.content', 'weather?'],
      ['gen_ai.completion.0.role', 'assistant'],
      ['gen_ai.completion.0.finish_reason', 'tool_calls'],
      ['gen_ai.completion.0.tool_calls.0.id', 'call_2'],
      ['gen_ai.completion.0.tool_calls.0.name', 'get_weather'],
      ['gen_ai.completion.0.tool_calls.0.arguments', '{"city": "Oslo"}'],
      ['llm.request.functions.0.name', 'get_weather'],
      ['llm.request.functions.0.parameters', '{"type": "object"}'],
    ]);
    expect(c.attributes).toMatchObject({ kind: 'task', workflow: 'support', entity: 'answer', user: 'u-3' });
    expect(c.attributes.tools).toEqual([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]);
    expect(c.inputs.messages).toEqual([{ role: 'user', content: 'weather?' }]);
    expect(c.output.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ]);
    expect(c.thread_id).toBe('chat-3');
  });

  it('a span whose own values use the normalized keys keeps them', () => {
    const c = one([
      ['input', '{"messages": [{"role": "user", "content": "mine"}]}'],
      ['llm.input_messages.0.message.role', 'user'],
      ['llm.input_messages.0.message.content', 'openinference'],
    ]);
    expect(c.inputs.messages).toEqual([{ role: 'user', content: 'mine' }]);
  });
});
