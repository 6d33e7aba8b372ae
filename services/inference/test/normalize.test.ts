import { describe, expect, it } from 'vitest';
import { StreamAggregator } from '../src/aggregate';
import { normalizeChunk, parseUpstreamError } from '../src/normalize';
import { unsupported, upstreamRequest } from '../src/dialects';

describe('parseUpstreamError', () => {
  it('reads every error shape model servers use', () => {
    expect(parseUpstreamError('{"error":{"message":"m","type":"BadRequestError","param":"n","code":400}}', 'x')).toEqual({
      message: 'm',
      type: 'BadRequestError',
      param: 'n',
    });
    expect(parseUpstreamError({ object: 'error', message: 'flat', type: 'Bad Request', param: null, code: 400 }, 'x')).toEqual({
      message: 'flat',
      type: 'Bad Request',
      param: null,
    });
    expect(parseUpstreamError('{"error":"Input validation error","error_type":"validation"}', 'x')).toEqual({
      message: 'Input validation error',
      type: 'validation',
      param: null,
    });
    expect(parseUpstreamError('{"detail":[{"loc":["body"],"msg":"bad"}]}', 'x').message).toContain('"msg":"bad"');
    expect(parseUpstreamError('Bad Gateway', 'x')).toEqual({ message: 'Bad Gateway', type: null, param: null });
    expect(parseUpstreamError('', 'HTTP 500').message).toBe('HTTP 500');
  });
});

describe('StreamAggregator', () => {
  it('joins interleaved choices, merges tool-call fragments by index, drops calls without id or name', () => {
    const agg = new StreamAggregator('m');
    const ident = { id: 'chatcmpl-1', model: 'm', created: 1 };
    const chunks = [
      {
        choices: [
          { index: 0, delta: { role: 'assistant', content: '' } },
          { index: 1, delta: { role: 'assistant' } },
        ],
      },
      { choices: [{ index: 1, delta: { content: 'B1' } }] },
      { choices: [{ index: 0, delta: { content: 'A1', reasoning: 'r' } }] },
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a"' } },
                { index: 1, function: { arguments: 'orphan' } },
              ],
            },
          },
        ],
      },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }] },
      { choices: [{ index: 1, delta: {}, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } },
    ];
    for (const c of chunks) {
      const n = normalizeChunk(c, ident);
      agg.add(n.usage ? { ...n.chunk, usage: n.usage } : n.chunk);
    }
    const out = agg.result();
    expect(out.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'A1',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          function_call: null,
          reasoning_content: 'r',
        },
        finish_reason: 'tool_calls',
      },
      {
        index: 1,
        message: { role: 'assistant', content: 'B1', tool_calls: null, function_call: null, reasoning_content: null },
        finish_reason: 'stop',
      },
    ]);
    expect(out.usage).toEqual({ prompt_tokens: 1, total_tokens: 3, completion_tokens: 2, prompt_tokens_details: null });
    expect(out.id).toBe('chatcmpl-1');
  });
});

describe('dialects', () => {
  it('always asks a streaming upstream for usage, passes continuous stats only to vLLM', () => {
    const req = { model: 'm', messages: [], stream_options: { include_usage: false, continuous_usage_stats: true } };
    expect(upstreamRequest('vllm', req, { stream: true, requestId: 'r' }).stream_options).toEqual({
      include_usage: true,
      continuous_usage_stats: true,
    });
    expect(upstreamRequest('sglang', req, { stream: true, requestId: 'r' }).stream_options).toEqual({ include_usage: true });
    expect(upstreamRequest('vllm', req, { stream: false, requestId: 'r' })).not.toHaveProperty('stream_options');
  });
  it('turns a vLLM json constraint into OpenAI response_format, refuses regex there', () => {
    const req = { model: 'm', messages: [], structured_outputs: { json: '{"type":"object"}' } };
    expect(upstreamRequest('openai', req, { stream: false, requestId: 'r' }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'structured_output', schema: { type: 'object' } },
    });
    expect(unsupported('openai', { structured_outputs: { regex: 'a+' } })?.[0]).toBe('structured_outputs.regex');
    expect(unsupported('vllm', { structured_outputs: { regex: 'a+' }, n: 4 })).toBeNull();
  });
});
