import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, basicAuth, bearerAuth } from './helpers/client';
import { startModelServer, type FakeDialect, type ModelServer } from './helpers/model-server';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { postSse } from './helpers/sse-client';

let upstream: ModelServer;
let weft: RunningWeft;
let chat: Client; // Bearer, for /v1
let api: Client; // Basic, for the trace endpoints
const VLLM_KEY = 'upstream-secret';
const PROVIDER_KEY = 'provider-secret';
const DIALECTS: FakeDialect[] = ['vllm', 'sglang', 'llamacpp', 'ollama', 'openai'];
const P = 'acme/inference';

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

beforeAll(async () => {
  upstream = await startModelServer({ vllmKey: VLLM_KEY });
  const dir = newDataDir('inference');
  const file = join(dir, 'upstreams.json');
  const base = (d: FakeDialect) => `${upstream.url}/${d}/v1`;
  writeFileSync(
    file,
    JSON.stringify({
      upstreams: [
        { name: 'vllm', base_url: base('vllm'), api_key_env: 'FAKE_VLLM_KEY', models: ['m-vllm'], priority_scheduling: false },
        { name: 'vllm-prio', base_url: base('vllm'), api_key_env: 'FAKE_VLLM_KEY', models: ['m-prio'], priority_scheduling: true },
        ...DIALECTS.filter((d) => d !== 'vllm').map((d) => ({ name: d, base_url: base(d), models: [`m-${d}`], dialect: d })),
        { name: 'impatient', base_url: base('vllm'), api_key_env: 'FAKE_VLLM_KEY', models: ['m-impatient'], timeout_ms: 1500 },
        { name: 'down', base_url: `http://127.0.0.1:${await closedPort()}/v1`, models: ['m-down'] },
        { name: 'keyless', base_url: base('vllm'), api_key_env: 'WEFT_TEST_UNSET_KEY', models: ['m-nokey'] },
      ],
      custom_providers: { base_urls: [base('openai')], api_keys: ['FAKE_PROVIDER_KEY', 'WEFT_TEST_UNSET_KEY'] },
    }),
  );
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file, FAKE_VLLM_KEY: VLLM_KEY, FAKE_PROVIDER_KEY: PROVIDER_KEY } });
  chat = new Client(weft.url, bearerAuth('test-key'));
  api = new Client(weft.url, basicAuth('test-key'));
});
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

const msg = (content: string) => [{ role: 'user', content }];
const CHAT = '/v1/chat/completions';
const ask = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  chat.post(CHAT, { model: 'm-vllm', messages: msg('hi'), ...body }, headers);
const sse = (body: Record<string, unknown>, headers: Record<string, string> = {}, opts = {}) =>
  postSse(
    weft.url + CHAT,
    { model: 'm-vllm', messages: msg('hi'), stream: true, ...body },
    { authorization: bearerAuth('test-key'), ...headers },
    opts,
  );

async function callById(id: string, project = P): Promise<any> {
  // The end of a streamed call is recorded right after the stream closes.
  for (let i = 0; i < 50; i++) {
    const [c] = await api.jsonl('/calls/stream_query', { project_id: project, filter: { call_ids: [id] } });
    if (c?.ended_at) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`call ${id} was not recorded as ended`);
}

describe('chat completions: vLLM request rules', () => {
  // [body, status, error.type, param, message]
  const cases: [string, Record<string, unknown>, number, string, string, string][] = [
    [
      'stream_options without stream',
      { stream_options: { include_usage: true } },
      400,
      'Bad Request',
      'stream_options',
      'Stream options can only be defined when `stream=True`.',
    ],
    [
      'prompt_logprobs when streaming',
      { stream: true, prompt_logprobs: 1 },
      400,
      'Bad Request',
      'prompt_logprobs',
      '`prompt_logprobs` are not available when `stream=True`.',
    ],
    [
      'negative prompt_logprobs',
      { prompt_logprobs: -2 },
      400,
      'Bad Request',
      'prompt_logprobs',
      '`prompt_logprobs` must be a positive value or -1.',
    ],
    [
      'negative top_logprobs',
      { top_logprobs: -2, logprobs: true },
      400,
      'Bad Request',
      'top_logprobs',
      '`top_logprobs` must be a positive value or -1.',
    ],
    [
      'top_logprobs without logprobs',
      { top_logprobs: 3 },
      400,
      'Bad Request',
      'top_logprobs',
      'when using `top_logprobs`, `logprobs` must be set to true.',
    ],
    [
      'two structured output kinds',
      { structured_outputs: { json: '{}', regex: 'a+' } },
      400,
      'Bad Request',
      'structured_outputs',
      "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
    ],
    [
      'structured output and a named tool',
      {
        structured_outputs: { regex: 'a+' },
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      },
      400,
      'Bad Request',
      'structured_outputs',
      'You can only either use constraints for structured outputs or tools, not both.',
    ],
    [
      'tool_choice without tools',
      { tool_choice: 'auto' },
      400,
      'Bad Request',
      'tool_choice',
      'When using `tool_choice`, `tools` must be set.',
    ],
    [
      'unknown tool_choice',
      { tool_choice: 'sometimes', tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      'Bad Request',
      'tool_choice',
      'Invalid value for `tool_choice`: sometimes! Only named tools, "none", "auto" or "required" are supported.',
    ],
    [
      'named tool_choice without a function object',
      { tool_choice: { type: 'function', function: 'f' }, tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      'Bad Request',
      'tool_choice',
      'Invalid value for `function`: `f` in `tool_choice`! Correct usage: `{"type": "function", "function": {"name": "my_function"}}`',
    ],
    [
      'named tool_choice without a name',
      { tool_choice: { type: 'function', function: {} }, tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      'Bad Request',
      'tool_choice',
      'Expected field `name` in `function` in `tool_choice`! Correct usage: `{"type": "function", "function": {"name": "my_function"}}`',
    ],
    [
      'named tool_choice with an empty name',
      { tool_choice: { type: 'function', function: { name: '' } }, tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      'Bad Request',
      'tool_choice',
      'Invalid `name` in `function`: `` in `tool_choice`! Correct usage: `{"type": "function", "function": {"name": "my_function"}}`',
    ],
    [
      'named tool not among the tools',
      { tool_choice: { type: 'function', function: { name: 'g' } }, tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      'Bad Request',
      'tool_choice',
      'The tool specified in `tool_choice` does not match any of the specified `tools`',
    ],
    [
      'continue_final_message with add_generation_prompt',
      { continue_final_message: true, add_generation_prompt: true },
      400,
      'Bad Request',
      'continue_final_message',
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
    ],
    [
      'empty cache_salt',
      { cache_salt: '' },
      400,
      'Bad Request',
      'cache_salt',
      "Parameter 'cache_salt' must be a non-empty string if provided.",
    ],
    ['seed beyond int64', { seed: 1e19 }, 400, 'Bad Request', 'seed', 'seed: Input should be less than or equal to 9223372036854775807'],
    [
      'truncate_prompt_tokens below -1',
      { truncate_prompt_tokens: -2 },
      400,
      'Bad Request',
      'truncate_prompt_tokens',
      'truncate_prompt_tokens: Input should be greater than or equal to -1',
    ],
    ['n = 0', { n: 0 }, 400, 'BadRequestError', 'n', 'n must be at least 1, got 0.'],
    [
      'presence_penalty out of range',
      { presence_penalty: 3 },
      400,
      'BadRequestError',
      'presence_penalty',
      'presence_penalty must be in [-2, 2], got 3.0.',
    ],
    [
      'frequency_penalty out of range',
      { frequency_penalty: -2.5 },
      400,
      'BadRequestError',
      'frequency_penalty',
      'frequency_penalty must be in [-2, 2], got -2.5.',
    ],
    [
      'repetition_penalty zero',
      { repetition_penalty: 0 },
      400,
      'BadRequestError',
      'repetition_penalty',
      'repetition_penalty must be greater than zero, got 0.0.',
    ],
    ['negative temperature', { temperature: -1 }, 400, 'BadRequestError', 'temperature', 'temperature must be non-negative, got -1.0.'],
    ['top_p zero', { top_p: 0 }, 400, 'BadRequestError', 'top_p', 'top_p must be in (0, 1], got 0.0.'],
    ['top_k below -1', { top_k: -2 }, 400, 'BadRequestError', 'top_k', 'top_k must be 0 (disable), or at least 1, got -2.'],
    ['min_p above 1', { min_p: 1.5 }, 400, 'BadRequestError', 'min_p', 'min_p must be in [0, 1], got 1.5.'],
    ['max_tokens zero', { max_tokens: 0 }, 400, 'BadRequestError', 'max_tokens', 'max_tokens must be at least 1, got 0.'],
    [
      'negative min_tokens',
      { min_tokens: -1 },
      400,
      'BadRequestError',
      'min_tokens',
      'min_tokens must be greater than or equal to 0, got -1.',
    ],
    [
      'min_tokens above max_tokens',
      { min_tokens: 10, max_completion_tokens: 5 },
      400,
      'BadRequestError',
      'min_tokens',
      'min_tokens must be less than or equal to max_tokens=5, got 10.',
    ],
    [
      'several answers when greedy',
      { temperature: 0, n: 2 },
      400,
      'BadRequestError',
      'n',
      'n must be 1 when using greedy sampling, got 2.',
    ],
    [
      'logits processors',
      { logits_processors: ['my.proc'] },
      400,
      'BadRequestError',
      'logits_processors',
      'The `logits_processors` argument is not supported by this server. See --logits-processor-pattern engine argument for more information.',
    ],
    [
      'priority without priority scheduling',
      { priority: 5 },
      400,
      'BadRequestError',
      'priority',
      'Got priority 5 but Priority scheduling is not enabled.',
    ],
  ];

  it.each(cases)('refuses %s with vLLM’s message, forwarding nothing', async (_name, body, status, type, param, message) => {
    const before = upstream.requests.length;
    const r = await ask(body);
    expect(r.status).toBe(status);
    expect(r.body).toEqual({ error: { message, type, param, code: status } });
    expect(upstream.requests.length).toBe(before);
  });

  it('accepts what vLLM accepts: top_k -1, empty stream_options, unknown fields (not forwarded)', async () => {
    const r = await ask({ top_k: -1, stream_options: {}, some_future_field: { x: 1 }, request_id: 'rid-accept' });
    expect(r.status).toBe(200);
    const seen = await upstream.waitFor((q) => q.body.request_id === 'rid-accept');
    expect(seen.body.top_k).toBe(-1);
    expect(seen.body).not.toHaveProperty('some_future_field');
    expect(seen.body).not.toHaveProperty('stream_options');
  });

  it('defaults tool_choice to auto when tools are given, and drops tools for required with none', async () => {
    await ask({ tools: [{ type: 'function', function: { name: 'f' } }], request_id: 'rid-tools-auto' });
    expect((await upstream.waitFor((q) => q.body.request_id === 'rid-tools-auto')).body.tool_choice).toBe('auto');
    await ask({ tools: [], tool_choice: 'required', request_id: 'rid-tools-none' });
    const seen = await upstream.waitFor((q) => q.body.request_id === 'rid-tools-none');
    expect(seen.body.tool_choice).toBe('none');
    expect(seen.body).not.toHaveProperty('tools');
  });

  it('answers type errors, bad JSON and missing auth in the same error shape', async () => {
    const noMessages = await chat.post(CHAT, { model: 'm-vllm' });
    expect(noMessages.status).toBe(400);
    expect(noMessages.body.error).toMatchObject({ type: 'Bad Request', param: 'messages', code: 400 });
    const badJson = await chat.raw(CHAT, '{"messages": [');
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.message).toContain('invalid JSON');
    const anon = await chat.withAuth(null).post(CHAT, { messages: msg('hi') });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toMatchObject({ type: 'Unauthorized', code: 401 });
    expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    // The trailing-slash path is the same endpoint.
    const slash = await chat.post(CHAT + '/', { model: 'm-vllm', messages: msg('hi') });
    expect(slash.status).toBe(200);
  });
});

describe('chat completions: routing', () => {
  it('404s an unknown model in vLLM’s shape (before sampling checks, as vLLM orders them)', async () => {
    const r = await ask({ model: 'no-such-model', temperature: -1 });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      error: { message: 'The model `no-such-model` does not exist.', type: 'NotFoundError', param: 'model', code: 404 },
    });
  });

  it('uses the first served model when none is named, sends the upstream its API key, and returns a generated request id', async () => {
    const r = await chat.post(CHAT, { messages: msg('hi') });
    expect(r.status).toBe(200);
    const rid = r.headers.get('x-request-id')!;
    expect(rid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.id).toBe(`chatcmpl-${rid}`);
    expect(r.body.model).toBe('m-vllm');
    const seen = await upstream.waitFor((q) => q.body.request_id === rid);
    expect(seen.dialect).toBe('vllm');
    expect(seen.headers.authorization).toBe(`Bearer ${VLLM_KEY}`);
  });

  it('keeps a client request_id', async () => {
    const r = await ask({ request_id: 'my-request-1' });
    expect(r.headers.get('x-request-id')).toBe('my-request-1');
    expect(r.body.id).toBe('chatcmpl-my-request-1');
  });

  it('forwards priority to a model with priority scheduling', async () => {
    const r = await ask({ model: 'm-prio', priority: 5, request_id: 'rid-prio' });
    expect(r.status).toBe(200);
    expect((await upstream.waitFor((q) => q.body.request_id === 'rid-prio')).body.priority).toBe(5);
  });

  it('refuses a streamed priority in-band after the 200, as vLLM does', async () => {
    const s = await sse({ priority: 3 });
    expect(s.status).toBe(200);
    expect(s.json).toEqual([
      {
        error: { message: 'Got priority 3 but Priority scheduling is not enabled.', type: 'BadRequestError', param: 'priority', code: 400 },
      },
    ]);
    expect(s.events.at(-1)!.data).toBe('[DONE]');
  });

  it('502s a model whose upstream key variable is unset, 502s an unreachable upstream, 504s a slow one', async () => {
    const nokey = await ask({ model: 'm-nokey' });
    expect(nokey.status).toBe(502);
    expect(nokey.body.error.message).toContain('WEFT_TEST_UNSET_KEY');
    const down = await ask({ model: 'm-down' });
    expect(down.status).toBe(502);
    expect(down.body.error).toMatchObject({ type: 'Bad Gateway', code: 502 });
    expect(down.body.error.message).toContain("upstream 'down' is unreachable");
    const t0 = Date.now();
    const slow = await ask({ model: 'm-impatient', messages: msg('hang') });
    expect(slow.status).toBe(504);
    expect(slow.body.error).toMatchObject({ type: 'Gateway Timeout', code: 504 });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const slowStream = await sse({ model: 'm-impatient', messages: msg('hang') });
    expect(slowStream.status).toBe(504);
    const downStream = await sse({ model: 'm-down' });
    expect(downStream.status).toBe(502);
  });
});

describe('chat completions: dialects', () => {
  it.each(DIALECTS)('normalises a %s answer to the interface shape', async (d) => {
    const r = await ask({ model: `m-${d}`, request_id: `rid-norm-${d}` });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: `chatcmpl-rid-norm-${d}`,
      object: 'chat.completion',
      created: 1_730_000_000,
      model: `m-${d}`,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: `Hello from ${d}`,
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            tool_calls: [],
            reasoning_content: null,
            reasoning: null,
          },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: d === 'sglang' ? 2 : null,
          token_ids: null,
        },
      ],
      service_tier: null,
      system_fingerprint: d === 'ollama' ? 'fp_ollama' : null,
      usage: { prompt_tokens: 7, total_tokens: 10, completion_tokens: 3, prompt_tokens_details: null },
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    });
  });

  it('forwards only what each dialect accepts, translated', async () => {
    const extras = { top_k: 5, repetition_penalty: 1.1, max_completion_tokens: 50, svc_xargs: { a: 1 }, add_generation_prompt: true };
    for (const d of DIALECTS) {
      const r = await ask({ model: `m-${d}`, ...extras, request_id: `rid-fwd-${d}` });
      expect(r.status, d).toBe(200); // the openai upstream 400s any non-OpenAI field
    }
    const sent = (d: FakeDialect) => upstream.requests.filter((q) => q.dialect === d && q.body.model === `m-${d}`).at(-1)!.body;
    expect(sent('vllm')).toMatchObject({
      top_k: 5,
      repetition_penalty: 1.1,
      max_completion_tokens: 50,
      vllm_xargs: { a: 1 },
      add_generation_prompt: true,
      request_id: 'rid-fwd-vllm',
    });
    expect(sent('vllm')).not.toHaveProperty('svc_xargs');
    expect(sent('sglang')).toMatchObject({ top_k: 5, repetition_penalty: 1.1, rid: 'rid-fwd-sglang' });
    expect(sent('sglang')).not.toHaveProperty('request_id');
    expect(sent('sglang')).not.toHaveProperty('add_generation_prompt');
    expect(sent('llamacpp')).toMatchObject({ top_k: 5, repeat_penalty: 1.1, max_tokens: 50 });
    expect(sent('llamacpp')).not.toHaveProperty('max_completion_tokens');
    expect(sent('ollama')).toMatchObject({ max_tokens: 50 });
    expect(sent('ollama')).not.toHaveProperty('top_k');
    expect(Object.keys(sent('openai')).sort()).toEqual(['max_completion_tokens', 'messages', 'model', 'stream']);
  });

  it('translates structured outputs, and refuses what a dialect cannot honour', async () => {
    const ok = await ask({ model: 'm-sglang', structured_outputs: { choice: ['yes', 'no.'] }, request_id: 'rid-so' });
    expect(ok.status).toBe(200);
    expect(upstream.requests.filter((q) => q.dialect === 'sglang').at(-1)!.body.regex).toBe('yes|no\\.');
    const choice = await ask({ model: 'm-llamacpp', structured_outputs: { choice: ['yes', 'no'] } });
    expect(choice.status).toBe(400);
    expect(choice.body.error).toMatchObject({ type: 'BadRequestError', param: 'structured_outputs.choice' });
    const n = await ask({ model: 'm-ollama', n: 2 });
    expect(n.status).toBe(400);
    expect(n.body.error.param).toBe('n');
  });

  it('normalises tool calls and reasoning (Ollama: whole arguments object, `reasoning`)', async () => {
    const tools = await ask({ model: 'm-ollama', messages: msg('tools') });
    expect(tools.body.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(tools.body.choices[0].finish_reason).toBe('tool_calls');
    const reasoning = await ask({ model: 'm-ollama', messages: msg('reasoning') });
    expect(reasoning.body.choices[0].message.reasoning_content).toBe('thinking hard');
  });

  it.each(DIALECTS)('turns %s errors into vLLM’s shape: 4xx kept (with Retry-After), 5xx → 502', async (d) => {
    const bad = await ask({ model: `m-${d}`, messages: msg('bad') });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ message: 'bad request from upstream', code: 400 });
    expect(typeof bad.body.error.type).toBe('string');
    const busy = await ask({ model: `m-${d}`, messages: msg('busy') });
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('7');
    expect(busy.body.error).toMatchObject({ message: 'too many requests', code: 429 });
    const fail = await ask({ model: `m-${d}`, messages: msg('fail') });
    expect(fail.status).toBe(502);
    expect(fail.body.error).toMatchObject({ type: 'Bad Gateway', code: 502 });
    expect(fail.body.error.message).toContain('engine crashed');
  });
});

describe('chat completions: streaming', () => {
  const text = (json: any[]) => json.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

  it.each(DIALECTS)('streams %s as vLLM chunks, usage only when asked, [DONE] last', async (d) => {
    const plain = await sse({ model: `m-${d}`, request_id: `rid-s-${d}` });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toContain('text/event-stream');
    expect(plain.events.at(-1)!.data).toBe('[DONE]');
    expect(text(plain.json)).toBe(`Hello from ${d}`);
    for (const c of plain.json) {
      expect(c).toMatchObject({ id: `chatcmpl-rid-s-${d}`, object: 'chat.completion.chunk', model: `m-${d}` });
      expect(c).not.toHaveProperty('usage');
      expect(c).not.toHaveProperty('timings');
    }
    expect(plain.json[0].choices[0].delta.role).toBe('assistant');
    expect(plain.json.at(-1).choices[0].finish_reason).toBe('stop');

    const withUsage = await sse({ model: `m-${d}`, stream_options: { include_usage: true } });
    expect(withUsage.events.at(-1)!.data).toBe('[DONE]');
    const last = withUsage.json.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 7, total_tokens: 10, completion_tokens: 3, prompt_tokens_details: null });
    for (const c of withUsage.json.slice(0, -1)) expect(c).not.toHaveProperty('usage');
    // vLLM's default: stream_options given → usage included.
    const implicit = await sse({ model: `m-${d}`, stream_options: {} });
    expect(implicit.json.at(-1).usage?.total_tokens).toBe(10);
  });

  it('passes vLLM’s continuous usage stats on every chunk when asked', async () => {
    const s = await sse({ stream_options: { include_usage: true, continuous_usage_stats: true } });
    expect(s.json.length).toBeGreaterThan(3);
    for (const c of s.json) expect(c.usage?.total_tokens).toBe(10);
    expect((await upstream.waitFor((q) => q.body.stream_options?.continuous_usage_stats === true)).body.stream_options).toEqual({
      include_usage: true,
      continuous_usage_stats: true,
    });
  });

  it('streams tool calls (fragments merged by index) and Ollama’s whole tool call', async () => {
    for (const d of ['vllm', 'ollama'] as const) {
      const s = await sse({ model: `m-${d}`, messages: msg('tools') });
      const calls = s.json.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
      expect(calls[0]).toMatchObject({ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather' } });
      expect(calls.map((t: any) => t.function.arguments ?? '').join('')).toBe('{"city": "Paris"}');
    }
  });

  it('passes chunks through as they are produced (no buffering)', async () => {
    const s = await sse({ messages: msg('slow') });
    const content = s.events.filter((e) => e.data.includes('"content":"t'));
    expect(content).toHaveLength(20);
    // 20 tokens 100 ms apart: the first must arrive long before the last.
    expect(content.at(-1)!.at - content[0]!.at).toBeGreaterThan(1200);
    expect(text(s.json)).toBe(Array.from({ length: 20 }, (_, i) => `t${i} `).join(''));
  });

  it('aborts the upstream request when the client goes away', async () => {
    const controller = new AbortController();
    await sse(
      { messages: msg('slow'), request_id: 'rid-abort' },
      {},
      {
        signal: controller.signal,
        onEvent: (_e: unknown, all: unknown[]) => {
          if (all.length === 3) controller.abort();
        },
      },
    );
    const seen = await upstream.waitFor((q) => q.body.request_id === 'rid-abort' && q.aborted, 3000);
    expect(seen.aborted).toBe(true);
    expect(seen.finished).toBe(false);
  });

  it('reports upstream errors in-band after the 200, then [DONE]', async () => {
    const mid = await sse({ messages: msg('midstream-error') });
    expect(mid.status).toBe(200);
    expect(text(mid.json)).toBe('Hello from');
    expect(mid.json.at(-1)).toEqual({ error: { message: 'engine died mid-stream', type: 'InternalServerError', param: null, code: 500 } });
    expect(mid.events.at(-1)!.data).toBe('[DONE]');

    const dropped = await sse({ messages: msg('drop') });
    expect(dropped.status).toBe(200);
    expect(dropped.json.at(-1).error).toMatchObject({ type: 'Bad Gateway', code: 502 });
    expect(dropped.events.at(-1)!.data).toBe('[DONE]');

    // Before the stream starts, an upstream error is a plain error response.
    const bad = await sse({ messages: msg('bad') });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.message).toBe('bad request from upstream');
  });

  it('ends a stream that stalls mid-way with an in-band 504 and closes the upstream request', async () => {
    const s = await sse({ model: 'm-impatient', messages: msg('stall'), request_id: 'rid-stall' });
    expect(s.status).toBe(200);
    expect(text(s.json)).toBe('Hello from');
    expect(s.json.at(-1).error).toMatchObject({ type: 'Gateway Timeout', code: 504 });
    expect(s.events.at(-1)!.data).toBe('[DONE]');
    expect((await upstream.waitFor((q) => q.body.request_id === 'rid-stall' && q.aborted)).aborted).toBe(true);
  });

  it('aborts the upstream request when a non-streaming client goes away', async () => {
    const controller = new AbortController();
    const pending = fetch(weft.url + CHAT, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bearerAuth('test-key') },
      body: JSON.stringify({ model: 'm-vllm', messages: msg('hang'), request_id: 'rid-gone' }),
      signal: controller.signal,
    }).catch((e: Error) => e);
    await upstream.waitFor((q) => q.body.request_id === 'rid-gone');
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    expect((await upstream.waitFor((q) => q.body.request_id === 'rid-gone' && q.aborted)).aborted).toBe(true);
  });

  it('times out a stalled stream start with 504', async () => {
    const s = await sse({ model: 'm-impatient', messages: msg('hang') });
    expect(s.status).toBe(504);
    expect(JSON.parse(s.text).error.code).toBe(504);
  });
});

describe('tracing', () => {
  it('/completions/create answers the reference’s shape and records the call with usage keyed by model', async () => {
    const r = await api.post('/completions/create', { project_id: P, inputs: { model: 'm-vllm', messages: msg('hi'), temperature: 0.5 } });
    expect(r.status).toBe(200);
    expect(r.body.response.choices[0].message.content).toBe('Hello from vllm');
    expect(r.body.svc_call_id).toMatch(/^[0-9a-f-]{36}$/);
    const c = await callById(r.body.svc_call_id);
    expect(c.op_name).toBe('weave.completions_create');
    expect(c.inputs).toEqual({ model: 'm-vllm', messages: msg('hi'), temperature: 0.5 });
    expect(c.output.choices[0].message.content).toBe('Hello from vllm');
    expect(c.summary.usage).toEqual({
      'm-vllm': { prompt_tokens: 7, total_tokens: 10, completion_tokens: 3, prompt_tokens_details: null, requests: 1 },
    });
    expect(c.exception).toBeNull();
    expect(c.svc_user_id).toMatch(/^user-/);
  });

  it('records provider failures as an error answer and the call’s exception; untracked calls have no id', async () => {
    const r = await api.post('/completions/create', { project_id: P, inputs: { model: 'm-sglang', messages: msg('fail') } });
    expect(r.status).toBe(200);
    expect(r.body.response.error).toContain('engine crashed');
    const c = await callById(r.body.svc_call_id);
    expect(c.exception).toContain('engine crashed');
    expect(c.summary.weave.status).toBe('error');

    const untracked = await api.post('/completions/create', {
      project_id: P,
      inputs: { model: 'm-vllm', messages: msg('hi') },
      track_llm_call: false,
    });
    expect(untracked.body.svc_call_id).toBeNull();
    expect(untracked.body.response.choices[0].message.content).toBe('Hello from vllm');

    const unknown = await api.post('/completions/create', { project_id: P, inputs: { model: 'gpt-nope', messages: msg('hi') } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ response: { error: expect.stringContaining('gpt-nope') }, svc_call_id: null });

    const nokey = await api.post('/completions/create', { project_id: P, inputs: { model: 'm-nokey', messages: msg('hi') } });
    expect(nokey.status).toBe(400);
    expect(nokey.body).toMatchObject({ reason: 'No API key WEFT_TEST_UNSET_KEY found for model m-nokey', api_key: 'WEFT_TEST_UNSET_KEY' });
  });

  it('/completions/create_stream: _meta first, chunks, and the aggregated output recorded', async () => {
    const lines = await api.jsonl('/completions/create_stream', { project_id: P, inputs: { model: 'm-llamacpp', messages: msg('hi') } });
    const id = lines[0]._meta.svc_call_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      lines
        .slice(1)
        .map((c) => c.choices?.[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Hello from llamacpp');
    expect(lines.slice(1).every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const c = await callById(id);
    expect(c.op_name).toBe('weave.completions_create');
    expect(c.output).toMatchObject({
      object: 'chat.completion',
      model: 'm-llamacpp',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from llamacpp' }, finish_reason: 'stop' }],
    });
    expect(c.summary.usage).toEqual({
      'm-llamacpp': { prompt_tokens: 7, total_tokens: 10, completion_tokens: 3, prompt_tokens_details: null, requests: 1 },
    });

    const tools = await api.jsonl('/completions/create_stream', { project_id: P, inputs: { model: 'm-vllm', messages: msg('tools') } });
    const tc = await callById(tools[0]._meta.svc_call_id);
    expect(tc.output.choices[0].message).toMatchObject({
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
    });
  });

  it('/completions/create_stream: errors as lines; untracked streams have no _meta', async () => {
    const mid = await api.jsonl('/completions/create_stream', {
      project_id: P,
      inputs: { model: 'm-vllm', messages: msg('midstream-error') },
    });
    expect(mid[0]._meta).toBeDefined();
    expect(mid.at(-1)).toEqual({ error: 'engine died mid-stream' });
    const setup = await api.jsonl('/completions/create_stream', { project_id: P, inputs: { model: 'gpt-nope', messages: msg('hi') } });
    expect(setup).toHaveLength(1);
    expect(setup[0].error).toContain('gpt-nope');
    const untracked = await api.jsonl('/completions/create_stream', {
      project_id: P,
      inputs: { model: 'm-ollama', messages: msg('hi') },
      track_llm_call: false,
    });
    expect(untracked[0]._meta).toBeUndefined();
    expect(untracked[0].object).toBe('chat.completion.chunk');
  });

  it('traces chat completions that carry x-project-id, streamed or not', async () => {
    const r = await ask({ model: 'm-sglang' }, { 'x-project-id': P });
    const id = r.headers.get('x-svc-call-id')!;
    const c = await callById(id);
    expect(c.op_name).toBe('weave.chat_completions_create');
    expect(c.inputs.messages).toEqual(msg('hi'));
    expect(c.output.id).toBe(r.body.id);
    expect(c.summary.usage).toEqual({ 'm-sglang': { ...r.body.usage, requests: 1 } });

    const s = await sse({ model: 'm-openai', stream_options: { include_usage: false } }, { 'x-project-id': P });
    const sid = s.headers.get('x-svc-call-id')!;
    const sc = await callById(sid);
    expect(sc.output.choices[0].message.content).toBe('Hello from openai');
    // Usage is recorded even though the client did not ask to see it.
    expect(sc.summary.usage['m-openai'].total_tokens).toBe(10);
    expect(s.json.some((x) => 'usage' in x)).toBe(false);

    const bad = await ask({}, { 'x-project-id': 'no-slash' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('x-project-id');
  });

  it("joins the caller's trace (W3C traceparent): the model call is one call under the caller's span, its usage counted once", async () => {
    const TP = 'acme/traced-agent';
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    const r = await ask({ model: 'm-vllm' }, { 'x-project-id': TP, traceparent: `00-${traceId}-${spanId}-01` });
    expect(r.status, r.text).toBe(200);
    const c = await callById(r.headers.get('x-svc-call-id')!, TP);
    expect(c).toMatchObject({ trace_id: traceId, parent_id: spanId });
    // The caller's own instrumentation exports its span of the same request, with the same usage.
    const u = r.body.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    const now = BigInt(Date.now()) * 1_000_000n;
    const attr = (key: string, v: string | number) => ({
      key,
      value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
    });
    const otlp = {
      resourceSpans: [
        {
          resource: { attributes: [attr('service.name', 'agent')] },
          scopeSpans: [
            {
              scope: { name: 'opentelemetry.instrumentation.openai_v2' },
              spans: [
                {
                  traceId,
                  spanId,
                  name: 'chat m-vllm',
                  kind: 3,
                  startTimeUnixNano: String(now - 50_000_000n),
                  endTimeUnixNano: String(now),
                  attributes: [
                    attr('gen_ai.operation.name', 'chat'),
                    attr('gen_ai.request.model', 'm-vllm'),
                    attr('gen_ai.usage.input_tokens', u.prompt_tokens),
                    attr('gen_ai.usage.output_tokens', u.completion_tokens),
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const sent = await api.raw('/otel/v1/traces', JSON.stringify(otlp), { 'content-type': 'application/json', project_id: TP });
    expect(sent.status, sent.text).toBe(200);
    const trace = await api.jsonl('/calls/stream_query', { project_id: TP, filter: { trace_ids: [traceId] } });
    expect(trace.map((x) => [x.id, x.parent_id]).sort()).toEqual([
      [spanId, null],
      [c.id, spanId],
    ]);
    const q = await api.post('/analytics/query', { project_id: TP, metrics: ['count', 'requests', 'total_tokens'] });
    expect(q.body.rows).toEqual([{ count: 2, requests: 1, total_tokens: u.total_tokens }]);

    // A traceparent that does not parse is ignored: the call is its own trace.
    const loose = await ask({}, { 'x-project-id': TP, traceparent: `00-${'0'.repeat(32)}-${spanId}-01` });
    const lc = await callById(loose.headers.get('x-svc-call-id')!, TP);
    expect(lc.trace_id).not.toBe('0'.repeat(32));
    expect(lc.parent_id).toBeNull();
  });

  it('links a replay to the call it replays (x-weft-source-call-id → attributes.weft.source_call_id)', async () => {
    const source = await ask({ model: 'm-vllm' }, { 'x-project-id': P });
    const sourceId = source.headers.get('x-svc-call-id')!;
    const replay = await ask({ model: 'm-sglang' }, { 'x-project-id': P, 'x-weft-source-call-id': sourceId });
    expect(replay.status, replay.text).toBe(200);
    const c = await callById(replay.headers.get('x-svc-call-id')!);
    expect(c.attributes.weft).toEqual({ source_call_id: sourceId });
    // The replays of a call are a query away.
    const replays = await api.jsonl('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'attributes.weft.source_call_id' }, { $literal: sourceId }] } },
    });
    expect(replays.map((x) => x.id)).toEqual([c.id]);
    const bad = await ask({}, { 'x-project-id': P, 'x-weft-source-call-id': 'not an id' });
    expect([bad.status, bad.body.error.param]).toEqual([400, 'x-weft-source-call-id']);
    const untraced = await ask({}, { 'x-weft-source-call-id': sourceId });
    expect([untraced.status, untraced.body.error.param]).toEqual([400, 'x-weft-source-call-id']);
  });
});

describe('model records', () => {
  const M = '/v1/preview/models';
  it('creates a record with the caller’s default entity; 409 on a duplicate name; return_existing gives the same record', async () => {
    const a = await chat.post(M, { project: 'rl', name: 'agent-1', base_model: 'OpenPipe/Qwen3-14B-Instruct' });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ project: 'rl', name: 'agent-1', base_model: 'OpenPipe/Qwen3-14B-Instruct', run_id: null });
    expect(a.body.id).toMatch(/^[0-9a-f-]{36}$/);
    // The key's default entity: its user's own name (the bootstrap key's user is `admin`).
    expect(a.body.entity).toBe('admin');
    const dup = await chat.post(M, { project: 'rl', name: 'agent-1', base_model: 'other' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ type: 'ConflictError', param: 'name', code: 409 });
    const again = await chat.post(M, { project: 'rl', name: 'agent-1', base_model: 'other', return_existing: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(a.body);
    const elsewhere = await chat.post(M, { project: 'rl', entity: 'team-x', name: 'agent-1', base_model: 'b' });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.entity).toBe('team-x');
    expect(elsewhere.body.id).not.toBe(a.body.id);
    const bad = await chat.post(M, { project: 'rl', base_model: 'b' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('name');
  });

  it('keeps names unique under concurrent creates', async () => {
    const body = { project: 'rl', entity: 'race', name: 'contended', base_model: 'b' };
    const plain = await Promise.all(Array.from({ length: 12 }, () => chat.post(M, body)));
    expect(plain.filter((r) => r.status === 200)).toHaveLength(1);
    expect(plain.filter((r) => r.status === 409)).toHaveLength(11);
    const body2 = { ...body, name: 'contended-2', return_existing: true };
    const existing = await Promise.all(Array.from({ length: 12 }, () => chat.post(M, body2)));
    expect(new Set(existing.map((r) => r.body.id)).size).toBe(1);
  });
});

describe('custom providers: Provider and ProviderModel objects of the project, model custom::<provider>::<model>', () => {
  const CP = 'acme/custom-providers';
  const createObj = async (project: string, object_id: string, val: Record<string, unknown>, builtin_object_class: string) => {
    const r = await api.post('/obj/create', { obj: { project_id: project, object_id, val, builtin_object_class } });
    expect(r.status, r.text).toBe(200);
    return r.body.digest as string;
  };
  const complete = (model: string, project = CP) =>
    api.post('/completions/create', { project_id: project, inputs: { model, messages: msg('hi') } });
  const providerRequests = () => upstream.requests.filter((r) => r.headers['x-custom-header'] === 'value');

  beforeAll(async () => {
    // As the UI's provider setup stores them; the base URL with a trailing slash, as users type it.
    const base = `${upstream.url}/openai/v1/`;
    const extra_headers = { 'X-Custom-Header': 'value' };
    await createObj(CP, 'my-prov', { base_url: base, api_key_name: 'FAKE_PROVIDER_KEY', extra_headers }, 'Provider');
    await createObj(CP, 'my-prov-small', { name: 'small-model', provider: 'my-prov', max_tokens: 100 }, 'ProviderModel');
    await createObj(
      CP,
      'metadata',
      { base_url: 'http://169.254.169.254/latest', api_key_name: 'FAKE_PROVIDER_KEY', extra_headers },
      'Provider',
    );
    await createObj(CP, 'metadata-m', { name: 'm', provider: 'metadata', max_tokens: 1 }, 'ProviderModel');
    await createObj(CP, 'nosecret', { base_url: base, api_key_name: 'PATH', extra_headers }, 'Provider');
    await createObj(CP, 'nosecret-m', { name: 'm', provider: 'nosecret', max_tokens: 1 }, 'ProviderModel');
    await createObj(CP, 'unset', { base_url: base, api_key_name: 'WEFT_TEST_UNSET_KEY', extra_headers }, 'Provider');
    await createObj(CP, 'unset-m', { name: 'm', provider: 'unset', max_tokens: 1 }, 'ProviderModel');
  });

  it("answers through the provider's API with its key and headers, and records usage keyed <provider>/<model>", async () => {
    const before = providerRequests().length;
    const r = await complete('custom::my-prov::small');
    expect(r.status, r.text).toBe(200);
    expect(r.body.response.choices[0].message.content).toBe('Hello from openai');
    expect(r.body.response.model).toBe('custom::my-prov::small');
    const [sent] = providerRequests().slice(before);
    expect(sent).toMatchObject({ path: '/openai/v1/chat/completions', body: { model: 'small-model', messages: msg('hi') } });
    expect(sent!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    const c = await callById(r.body.svc_call_id, CP);
    expect(c.op_name).toBe('weave.completions_create');
    expect(Object.keys(c.summary.usage)).toEqual(['my-prov/small-model']);

    const lines = await api.jsonl('/completions/create_stream', {
      project_id: CP,
      inputs: { model: 'custom::my-prov::small', messages: msg('hi') },
    });
    expect(lines[0]._meta.svc_call_id).toBeTruthy();
    expect(
      lines
        .slice(1)
        .map((l) => l.choices?.[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Hello from openai');
  });

  it('answers an error, calling nothing, for a missing model, a base URL not allowed, a key not listed or unset, another project', async () => {
    const before = upstream.requests.length;
    const error = async (model: string, project = CP) => {
      const r = await complete(model, project);
      expect(r.status, r.text).toBe(200);
      expect(r.body.svc_call_id).toBeNull();
      return r.body.response.error as string;
    };
    expect(await error('custom::my-prov::large')).toMatch(/^Failed to fetch provider model information: /);
    expect(await error('custom::metadata::m')).toContain('base URL http://169.254.169.254/latest is not one this server may call');
    expect(await error('custom::nosecret::m')).toBe('No API key PATH found for provider nosecret');
    expect(await error('custom::unset::m')).toBe('No API key WEFT_TEST_UNSET_KEY found for provider unset');
    // Another project has no such provider, though this one has.
    expect(await error('custom::my-prov::small', 'acme/other-project')).toMatch(/^Failed to fetch provider model information: /);
    expect(upstream.requests.length).toBe(before);
  });
});
