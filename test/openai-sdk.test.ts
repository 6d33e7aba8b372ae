import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, basicAuth, bearerAuth } from './helpers/client';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { ensurePythonClients, runPythonClient } from './helpers/python-clients';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { postSse } from './helpers/sse-client';

/**
 * The OpenAI-compatible front as stock clients see it: the OpenAI Python SDK (pinned, installed
 * into .cache/) against weft, with the scripted model server behind it.
 */
let upstream: ModelServer;
let weft: RunningWeft;
let v1: Client;
let api: Client;
const P = 'acme/openai-sdk';

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('openai-sdk');
  const file = join(dir, 'upstreams.json');
  const base = (d: string) => `${upstream.url}/${d}/v1`;
  writeFileSync(
    file,
    JSON.stringify({
      upstreams: [
        { name: 'vllm', base_url: base('vllm'), models: ['m-vllm', 'm-vllm-lora'] },
        { name: 'sglang', base_url: base('sglang'), models: ['m-sglang'], dialect: 'sglang' },
        { name: 'openai', base_url: base('openai'), models: ['m-openai'], dialect: 'openai' },
      ],
    }),
  );
  [weft] = await Promise.all([startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } }), ensurePythonClients()]);
  v1 = new Client(weft.url, bearerAuth('test-key'));
  api = new Client(weft.url, basicAuth('test-key'));
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

async function callById(id: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const [c] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [id] } });
    if (c?.ended_at) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`call ${id} was not recorded as ended`);
}

const get = async (path: string, authorization: string | null = bearerAuth('test-key'), method = 'GET') => {
  const res = await fetch(weft.url + path, { method, headers: authorization ? { authorization } : {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
};

describe('the OpenAI Python SDK', () => {
  let out: Record<string, any>;
  beforeAll(async () => {
    const r = await runPythonClient('openai_client.py', [`${weft.url}/v1`, 'test-key', P], { timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`openai_client.py exited ${r.code}\n${r.stderr}`);
    out = JSON.parse(r.stdout);
  }, 300_000);

  it('is the pinned 3.x SDK', () => {
    expect(out.openai_version).toBe('3.54.0');
  });

  it('lists and retrieves models, with what the upstream reports (max_model_len) and file-only fallbacks', () => {
    const list = out.models_list.ok as any[];
    expect(list.map((m) => m.id)).toEqual(['m-vllm', 'm-vllm-lora', 'm-sglang', 'm-openai']);
    // (The SDK's model adds `shutdown_date: null`, a field weft does not send.)
    expect(list[0]).toEqual({
      id: 'm-vllm',
      object: 'model',
      created: 1_700_000_000,
      owned_by: 'vllm',
      root: '/models/base-7b',
      parent: null,
      max_model_len: 4096,
      shutdown_date: null,
    });
    // Not in the upstream's own list / an upstream without a model list: from the file.
    expect(list[1]).toMatchObject({ id: 'm-vllm-lora', object: 'model', owned_by: 'vllm', root: 'm-vllm-lora', parent: null });
    expect(list[1].max_model_len).toBeUndefined();
    expect(list[2]).toMatchObject({ id: 'm-sglang', owned_by: 'sglang', root: 'm-sglang' });
    expect(list[3]).toMatchObject({ id: 'm-openai', owned_by: 'system', created: 1_700_000_000 });
    expect(out.models_retrieve.ok).toEqual(list[0]);
    expect(out.models_retrieve_unknown).toMatchObject({ error: 'NotFoundError', status: 404 });
    expect(out.models_retrieve_unknown.body).toMatchObject({
      message: 'The model `no-such-model` does not exist.',
      type: 'NotFoundError',
      code: 404,
    });
  });

  it('creates legacy completions, whole and streamed, in vLLM’s shape', async () => {
    const c = out.completion.ok.completion;
    expect(c).toMatchObject({
      object: 'text_completion',
      model: 'm-vllm',
      choices: [{ index: 0, text: 'Hello from vllm', finish_reason: 'length' }],
    });
    expect(c.id).toMatch(/^cmpl-/);
    expect(c.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    const chunks = out.completion_stream.ok as any[];
    expect(chunks.map((x) => x.choices[0]?.text ?? '').join('')).toBe('Hello from sglang');
    expect(chunks.every((x) => x.object === 'text_completion' && x.model === 'm-sglang')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 8 } });
    // The upstream got SGLang's dialect (rid) and only completion fields.
    const sent = await upstream.waitFor((r) => r.dialect === 'sglang' && r.path.endsWith('/v1/completions'));
    expect(sent.body).toMatchObject({ model: 'm-sglang', prompt: 'Say hi', stream: true, stream_options: { include_usage: true } });
    expect(sent.body.rid).toMatch(/[0-9a-f-]{36}/);
    expect(sent.body.messages).toBeUndefined();
  });

  it('raises NotFoundError with vLLM’s message for an unknown model, BadRequestError for vLLM’s rules', () => {
    expect(out.completion_unknown_model).toMatchObject({
      error: 'NotFoundError',
      status: 404,
      body: { message: 'The model `no-such-model` does not exist.', type: 'NotFoundError', param: 'model', code: 404 },
    });
    expect(out.completion_bad_logprobs).toMatchObject({
      error: 'BadRequestError',
      status: 400,
      body: { message: '`logprobs` must be a positive value or -1.', param: 'logprobs' },
    });
  });

  it('creates embeddings (the SDK’s default base64 and plain floats), passed through', () => {
    expect(out.embeddings.ok).toMatchObject({
      model: 'm-vllm',
      vectors: [
        [3, 0.5, -0.25],
        [5, 0.5, -0.25],
      ],
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(out.embeddings_float.ok).toEqual([[4, 0.5, -0.25]]);
  });

  it('traces completions and embeddings sent with x-project-id, usage counting one request', async () => {
    const c = await callById(out.completion.ok.call_id);
    expect(c.op_name).toBe('weave.text_completions_create');
    expect(c.inputs).toEqual({ model: 'm-vllm', prompt: 'Say hi', max_tokens: 5 });
    expect(c.output.choices[0].text).toBe('Hello from vllm');
    expect(c.summary.usage).toEqual({
      'm-vllm': { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: null, requests: 1 },
    });
    const e = await callById(out.embeddings.ok.call_id);
    expect(e.op_name).toBe('weave.embeddings_create');
    expect(e.inputs).toMatchObject({ model: 'm-vllm', input: ['abc', 'hello'] });
    expect(e.summary.usage['m-vllm']).toMatchObject({ prompt_tokens: 4, requests: 1 });
  });

  it('gets unknown paths and methods under /v1 answered in the OpenAI error shape', () => {
    expect(out.unknown_path).toMatchObject({ error: 'NotFoundError', status: 404, body: { type: 'Not Found', code: 404 } });
    expect(out.unknown_path.message).toContain('/v1/no/such/thing');
    expect(out.wrong_method).toMatchObject({ status: 405, body: { code: 405 } });
  });
});

describe('the /v1 routes over plain HTTP', () => {
  it('need a key, in the OpenAI error shape', async () => {
    const r = await get('/v1/models', null);
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 401 });
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    const post = await v1.raw('/v1/completions', 'not json');
    expect(post.status).toBe(400);
    expect(post.body.error.code).toBe(400);
  });

  it('answer 405 with Allow for a known path and a wrong method', async () => {
    const r = await get('/v1/chat/completions');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.body.error).toMatchObject({ code: 405, type: 'Method Not Allowed' });
  });

  it('stream a traced legacy completion and record the joined text', async () => {
    const s = await postSse(
      weft.url + '/v1/completions',
      { model: 'm-vllm', prompt: 'Say hi', stream: true },
      { authorization: bearerAuth('test-key'), 'x-project-id': P },
    );
    expect(s.status).toBe(200);
    expect(s.events.at(-1)!.data).toBe('[DONE]');
    const c = await callById(s.headers.get('x-svc-call-id')!);
    expect(c.output).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: 'Hello from vllm', finish_reason: 'length' }],
    });
    // Usage recorded although the client did not ask to see it.
    expect(c.summary.usage['m-vllm']).toMatchObject({ total_tokens: 8, requests: 1 });
    expect(s.json.some((x: any) => x?.usage)).toBe(false);
  });

  it('refuse vLLM’s invalid completions before any upstream call', async () => {
    const before = upstream.requests.length;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ model: 'm-vllm' }, 'prompt', 'At least one of `prompt` or `prompt_embeds` must be set.'],
      [
        { model: 'm-vllm', prompt: 'x', stream_options: { include_usage: true } },
        'stream_options',
        'Stream options can only be defined when `stream=True`.',
      ],
      [{ model: 'm-vllm', prompt: 'x', suffix: 'y' }, 'suffix', 'suffix is not currently supported'],
      [{ model: 'm-vllm', prompt: 'x', temperature: -1 }, 'temperature', 'temperature must be non-negative, got -1.0.'],
    ];
    for (const [body, param, message] of cases) {
      const r = await v1.post('/v1/completions', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatchObject({ message, param, code: 400 });
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('pass upstream embedding failures on as 502 and record the exception', async () => {
    const r = await v1.post('/v1/embeddings', { model: 'm-openai', input: 'fail' }, { 'x-project-id': P });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain('engine crashed');
    const c = await callById(r.headers.get('x-svc-call-id')!);
    expect(c.exception).toContain('engine crashed');
  });
});
