import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { REPO_ROOT } from './helpers/paths';
import { ensureInstrumentationClients, ensureOpenLLMetryClients, runInstrumentedClient } from './helpers/python-clients';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * The stock LLM instrumentations (pinned, installed from PyPI into .cache/) run as their users
 * run them: model calls through weft's /v1 front to the model stand-in, spans to weft's OTLP
 * endpoint. Each model call is stored once, as a call with the conversation in OpenAI's shape
 * (inputs.messages, output.choices), the tools offered, model, usage, thread and agent.
 * WEFT_CAPTURE_FIXTURES=1 refreshes libs/otlp/test/fixtures from these runs.
 */
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;
let dir: string;

beforeAll(async () => {
  upstream = await startModelServer();
  dir = newDataDir('instrumentations');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m-vllm'] }] }));
  [weft] = await Promise.all([
    startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } }),
    ensureInstrumentationClients(),
    ensureOpenLLMetryClients(),
  ]);
  api = new Client(weft.url, bearerAuth('test-key'));
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

async function run(mode: string, project: string): Promise<{ out: any; calls: any[] }> {
  const dump = join(dir, `${mode}.json`);
  const r = await runInstrumentedClient('instrumented_openai.py', [mode, weft.url, 'test-key', project, dump], {
    timeoutMs: 180_000,
    ...(mode === 'openllmetry' ? { venv: ensureOpenLLMetryClients } : {}),
  });
  if (r.code !== 0) throw new Error(`instrumented_openai.py ${mode} exited ${r.code}\n${r.stderr}`);
  if (process.env.WEFT_CAPTURE_FIXTURES === '1') copyFileSync(dump, join(REPO_ROOT, 'libs/otlp/test/fixtures', `${mode}.json`));
  const out = JSON.parse(r.stdout);
  // Every span the client exported is a call (flushed, so acknowledged, before the script ends).
  const calls = await api.jsonl<any>('/calls/stream_query', { project_id: project, sort_by: [{ field: 'started_at', direction: 'asc' }] });
  expect(calls).toHaveLength(out.spans);
  expect(JSON.parse(readFileSync(dump, 'utf8')).resourceSpans.length).toBeGreaterThan(0);
  return { out, calls };
}

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const SYSTEM = { role: 'system', content: 'You answer briefly.' };
const USER = { role: 'user', content: 'tools' };
// Arguments come back as compact JSON: attribute expansion parsed the JSON string the span carried.
const TOOL_CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
// The stand-in's answers: a tool call (3 completion tokens counted), then text after the tool result.
const USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, requests: 1 };

/** The two model calls of chat_with_tool: the conversation, output, tools (if sent), model and usage each carries. */
function expectChatWithTool(llm: any[], toolsOnSpan: boolean, usage: Record<string, number>): void {
  expect(llm).toHaveLength(2);
  const [first, second] = llm;
  expect(first.inputs.messages).toEqual([SYSTEM, USER]);
  expect(first.output.choices).toEqual([
    expect.objectContaining({ index: 0, message: expect.objectContaining({ role: 'assistant', tool_calls: [TOOL_CALL] }) }),
  ]);
  expect(second.inputs.messages).toEqual([
    SYSTEM,
    USER,
    { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
    { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
  ]);
  expect(second.output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
  for (const c of llm) {
    expect(c.attributes.tools).toEqual(toolsOnSpan ? [WEATHER] : undefined);
    expect(c.attributes.model).toBe('m-vllm');
    expect(c.summary.usage).toEqual({ 'm-vllm': usage });
  }
}

describe('LLM instrumentations', () => {
  it('openinference-instrumentation-openai: messages, tools, usage; a session below the root makes each model call a turn', async () => {
    const P = 'acme/openinference';
    const { out, calls } = await run('openinference', P);
    expect(out.versions['openinference-instrumentation-openai']).toBe('0.1.66');
    const app = calls.find((c) => c.op_name === 'app');
    const llm = calls.filter((c) => c.attributes.kind === 'LLM');
    expectChatWithTool(llm, true, USAGE);
    // The reference's shape is kept beside the reading: the request body as input.value.
    expect(llm[0].inputs['input.value']).toMatchObject({ model: 'm-vllm', temperature: 0.5 });
    expect(llm[0].attributes.model_parameters).toMatchObject({ temperature: 0.5 });
    for (const c of llm) {
      expect(c).toMatchObject({ parent_id: app.id, thread_id: 'sess-oi', turn_id: c.id });
      expect(c.attributes.user).toBe('user-7');
    }
    expect(app.thread_id).toBeNull();
    const [thread] = await api.jsonl<any>('/threads/stream_query', { project_id: P });
    expect(thread).toMatchObject({ thread_id: 'sess-oi', turn_count: 2, first_turn_id: llm[0].id, last_turn_id: llm[1].id });
  }, 300_000);

  it('opentelemetry-instrumentation-openai-v2 (latest GenAI semconv, content on spans): messages, tools, usage', async () => {
    const { out, calls } = await run('genai-span', 'acme/genai-span');
    expect(out.versions['opentelemetry-instrumentation-openai-v2']).toBe('2.4b0');
    const llm = calls.filter((c) => c.attributes.operation === 'chat');
    // openai-v2 2.4b0 records no gen_ai.tool.definitions (the unit tests map them).
    expectChatWithTool(llm, false, { input_tokens: 7, output_tokens: 3, total_tokens: 10, requests: 1 });
    // The semconv's own parts stay as sent.
    expect(llm[0].inputs['gen_ai.input.messages'][1]).toEqual({ role: 'user', parts: [{ type: 'text', content: 'tools' }] });
  }, 300_000);

  it('OpenLLMetry opentelemetry-instrumentation-openai under a workflow span: messages, tools, usage, the workflow as the parent', async () => {
    const { out, calls } = await run('openllmetry', 'acme/openllmetry');
    expect(out.versions['opentelemetry-instrumentation-openai']).toBe('0.62.4');
    const workflow = calls.find((c) => c.parent_id === null);
    expect(workflow).toMatchObject({ op_name: 'weather.workflow', attributes: { kind: 'workflow' } });
    const llm = calls.filter((c) => c.parent_id === workflow.id);
    // 0.62.4 speaks the latest GenAI semconv (gen_ai.input.messages, tool definitions, input/output tokens).
    expectChatWithTool(llm, true, { input_tokens: 7, output_tokens: 3, total_tokens: 10, requests: 1 });
    expect(llm[0].inputs['gen_ai.input.messages'][1]).toEqual({ role: 'user', parts: [{ type: 'text', content: 'tools' }] });
  }, 300_000);

  it('openai-agents + openinference-instrumentation-openai-agents: agent, tool span, model calls in a thread', async () => {
    const P = 'acme/agents';
    const { out, calls } = await run('agents', P);
    expect(out.versions['openai-agents']).toBe('0.24.0');
    expect(out.answers).toBe('Hello from vllm');
    const agent = calls.find((c) => c.attributes.agent === 'Weather agent');
    expect(agent).toBeDefined();
    const llm = calls.filter((c) => c.attributes.kind === 'LLM');
    expect(llm).toHaveLength(2);
    expect(llm[0].inputs.messages).toEqual([SYSTEM, USER]);
    expect(llm[0].output.choices[0].message.tool_calls).toEqual([TOOL_CALL]);
    expect(llm[1].output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
    // The instrumentation puts no tool list on the Agents SDK's model spans: the tool span describes its tool.
    for (const c of llm) expect(c.summary.usage).toEqual({ 'm-vllm': USAGE });
    const tool = calls.find((c) => c.attributes.kind === 'TOOL');
    expect(tool.attributes.tool).toEqual({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: {
        properties: { city: { title: 'City', type: 'string' } },
        required: ['city'],
        title: 'get_weather_args',
        type: 'object',
        additionalProperties: false,
      },
    });
    expect(tool.output).toEqual({ 'output.value': 'sunny in Paris' });
    // One run, one thread, one turn: the trace's root; every span below is part of it.
    const root = calls.find((c) => c.parent_id === null);
    expect(calls.every((c) => c.thread_id === 'agents-group-1' && c.turn_id === root.id)).toBe(true);
    const threads = await api.jsonl<any>('/threads/stream_query', { project_id: P });
    expect(threads).toEqual([expect.objectContaining({ thread_id: 'agents-group-1', turn_count: 1 })]);
  }, 300_000);

  it('openai-agents, an agent without instructions, on the Responses API and on chat completions: the conversation is read (messages numbered from 1)', async () => {
    const { out, calls } = await run('agents-bare', 'acme/agents-bare');
    expect(out.versions['openai-agents']).toBe('0.24.0');
    expect(out.answers).toEqual(['Hello from vllm', 'Hello from vllm']);
    for (const agent of ['Responses agent', 'Chat agent']) {
      const root = calls.find((c) => c.parent_id === null && calls.some((a) => a.trace_id === c.trace_id && a.attributes.agent === agent));
      const llm = calls.filter((c) => c.trace_id === root.trace_id && c.attributes.kind === 'LLM');
      expect(llm).toHaveLength(2);
      // No system message: none was sent.
      expect(llm[0].inputs.messages).toEqual([USER]);
      expect(llm[0].output.choices[0].message.tool_calls).toEqual([TOOL_CALL]);
      expect(llm[1].inputs.messages).toEqual([
        USER,
        { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
        { role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1' },
      ]);
      expect(llm[1].output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
    }
  }, 300_000);
});
