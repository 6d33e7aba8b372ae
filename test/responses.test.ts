import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, Client } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { runInstrumentedClient } from './helpers/python-clients';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * `/v1/responses` (OpenAI Responses API) as stock clients use it: the OpenAI Python SDK's
 * `client.responses.create` and the Agents SDK with its default (Responses) model, both pinned
 * (the instrumentations venv), through weft's front to the model stand-in's `/v1/responses`.
 */
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;
let out: any;
const P = 'acme/responses';
const AGENTS = 'acme/responses-agents';

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('responses');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m-vllm'] }] }));
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } });
  api = new Client(weft.url, basicAuth('test-key'));
  const r = await runInstrumentedClient('responses_client.py', [weft.url, 'test-key', P, AGENTS], { timeoutMs: 180_000 });
  if (r.code !== 0) throw new Error(`responses_client.py exited ${r.code}\n${r.stderr}`);
  out = JSON.parse(r.stdout);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

const calls = (project: string) =>
  api.jsonl<any>('/calls/stream_query', { project_id: project, sort_by: [{ field: 'started_at', direction: 'asc' }] });
const fromUpstream = (pred: (body: any) => boolean) => upstream.requests.filter((r) => r.path === '/vllm/v1/responses' && pred(r.body));

// The stand-in's usage for every response, as the Responses API names it; weft adds requests: 1.
const USAGE = {
  input_tokens: 7,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 3,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 10,
  requests: 1,
};
const TOOL_CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
const answer = (content: string | null, toolCalls: unknown[] | null = null, finish = 'stop') => [
  { index: 0, message: { role: 'assistant', content, tool_calls: toolCalls }, finish_reason: finish },
];

describe('/v1/responses with the OpenAI SDK', () => {
  it('creates a response; the recorded call reads as a conversation with usage keyed by model', async () => {
    expect(out.versions.openai).toBe('3.54.0');
    expect(out.whole.output_text).toBe('Hello from vllm');
    expect(out.whole.response).toMatchObject({ object: 'response', status: 'completed', model: 'm-vllm' });
    const [c] = (await calls(P)).filter((x) => x.id === out.whole.call_id);
    expect(c).toMatchObject({ op_name: 'weave.responses_create', exception: null });
    expect(c.inputs).toMatchObject({ model: 'm-vllm', input: 'Hi', instructions: 'You answer briefly.' });
    expect(c.inputs.messages).toEqual([
      { role: 'system', content: 'You answer briefly.' },
      { role: 'user', content: 'Hi' },
    ]);
    // The response as the server gave it, and its chat reading.
    expect(c.output).toMatchObject({ id: out.whole.response.id, object: 'response', choices: answer('Hello from vllm') });
    expect(c.summary.usage).toEqual({ 'm-vllm': USAGE });
    // Forwarded as sent; weft's own headers stay with weft.
    const [sent] = fromUpstream((b) => b.input === 'Hi' && !b.previous_response_id && !b.temperature);
    expect(sent!.body).toEqual({ model: 'm-vllm', instructions: 'You answer briefly.', input: 'Hi' });
    expect(sent!.headers['x-project-id']).toBeUndefined();
  });

  it('streams the server’s events as OpenAI names them; the call records the completed response', async () => {
    expect(out.stream.types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(out.stream.text).toBe('Hello from vllm');
    expect(out.stream.completed).toMatchObject({ status: 'completed', usage: { total_tokens: 10 } });
    const c = (await calls(P)).find((x) => x.inputs.stream === true);
    expect(c.inputs.messages).toEqual([{ role: 'user', content: 'Hi again' }]);
    expect(c.output).toMatchObject({ id: out.stream.completed.id, status: 'completed', choices: answer('Hello from vllm') });
    expect(c.summary.usage).toEqual({ 'm-vllm': USAGE });
  });

  it('function tools, and the tool result sent with previous_response_id continuing the server’s stored response', async () => {
    const { first, second } = out.tools;
    expect(first.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_1', name: 'get_weather' })]);
    expect(second.previous_response_id).toBe(first.id);
    expect(out.tools.output_text).toBe('Hello from vllm');
    const [sent] = fromUpstream((b) => b.previous_response_id === first.id);
    expect(sent!.body.input).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }]);
    const recorded = await calls(P);
    const asked = recorded.find((x) => x.output?.id === first.id);
    expect(asked.inputs.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_weather' })]);
    expect(asked.output.choices).toEqual(answer(null, [TOOL_CALL], 'tool_calls'));
    const answered = recorded.find((x) => x.output?.id === second.id);
    expect(answered.inputs).toMatchObject({ previous_response_id: first.id });
    expect(answered.inputs.messages).toEqual([{ role: 'tool', content: 'sunny', tool_call_id: 'call_1' }]);
    expect(answered.output.choices).toEqual(answer('Hello from vllm'));
  });

  it('a traceparent makes the recorded call a child of the caller’s span', async () => {
    expect(out.traced.output_text).toBe('Hello from vllm');
    const c = (await calls(P)).find((x) => x.id === out.traced.call_id);
    expect(c).toMatchObject({ trace_id: '0af7651916cd43dd8448eb211c80319c', parent_id: 'b7ad6b7169203331' });
  });

  it('refuses bad requests in OpenAI’s error shape naming the param; the server’s own refusals pass through', async () => {
    const e = out.errors;
    expect(e.temperature).toMatchObject({ error: 'BadRequestError', status: 400, body: { param: 'temperature', code: 400 } });
    expect(e.input).toMatchObject({ error: 'BadRequestError', status: 400, body: { param: 'input' } });
    expect(e.tool_name).toMatchObject({ error: 'BadRequestError', status: 400, body: { param: 'tools[0].name' } });
    expect(e.tool_name.body.message).toContain('a function tool needs a name');
    expect(e.unknown_model).toMatchObject({ error: 'NotFoundError', status: 404, body: { param: 'model' } });
    expect(e.unknown_previous).toMatchObject({
      error: 'NotFoundError',
      status: 404,
      body: { param: 'previous_response_id', message: "Previous response with id 'resp_nope' not found." },
    });
    expect(e.upstream_failure).toMatchObject({ error: 'InternalServerError', status: 502 });
    // Refused by weft: never forwarded, never recorded. Failed upstream: recorded with the reason.
    expect(fromUpstream((b) => b.temperature === 7 || b.input === 42)).toEqual([]);
    const failed = (await calls(P)).filter((x) => x.exception !== null);
    expect(failed.map((x) => x.exception)).toEqual([
      "Previous response with id 'resp_nope' not found.",
      "upstream 'vllm' answered 500: engine crashed",
    ]);
    // Whole, streamed, tool call, tool answer, traced, and the two upstream refusals.
    expect(await calls(P)).toHaveLength(7);
  });
});

describe('openai-agents with its default (Responses) model', () => {
  it('runs the agent through the front; the trace has the conversation and each model call’s usage once', async () => {
    expect(out.versions['openai-agents']).toBe('0.24.0');
    expect(out.agent).toBe('Hello from vllm');
    // The agent's two model requests went to the server's Responses API, not chat completions.
    const asked = upstream.requests.filter((r) => r.body.instructions === 'You answer briefly.' && Array.isArray(r.body.input));
    expect(asked.map((r) => r.path)).toEqual(['/vllm/v1/responses', '/vllm/v1/responses']);
    expect(upstream.requests.some((r) => r.path.includes('chat/completions'))).toBe(false);

    const recorded = await calls(AGENTS);
    expect(recorded.find((c) => c.attributes.agent === 'Weather agent')).toBeDefined();
    const llm = recorded.filter((c) => c.attributes.kind === 'LLM');
    expect(llm).toHaveLength(2);
    expect(llm[0].inputs.messages).toEqual([
      { role: 'system', content: 'You answer briefly.' },
      { role: 'user', content: 'tools' },
    ]);
    expect(llm[0].output.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(llm[1].inputs.messages.at(-1)).toEqual({ role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1' });
    expect(llm[1].output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
    // Usage once per model request, on the model calls only: two requests in all.
    const withUsage = recorded.filter((c) => c.summary.usage);
    expect(withUsage.map((c) => c.id)).toEqual(llm.map((c) => c.id));
    for (const c of llm)
      expect(c.summary.usage).toEqual({ 'm-vllm': { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, requests: 1 } });
    // The agent's client sent no x-project-id: nothing recorded by the front beside the trace.
    expect(recorded.filter((c) => c.op_name === 'weave.responses_create')).toEqual([]);
    expect(new Set(recorded.map((c) => c.trace_id)).size).toBe(1);
  });
});
