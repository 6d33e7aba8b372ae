import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible model server: the one stand-in of the test suite (a model
 * server is outside weft). It speaks the chat completions wire format of each dialect,
 * quirks included, at `/<dialect>/v1/chat/completions`, and records every request (body,
 * headers, whether the client aborted it). It also serves `/<dialect>/v1/completions`
 * (legacy, prompt in; the prompt picks the answer as below), `/<dialect>/v1/embeddings`
 * (a 3-number vector per input, float or base64) and, for vllm and openai only,
 * `/<dialect>/v1/models` (the others answer 404 there, as servers without a model list do).
 * vllm and openai also serve `/<dialect>/v1/responses` (the Responses API: whole or streamed as
 * its SSE events, function tools, `previous_response_id` for the responses it gave).
 *
 * What it answers is chosen by the last user message:
 *   (anything)         "Hello from <dialect>" in three tokens
 *   "slow"             20 tokens, 100 ms apart (streaming)
 *   "hang"             never answers
 *   "fail"             500 in the dialect's error shape
 *   "bad"              400 in the dialect's error shape
 *   "busy"             429 with Retry-After: 7
 *   "midstream-error"  two tokens, then an in-band error event
 *   "drop"             two tokens, then the connection is cut
 *   "stall"            two tokens, then silence (the connection stays open)
 *   "tools"            a tool call (fragmented arguments; whole for Ollama)
 *   "reasoning"        reasoning text before the answer
 * A conversation ending in a tool result is answered with the plain text, so an agent that
 * asked for a tool ("tools") gets its final answer on the next turn.
 *
 * A test may script chat answers instead (`script`): e.g. an LLM judge's verdicts, whose last
 * user message is the judged call's JSON.
 */

export type FakeDialect = 'vllm' | 'sglang' | 'llamacpp' | 'ollama' | 'openai';

export interface RecordedRequest {
  dialect: FakeDialect;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, any>;
  /** The client closed the connection before the answer was complete. */
  aborted: boolean;
  finished: boolean;
}

/** A scripted chat answer: the assistant's content (after `delayMs`, a slow model), or an error status in the dialect's shape. */
export type ScriptedReply = { content: string | null; delayMs?: number } | { status: number; message?: string };
/** Picks the answer to a (non-streaming) chat request; undefined: the built-in answers above. */
export type ChatScript = (body: Record<string, any>) => ScriptedReply | undefined;

export interface ModelServer {
  url: string;
  requests: RecordedRequest[];
  /** Adds a script, asked before the built-in answers (the latest added first). */
  script(fn: ChatScript): void;
  /** Resolves with the first recorded request matching `pred` (polls). */
  waitFor(pred: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/** OpenAI's own fields: the `openai` dialect rejects anything else, as api.openai.com does. */
const OPENAI_ONLY = new Set([
  'messages',
  'model',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'presence_penalty',
  'response_format',
  'seed',
  'stop',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  'reasoning_effort',
  'service_tier',
  'metadata',
  'store',
  'modalities',
  'audio',
  'prediction',
]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startModelServer(opts: { vllmKey?: string } = {}): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const scripts: ChatScript[] = [];
  // The conversations of the responses given, by id, for `previous_response_id`.
  const stored = new Map<string, unknown[]>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const m = /^\/(vllm|sglang|llamacpp|ollama|openai)\/v1\/(chat\/completions\/?|completions|embeddings|models|responses)$/.exec(
        req.url ?? '',
      );
      const listing = m?.[2] === 'models';
      // Model lists and the Responses API: vLLM and OpenAI serve them; the others answer 404.
      const vllmOrOpenAi = m?.[1] === 'vllm' || m?.[1] === 'openai';
      if (!m || req.method !== (listing ? 'GET' : 'POST') || ((listing || m[2] === 'responses') && !vllmOrOpenAi)) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      const rec: RecordedRequest = {
        dialect: m[1] as FakeDialect,
        path: req.url!,
        headers: req.headers,
        body: JSON.parse(raw || '{}'),
        aborted: false,
        finished: false,
      };
      if (m[2] !== 'chat/completions' && m[2] !== 'chat/completions/') {
        requests.push(rec);
        const other =
          m[2] === 'models'
            ? answerModels
            : m[2] === 'embeddings'
              ? answerEmbeddings
              : m[2] === 'responses'
                ? (r: RecordedRequest, out: ServerResponse) => answerResponses(r, out, stored)
                : answerText;
        void other(rec, res).then(() => (rec.finished = res.writableFinished));
        return;
      }
      requests.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) rec.aborted = true;
      });
      void answer(rec, res, opts, scripts).then(() => (rec.finished = res.writableFinished));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (fn) => void scripts.unshift(fn),
    async waitFor(pred, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.find(pred);
        if (found) return found;
        if (Date.now() > until) throw new Error('model server: no matching request');
        await sleep(20);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function lastUserText(body: Record<string, any>): string {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  if (msgs.at(-1)?.role === 'tool') return '';
  const last = [...msgs].reverse().find((x: any) => x.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
}

function errorBody(d: FakeDialect, status: number, message: string): unknown {
  switch (d) {
    case 'vllm':
      return { error: { message, type: status === 400 ? 'BadRequestError' : 'InternalServerError', param: null, code: status } };
    case 'sglang':
      return { object: 'error', message, type: status === 400 ? 'BadRequestError' : 'InternalServerError', param: null, code: status };
    case 'llamacpp':
      return { error: { code: status, message, type: status === 400 ? 'invalid_request_error' : 'server_error' } };
    case 'ollama':
      return { error: { message, type: status === 400 ? 'invalid_request_error' : 'api_error', param: null, code: null } };
    case 'openai':
      return { error: { message, type: 'invalid_request_error', param: null, code: status === 400 ? 'invalid_value' : null } };
  }
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

async function answer(rec: RecordedRequest, res: ServerResponse, opts: { vllmKey?: string }, scripts: ChatScript[]): Promise<void> {
  const { dialect: d, body } = rec;
  if (d === 'vllm' && opts.vllmKey && rec.headers.authorization !== `Bearer ${opts.vllmKey}`) {
    return void json(res, 401, { error: 'Unauthorized' });
  }
  if (d === 'openai') {
    const unknown = Object.keys(body).find((k) => !OPENAI_ONLY.has(k));
    if (unknown) return void json(res, 400, errorBody(d, 400, `Unrecognized request argument supplied: ${unknown}`));
  }
  const scripted = body.stream ? undefined : scripts.map((fn) => fn(body)).find((r) => r !== undefined);
  if (scripted && 'status' in scripted)
    return void json(res, scripted.status, errorBody(d, scripted.status, scripted.message ?? 'scripted failure'));
  if (scripted?.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
  const text = lastUserText(body);
  if (text === 'hang') return; // never answers; the client must give up
  if (text === 'fail') return void json(res, 500, errorBody(d, 500, 'engine crashed'));
  if (text === 'bad') return void json(res, 400, errorBody(d, 400, 'bad request from upstream'));
  if (text === 'busy') {
    res.setHeader('retry-after', '7');
    return void json(res, 429, errorBody(d, 429, 'too many requests'));
  }

  const tokens = text === 'slow' ? Array.from({ length: 20 }, (_, i) => `t${i} `) : ['Hello', ' from', ` ${d}`];
  const usage = { prompt_tokens: 7, completion_tokens: tokens.length, total_tokens: 7 + tokens.length };
  const created = 1_730_000_000;
  const model = d === 'llamacpp' ? 'gpt-3.5-turbo' : String(body.model); // llama.cpp ignores the model name
  const id = d === 'vllm' ? `chatcmpl-${body.request_id}` : `upstream-${d}-id`;

  if (!body.stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: scripted ? scripted.content : tokens.join('') };
    let finish = 'stop';
    if (text === 'tools') {
      message.content = null;
      message.tool_calls = [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: d === 'ollama' ? { city: 'Paris' } : '{"city": "Paris"}' },
        },
      ];
      finish = 'tool_calls';
    }
    if (text === 'reasoning') message[d === 'ollama' ? 'reasoning' : 'reasoning_content'] = 'thinking hard';
    const choice: Record<string, unknown> = { index: 0, message, logprobs: null, finish_reason: finish };
    if (d === 'vllm') Object.assign(choice, { stop_reason: null, token_ids: null });
    if (d === 'sglang') choice.matched_stop = 2;
    const out: Record<string, unknown> = { id, object: 'chat.completion', created, model, choices: [choice], usage };
    if (d === 'llamacpp') out.timings = { prompt_n: 7, predicted_n: 3, predicted_ms: 12.5 };
    if (d === 'ollama') out.system_fingerprint = 'fp_ollama';
    if (d === 'vllm') Object.assign(out, { prompt_logprobs: null, prompt_token_ids: null, kv_transfer_params: null });
    return void json(res, 200, out);
  }

  // Streaming. Line endings, keep-alive comments and usage placement differ per dialect.
  const nl = d === 'llamacpp' ? '\r\n' : '\n';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (obj: unknown) => res.write(`data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}${nl}${nl}`);
  const includeUsage = body.stream_options
    ? (body.stream_options.include_usage ?? d === 'vllm') // vLLM defaults it on, SGLang/OpenAI off
    : false;
  const base = (choices: unknown[], extra: Record<string, unknown> = {}) => {
    const c: Record<string, unknown> = { id, object: 'chat.completion.chunk', created, model, choices, ...extra };
    if (d === 'openai' && includeUsage && !('usage' in extra)) c.usage = null; // OpenAI sends usage:null on every chunk
    if (d === 'ollama') c.system_fingerprint = 'fp_ollama';
    // vLLM's continuous_usage_stats: running usage on every chunk.
    if (d === 'vllm' && includeUsage && body.stream_options?.continuous_usage_stats && !('usage' in extra)) c.usage = usage;
    return c;
  };
  if (d === 'llamacpp') res.write(`: ping${nl}${nl}`);
  send(base([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
  if (text === 'reasoning') {
    send(
      base([
        { index: 0, delta: { [d === 'ollama' ? 'reasoning' : 'reasoning_content']: 'thinking hard' }, logprobs: null, finish_reason: null },
      ]),
    );
  }
  if (text === 'tools') {
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } };
    if (d === 'ollama') {
      send(
        base([
          {
            index: 0,
            delta: { tool_calls: [{ ...call, function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
            finish_reason: null,
          },
        ]),
      );
    } else {
      send(base([{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }]));
      for (const frag of ['{"city', '": "Par', 'is"}'])
        send(base([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: frag } }] }, finish_reason: null }]));
    }
    send(base([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
  } else {
    for (const [i, t] of tokens.entries()) {
      if (res.destroyed) return;
      if (text === 'slow') await sleep(100);
      send(base([{ index: 0, delta: { content: t }, logprobs: null, finish_reason: null }]));
      if (i === 1 && text === 'midstream-error') {
        send({ error: { message: 'engine died mid-stream', type: 'InternalServerError', param: null, code: 500 } });
        send('[DONE]');
        return void res.end();
      }
      if (i === 1 && text === 'stall') return; // never another byte
      if (i === 1 && text === 'drop') {
        await sleep(20);
        return void res.destroy();
      }
    }
    const finish: Record<string, unknown> = { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' };
    if (d === 'vllm') finish.stop_reason = null;
    if (d === 'sglang') finish.matched_stop = 2;
    // llama.cpp puts usage on the finish chunk instead of a separate one.
    send(base([finish], d === 'llamacpp' && includeUsage ? { usage, timings: { predicted_n: 3 } } : {}));
  }
  if (includeUsage && d !== 'llamacpp') send(base([], { usage }));
  // llama.cpp (some versions) ends without [DONE].
  if (d !== 'llamacpp') send('[DONE]');
  res.end();
}

/** `GET /v1/models` as vLLM (with max_model_len) and OpenAI (without) answer it. */
async function answerModels(rec: RecordedRequest, res: ServerResponse): Promise<void> {
  const d = rec.dialect;
  const card: Record<string, unknown> = {
    id: `m-${d}`,
    object: 'model',
    created: 1_700_000_000,
    owned_by: d === 'vllm' ? 'vllm' : 'system',
  };
  if (d === 'vllm') Object.assign(card, { root: '/models/base-7b', parent: null, max_model_len: 4096, permission: [] });
  json(res, 200, { object: 'list', data: [card] });
}

/** `POST /v1/embeddings`: vector `[input length, 0.5, -0.25]` per input, float or base64 (float32 LE). */
async function answerEmbeddings(rec: RecordedRequest, res: ServerResponse): Promise<void> {
  const { body, dialect: d } = rec;
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  if (inputs.includes('fail')) return void json(res, 500, errorBody(d, 500, 'engine crashed'));
  const data = inputs.map((x, index) => {
    const v = [typeof x === 'string' ? x.length : Array.isArray(x) ? x.length : 1, 0.5, -0.25];
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
    return { object: 'embedding', index, embedding };
  });
  const tokens = inputs.length * 2;
  json(res, 200, {
    id: `embd-${d}`,
    object: 'list',
    created: 1_730_000_000,
    model: String(body.model),
    data,
    usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0, prompt_tokens_details: null },
  });
}

/** `POST /v1/completions` (legacy): the prompt picks the answer, as the last user message does for chat. */
async function answerText(rec: RecordedRequest, res: ServerResponse): Promise<void> {
  const { body, dialect: d } = rec;
  const prompt = Array.isArray(body.prompt) ? String(body.prompt[0]) : String(body.prompt ?? '');
  if (prompt === 'fail') return void json(res, 500, errorBody(d, 500, 'engine crashed'));
  if (prompt === 'bad') return void json(res, 400, errorBody(d, 400, 'bad request from upstream'));
  const tokens = ['Hello', ' from', ` ${d}`];
  const usage = { prompt_tokens: 5, completion_tokens: tokens.length, total_tokens: 5 + tokens.length };
  const created = 1_730_000_000;
  const id = d === 'vllm' ? `cmpl-${body.request_id}` : `upstream-${d}-id`;
  const model = String(body.model);
  if (!body.stream) {
    const choice: Record<string, unknown> = {
      index: 0,
      text: (body.echo ? prompt : '') + tokens.join(''),
      logprobs: null,
      finish_reason: 'length',
    };
    if (d === 'vllm') Object.assign(choice, { stop_reason: null, prompt_logprobs: null });
    if (d === 'sglang') choice.matched_stop = null;
    return void json(res, 200, { id, object: 'text_completion', created, model, choices: [choice], usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (obj: unknown) => res.write(`data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}\n\n`);
  for (const [i, t] of tokens.entries()) {
    send({
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ index: 0, text: t, logprobs: null, finish_reason: i === tokens.length - 1 ? 'length' : null }],
    });
  }
  if (body.stream_options?.include_usage) send({ id, object: 'text_completion', created, model, choices: [], usage });
  send('[DONE]');
  res.end();
}

/** A Responses API input (string, or items) as items. */
const responseItems = (input: unknown): Record<string, any>[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input : [];

/** The text of the last user message of a Responses conversation; '' after a function call's output. */
function lastUserInput(items: Record<string, any>[]): string {
  if (items.at(-1)?.type === 'function_call_output') return '';
  const last = [...items].reverse().find((x) => (x.type ?? 'message') === 'message' && x.role === 'user');
  const c = last?.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';
}

/**
 * `POST /v1/responses`: the last user input picks the answer as for chat ("tools": a get_weather
 * function call; "fail"/"bad": 500/400; else "Hello from <dialect>" in three tokens). Each answer
 * is stored, so a later request may continue it with `previous_response_id` (an unknown id: 404).
 */
async function answerResponses(rec: RecordedRequest, res: ServerResponse, stored: Map<string, unknown[]>): Promise<void> {
  const { body, dialect: d } = rec;
  let history: unknown[] = [];
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    const prev = stored.get(String(body.previous_response_id));
    if (!prev) {
      return void json(res, 404, {
        error: {
          message: `Previous response with id '${body.previous_response_id}' not found.`,
          type: 'invalid_request_error',
          param: 'previous_response_id',
          code: d === 'vllm' ? 404 : 'previous_response_not_found',
        },
      });
    }
    history = prev;
  }
  const items = [...history, ...responseItems(body.input)] as Record<string, any>[];
  const text = lastUserInput(items);
  if (text === 'fail') return void json(res, 500, errorBody(d, 500, 'engine crashed'));
  if (text === 'bad') return void json(res, 400, errorBody(d, 400, 'bad request from upstream'));
  const id = `resp_${d}_${stored.size + 1}`;
  const tokens = ['Hello', ' from', ` ${d}`];
  const output: Record<string, any>[] =
    text === 'tools'
      ? [
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_1',
            name: 'get_weather',
            arguments: '{"city": "Paris"}',
            status: 'completed',
          },
        ]
      : [
          {
            type: 'message',
            id: `msg_${id}`,
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: tokens.join(''), annotations: [], logprobs: [] }],
          },
        ];
  stored.set(id, [...items, ...output]);
  const usage = {
    input_tokens: 7,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 3,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 10,
  };
  const response = (status: string, out: unknown[], u: unknown) => ({
    id,
    object: 'response',
    created_at: 1_730_000_000,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: String(body.model),
    output: out,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: u,
    metadata: body.metadata ?? {},
  });
  if (!body.stream) return void json(res, 200, response('completed', output, usage));

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const send = (type: string, fields: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
  send('response.created', { response: response('in_progress', [], null) });
  send('response.in_progress', { response: response('in_progress', [], null) });
  const item = output[0]!;
  if (item.type === 'function_call') {
    send('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
    for (const frag of ['{"city', '": "Par', 'is"}'])
      send('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: frag });
    send('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments });
  } else {
    send('response.output_item.added', { output_index: 0, item: { ...item, content: [], status: 'in_progress' } });
    const part = { type: 'output_text', text: '', annotations: [] };
    send('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part });
    for (const t of tokens)
      send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: t, logprobs: [] });
    send('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text: tokens.join(''), logprobs: [] });
    send('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { ...part, text: tokens.join('') } });
  }
  send('response.output_item.done', { output_index: 0, item });
  send('response.completed', { response: response('completed', output, usage) });
  res.end();
}
