import { execFile } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { ensureAiSdk } from './helpers/npm-clients';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

const run = promisify(execFile);

/**
 * The Vercel AI SDK (npm `ai` 6, pinned, installed into .cache/) with `experimental_telemetry`
 * and the OpenTelemetry Node SDK, as its users trace it: generateText, streamText, a two-step
 * tool run and generateObject against the model stand-in, spans to weft's OTLP endpoint. Each
 * model call reads as a generation: the conversation, the answer, tool calls, usage counted
 * once, the function id as the display name, the metadata's user and session (issue 53, item 11).
 * WEFT_CAPTURE_FIXTURES=1 refreshes libs/otlp/test/fixtures/ai-sdk.json from this run.
 */
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;
let out: any;
let calls: any[];
const P = 'acme/ai-sdk';

beforeAll(async () => {
  upstream = await startModelServer();
  // generateObject asks for JSON: the stand-in answers with the object.
  upstream.script((body) => (JSON.stringify(body.messages ?? []).includes('object') ? { content: '{"city":"Paris"}' } : undefined));
  const dir = newDataDir('ai-sdk');
  let clients: string;
  [weft, clients] = await Promise.all([startWeft({ dataDir: dir }), ensureAiSdk()]);
  api = new Client(weft.url, bearerAuth('test-key'));
  copyFileSync(join(REPO_ROOT, 'test', 'clients', 'ai_sdk.mjs'), join(clients, 'ai_sdk.mjs'));
  const dump = join(dir, 'ai-sdk.json');
  const r = await run('node', ['ai_sdk.mjs', weft.url, 'test-key', P, `${upstream.url}/vllm/v1`, dump], { cwd: clients, timeout: 180_000 });
  out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  if (process.env.WEFT_CAPTURE_FIXTURES === '1') copyFileSync(dump, join(REPO_ROOT, 'libs/otlp/test/fixtures/ai-sdk.json'));
  calls = await api.jsonl<any>('/calls/stream_query', { project_id: P, sort_by: [{ field: 'started_at', direction: 'asc' }] });
  expect(calls).toHaveLength(out.spans);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

const USER = (content: string) => ({ role: 'user', content });
const ANSWER = { role: 'assistant', content: 'Hello from vllm' };
const TOOL_CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
const USAGE = { input_tokens: 7, output_tokens: 3, total_tokens: 10, requests: 1 };
const trace = (name: string) => {
  const root = calls.find((c) => c.parent_id === null && c.display_name === name);
  expect(root, name).toBeDefined();
  return { root, children: calls.filter((c) => c.trace_id === root.trace_id && c.id !== root.id) };
};

describe('the Vercel AI SDK (ai 6) with experimental_telemetry', () => {
  it('generateText: the function id names the call; the model call is a generation with its conversation, answer and usage', () => {
    expect(out.versions).toMatchObject({ ai: '6.0.333', '@ai-sdk/openai-compatible': '2.0.92' });
    expect(out.text).toBe('Hello from vllm');
    const { root, children } = trace('greet');
    expect(root.op_name).toBe('ai.generateText');
    expect(root.inputs.messages).toEqual([{ role: 'system', content: 'You answer briefly.' }, USER('Hi')]);
    expect(root.output.choices).toEqual([{ index: 0, message: ANSWER, finish_reason: 'stop' }]);
    const [model] = children;
    expect(model.op_name).toBe('ai.generateText.doGenerate');
    expect(model.inputs.messages).toEqual([{ role: 'system', content: 'You answer briefly.' }, USER('Hi')]);
    expect(model.output.choices[0].message).toEqual(ANSWER);
    expect(model.summary.usage).toEqual({ 'm-vllm': USAGE });
    // The metadata's user and session: the user, and a thread whose turn is the run.
    for (const c of [root, model]) {
      expect(c.attributes.user).toBe('user-ai');
      expect([c.thread_id, c.turn_id]).toEqual(['session-ai', root.id]);
    }
  });

  it('streamText: the streamed answer and its usage', () => {
    expect(out.streamed).toBe('Hello from vllm');
    const { root, children } = trace('greet-stream');
    expect(root.op_name).toBe('ai.streamText');
    const [model] = children;
    expect(model.op_name).toBe('ai.streamText.doStream');
    expect(model.inputs.messages).toEqual([USER('Hi again')]);
    expect(model.output.choices[0].message).toEqual(ANSWER);
    expect(model.summary.usage).toEqual({ 'm-vllm': USAGE });
  });

  it('a two-step tool run: tool calls in the conversation, the tools offered, the tool call with its name, id, arguments and result', () => {
    expect(out.tool).toEqual({ text: 'Hello from vllm', steps: 2 });
    const { children } = trace('weather');
    const [first, tool, second] = children;
    expect(first.output.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
      finish_reason: 'tool_calls',
    });
    expect(first.attributes.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: expect.objectContaining({ type: 'object', properties: { city: { type: 'string' } } }),
        },
      },
    ]);
    expect(tool).toMatchObject({
      op_name: 'ai.toolCall',
      inputs: { 'ai.toolCall.args': { city: 'Paris' } },
      output: { 'ai.toolCall.result': 'sunny in Paris' },
    });
    expect(tool.attributes.tool).toEqual({ name: 'get_weather', call_id: 'call_1' });
    expect(second.inputs.messages).toEqual([
      USER('tools'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ ...TOOL_CALL, function: { ...TOOL_CALL.function, arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', content: 'sunny in Paris', tool_call_id: 'call_1' },
    ]);
    expect(second.output.choices[0].message).toEqual(ANSWER);
  });

  it('generateObject: the object as the answer; prompt and completion tokens counted once though two conventions carry them', () => {
    expect(out.object).toEqual({ city: 'Paris' });
    const { root, children } = trace('extract');
    expect(root.output.choices[0].message).toEqual({ role: 'assistant', content: '{"city":"Paris"}' });
    const [model] = children;
    // ai.usage.promptTokens and gen_ai.usage.input_tokens (7 each) on the one model call: 7, not 14.
    expect(model.summary.usage).toEqual({ 'm-vllm': USAGE });
  });

  it('analytics count each model request once, its tokens once', async () => {
    const q = await api.post('/analytics/query', {
      project_id: P,
      metrics: ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens'],
    });
    expect(q.status, q.text).toBe(200);
    // Five model requests (one, one, two, one) of 7 + 3 tokens.
    expect(q.body.totals ?? q.body.rows[0]).toMatchObject({ requests: 5, prompt_tokens: 35, completion_tokens: 15, total_tokens: 50 });
  });
});
