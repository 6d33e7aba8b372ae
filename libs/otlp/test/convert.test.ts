import { describe, expect, it } from 'vitest';
import {
  convertExportRequest,
  decodeExportTraceServiceRequest,
  encodeExportTraceServiceRequest,
  expandAttributes,
  getPath,
  OtlpRequestError,
  parseOtlpJson,
  partialSuccessOf,
  shortenOpName,
} from '../src/index';

const T = '5b8efff798038103d269b633813fc60c';
const S = 'eee19b7ec3c1b174';
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
const span = (over: Record<string, unknown> = {}) => ({
  traceId: T,
  spanId: S,
  name: 'op',
  startTimeUnixNano: '1714564800123456789',
  endTimeUnixNano: '1714564801987654321',
  ...over,
});
const req = (spans: unknown[], resource: unknown[] = []) => ({
  resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ spans }] }],
});
const one = (s: Record<string, unknown>, projectId: string | null = 'e/p') => {
  const r = convertExportRequest(req([s]), { projectId });
  if (r.errors.length) throw new Error(r.errors.join('\n'));
  return r.calls[0]!;
};

describe('ids and times', () => {
  it('reads hex, upper-case hex, base64 and raw bytes ids; empty and zero parents are roots', () => {
    const b64 = (h: string) => Buffer.from(h, 'hex').toString('base64');
    for (const [traceId, spanId] of [
      [T, S],
      [T.toUpperCase(), S.toUpperCase()],
      [b64(T), b64(S)],
      [Buffer.from(T, 'hex'), Buffer.from(S, 'hex')],
    ]) {
      const c = one(span({ traceId, spanId, parentSpanId: '' }));
      expect(c.start).toMatchObject({ id: S, trace_id: T, parent_id: null });
    }
    expect(one(span({ parentSpanId: '0000000000000000' })).start.parent_id).toBeNull();
    expect(one(span({ parentSpanId: 'AAAAAAAAAAE=' })).start.parent_id).toBe('0000000000000001');
  });

  it('keeps microsecond precision from string, number, Long and bigint nanos (truncating the nanoseconds)', () => {
    const long = (n: bigint) => ({ low: Number(n & 0xffffffffn) | 0, high: Number(n >> 32n) | 0, unsigned: true });
    for (const start of ['1714564800123456789', long(1714564800123456789n), 1714564800123456789n]) {
      expect(one(span({ startTimeUnixNano: start })).start.started_at).toBe('2024-05-01T12:00:00.123456Z');
    }
    // A safe JSON number is exact too.
    expect(one(span({ startTimeUnixNano: 1714564800123000, endTimeUnixNano: 1714564800124000 })).start.started_at).toBe(
      '1970-01-20T20:16:04.800123Z',
    );
    expect(one(span()).end.ended_at).toBe('2024-05-01T12:00:01.987654Z');
  });

  it('rejects bad ids and times with the reference message format', () => {
    const r = convertExportRequest(
      req([
        span({ spanId: 'xyz', name: 'a' }),
        span({ traceId: '00000000000000000000000000000000', name: 'b' }),
        span({ startTimeUnixNano: '0', name: 'c' }),
        span({ endTimeUnixNano: '1714564800000000000', name: 'd' }),
        span({ startTimeUnixNano: '1.5e18', name: 'e' }),
        span({ name: '' }),
        span({ name: 'ok', spanId: '00000000000000ff' }),
      ]),
      { projectId: 'e/p' },
    );
    expect(r.calls.map((c) => c.start.op_name)).toEqual(['ok']);
    expect(r.rejectedSpans).toBe(6);
    expect(r.errors[0]).toBe(
      `Rejected span (name='a' trace_id='${T}' span_id='xyz'): invalid span_id: expected 8 bytes as 16 hex characters (or base64)`,
    );
    expect(r.errors[1]).toContain('invalid trace_id: missing or all zeros');
    expect(r.errors[2]).toContain('invalid start_time_unix_nano: missing or zero');
    expect(r.errors[3]).toContain('invalid end_time_unix_nano: before start_time_unix_nano');
    expect(r.errors[4]).toContain('invalid start_time_unix_nano');
    expect(r.errors[5]).toContain('invalid name');
    expect(partialSuccessOf(r)).toEqual({ rejected_spans: 6, error_message: r.errors.join('; ') });
  });

  it('caps the message list at 20 and says so', () => {
    const r = convertExportRequest(req(Array.from({ length: 21 }, () => span({ spanId: 'x' }))), { projectId: 'e/p' });
    const p = partialSuccessOf(r)!;
    expect(p.rejected_spans).toBe(21);
    expect(p.error_message.endsWith('; ...')).toBe(true);
    expect(p.error_message.split('; ')).toHaveLength(21);
    expect(partialSuccessOf(convertExportRequest(req([span()]), { projectId: 'e/p' }))).toBeNull();
  });
});

describe('names and attributes', () => {
  it('shortens op names of 128+ chars to 128 with a sha256 suffix', () => {
    expect(shortenOpName('a'.repeat(127))).toBe('a'.repeat(127));
    const long = shortenOpName('b'.repeat(300));
    expect(long).toHaveLength(128);
    expect(long).toMatch(/^b{123}:[0-9a-f]{4}$/);
    expect(shortenOpName('b'.repeat(300))).toBe(long);
    expect(shortenOpName('b'.repeat(301))).not.toBe(long);
  });

  it('nests dotted keys, parses JSON-looking strings, turns 0..n-1 keys into lists', () => {
    expect(expandAttributes({ 'a.b': 1, 'a.c': '{"x": [1]}', 'l.0.v': 'p', 'l.1.v': 'q', 'gap.0': 1, 'gap.2': 2, s: '[not json' })).toEqual(
      { a: { b: 1, c: { x: [1] } }, l: [{ v: 'p' }, { v: 'q' }], gap: { '0': 1, '2': 2 }, s: '[not json' },
    );
    // Found by the property test: the top level stays a dict even when its keys are indexes.
    expect(expandAttributes({ '0.a': 1 })).toEqual({ '0': { a: 1 } });
    // A JSON value sent in one attribute is kept as sent.
    expect(expandAttributes({ j: '{"0": "x", "1": "y"}' })).toEqual({ j: { '0': 'x', '1': 'y' } });
  });

  it('keeps both values of a key that is also a prefix, whichever order the keys come in', () => {
    expect(expandAttributes({ a: 1, 'a.b': 2 })).toEqual({ a: 1, 'a.b': 2 });
    expect(expandAttributes({ 'a.b': 2, a: 1 })).toEqual({ a: 1, 'a.b': 2 });
    expect(expandAttributes({ 'a.b': 2, 'a.b.c': 1 })).toEqual({ a: { b: 2, 'b.c': 1 } });
    const forward = expandAttributes({ 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.system.x.y': 3 });
    const backward = expandAttributes({ 'db.system.x.y': 3, 'db.system.name': 'postgresql', 'db.system': 'postgresql' });
    expect(forward).toEqual({ db: { system: 'postgresql', 'system.name': 'postgresql', 'system.x.y': 3 } });
    expect(backward).toEqual(forward);
    for (const k of ['db.system', 'db.system.name', 'db.system.x.y'])
      expect(getPath(forward, k)).toBe(k === 'db.system.x.y' ? 3 : 'postgresql');
  });

  it('keeps a __proto__ key as data', () => {
    const t = expandAttributes({ '__proto__.polluted': 1, 'wandb.attributes': '{"__proto__": {"x": 1}}' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(t)).toBe(Object.prototype);
    expect(JSON.stringify(t)).toContain('"__proto__":{"polluted":1}');
  });
});

describe('conventions', () => {
  it('GenAI semconv: messages, usage keyed by response model, model parameters', () => {
    const c = one(
      span({
        attributes: [
          kv('gen_ai.request.model', 'gpt-4o'),
          kv('gen_ai.response.model', 'gpt-4o-2024-08-06'),
          kv('gen_ai.request.max_tokens', 100),
          kv('gen_ai.usage.input_tokens', 10),
          kv('gen_ai.usage.output_tokens', 5),
          kv('gen_ai.input.messages', '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]'),
          kv('gen_ai.output.messages', '[{"role":"assistant","parts":[]}]'),
          kv('gen_ai.conversation.id', 'conv-1'),
        ],
      }),
    );
    const cached = one(
      span({
        attributes: [kv('gen_ai.usage.input_tokens', 10), kv('gen_ai.usage.cache_read.input_tokens', 4), kv('gen_ai.request.model', 'm')],
      }),
    );
    expect(cached.end.summary.usage).toEqual({ m: { input_tokens: 10, cache_read_input_tokens: 4, requests: 1 } });
    // The semconv's own shape, and beside it the OpenAI chat reading.
    expect(c.start.inputs).toEqual({
      'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(c.end.output).toEqual({
      'gen_ai.output.messages': [{ role: 'assistant', parts: [] }],
      choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: null }],
    });
    expect(c.end.summary).toEqual({
      usage: { 'gpt-4o-2024-08-06': { input_tokens: 10, output_tokens: 5, total_tokens: 15, requests: 1 } },
    });
    expect(c.start.attributes).toEqual({ model: 'gpt-4o-2024-08-06', model_parameters: { model: 'gpt-4o', max_tokens: 100 } });
    expect(c.start).toMatchObject({ thread_id: 'conv-1', turn_id: S });
  });

  it('OpenLLMetry flattened prompts and completions become lists', () => {
    const c = one(
      span({
        attributes: [
          kv('gen_ai.prompt.0.role', 'system'),
          kv('gen_ai.prompt.0.content', 'be brief'),
          kv('gen_ai.prompt.1.role', 'user'),
          kv('gen_ai.prompt.1.content', 'hi'),
          kv('gen_ai.completion.0.content', 'hello'),
          kv('gen_ai.usage.prompt_tokens', 7),
          kv('gen_ai.usage.completion_tokens', 2),
          kv('llm.request.type', 'chat'),
        ],
      }),
    );
    const prompt = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ];
    expect(c.start.inputs).toEqual({ 'gen_ai.prompt': prompt, messages: prompt });
    expect(c.end.output).toEqual({
      'gen_ai.completion': [{ content: 'hello' }],
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: null }],
    });
    expect(c.end.summary.usage).toEqual({ usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, requests: 1 } });
  });

  it('OpenInference: input/output values, token counts, model name, session id', () => {
    const c = one(
      span({
        attributes: [
          kv('openinference.span.kind', 'LLM'),
          kv('input.value', '{"query": "q"}'),
          kv('output.value', 'answer'),
          kv('llm.model_name', 'llama-3'),
          kv('llm.token_count.prompt', 3),
          kv('llm.token_count.completion', 4),
          kv('llm.token_count.total', 7),
          kv('session.id', 's-1'),
        ],
        parentSpanId: '1111111111111111',
      }),
    );
    expect(c.start.inputs).toEqual({ 'input.value': { query: 'q' } });
    expect(c.end.output).toEqual({ 'output.value': 'answer' });
    expect(c.end.summary.usage).toEqual({ 'llama-3': { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, requests: 1 } });
    expect(c.start.attributes).toEqual({ kind: 'LLM', model: 'llama-3' });
    // Not a root, its parent not in the request (most often in the same session): no turn of its own.
    expect(c.start).toMatchObject({ thread_id: 's-1', turn_id: null });
  });

  it('descendants inherit the turn of their ancestor within a request', () => {
    const r = convertExportRequest(
      req([
        span({ spanId: 'aaaaaaaaaaaaaaa2', parentSpanId: 'aaaaaaaaaaaaaaa1', name: 'child', attributes: [kv('session.id', 's')] }),
        span({ spanId: 'aaaaaaaaaaaaaaa1', name: 'root', attributes: [kv('session.id', 's')] }),
      ]),
      { projectId: 'e/p' },
    );
    expect(r.calls.map((c) => [c.start.op_name, c.start.turn_id])).toEqual([
      ['child', 'aaaaaaaaaaaaaaa1'],
      ['root', 'aaaaaaaaaaaaaaa1'],
    ]);
  });

  it('a session set below the root: the topmost span of the thread is the turn, its descendants part of it', () => {
    const r = convertExportRequest(
      req([
        span({ spanId: 'bbbbbbbbbbbbbbb3', parentSpanId: 'bbbbbbbbbbbbbbb2', name: 'llm', attributes: [kv('session.id', 's')] }),
        span({ spanId: 'bbbbbbbbbbbbbbb2', parentSpanId: 'bbbbbbbbbbbbbbb1', name: 'step', attributes: [kv('session.id', 's')] }),
        span({
          spanId: 'bbbbbbbbbbbbbbb4',
          parentSpanId: 'bbbbbbbbbbbbbbb1',
          name: 'not-a-turn',
          attributes: [kv('session.id', 's'), kv('wandb.is_turn', false)],
        }),
        span({ spanId: 'bbbbbbbbbbbbbbb1', name: 'http server' }),
      ]),
      { projectId: 'e/p' },
    );
    expect(r.calls.map((c) => [c.start.op_name, c.start.thread_id, c.start.turn_id])).toEqual([
      ['llm', 's', 'bbbbbbbbbbbbbbb2'],
      ['step', 's', 'bbbbbbbbbbbbbbb2'],
      ['not-a-turn', 's', null],
      ['http server', null, null],
    ]);
  });

  it('wandb keys: display name, thread, turn, run, attributes; reference unwrap of input/output', () => {
    const c = one(
      span({
        attributes: [
          kv('wandb.display_name', 'My call'),
          kv('wandb.thread_id', 't-9'),
          kv('wandb.is_turn', true),
          kv('wandb.wb_run_id', 'run-1'),
          kv('wandb.wb_run_step', 3),
          kv('wandb.wb_run_step_end', 4),
          kv('wandb.attributes', '{"team": "x"}'),
          kv('input', '{"a": 1}'),
          kv('output', '"done"'),
        ],
        parentSpanId: '1111111111111111',
      }),
    );
    expect(c.start).toMatchObject({
      display_name: 'My call',
      thread_id: 't-9',
      turn_id: S,
      svc_run_id: 'run-1',
      svc_run_step: 3,
      inputs: { a: 1 },
    });
    expect(c.start.attributes).toEqual({ team: 'x' });
    expect(c.end).toMatchObject({ svc_run_step_end: 4, output: '"done"' });
  });

  it('with no known keys, stores all attributes; status ERROR becomes the exception', () => {
    const c = one(
      span({
        attributes: [kv('http.method', 'GET'), kv('http.status_code', 500)],
        status: { code: 'STATUS_CODE_ERROR', message: '' },
        events: [
          {
            name: 'exception',
            timeUnixNano: '1714564800500000000',
            attributes: [kv('exception.type', 'ValueError'), kv('exception.message', 'bad')],
          },
        ],
      }),
    );
    expect(c.start.attributes).toEqual({ http: { method: 'GET', status_code: 500 } });
    expect(c.end.exception).toBe('ValueError: bad');
    const dump = c.start.otel_dump as Record<string, any>;
    expect(dump.status).toEqual({ code: 'ERROR', message: '' });
    expect(dump.events[0]).toMatchObject({ name: 'exception', timestamp: '2024-05-01T12:00:00.500Z' });
    expect(one(span({ status: { code: 2, message: 'boom' } })).end.exception).toBe('boom');
    expect(one(span({ status: { code: 1 } })).end.exception).toBeNull();
  });

  it('Langfuse start/end overrides win over the span times', () => {
    const c = one(
      span({ attributes: [kv('langfuse.startTime', '2024-05-01T11:00:00.5Z'), kv('langfuse.endTime', '2024-05-01T11:00:01Z')] }),
    );
    expect(c.start.started_at).toBe('2024-05-01T11:00:00.500Z');
    expect(c.end.ended_at).toBe('2024-05-01T11:00:01Z');
  });
});

describe('OTLP/JSON numbers', () => {
  it('keeps nanosecond times sent as bare JSON numbers exact (no float rounding)', () => {
    const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${T}","spanId":"${S}","name":"n","startTimeUnixNano":1714564800123456789,"endTimeUnixNano":1714564800999999999,"kind":3,"attributes":[{"key":"i","value":{"intValue":9007199254740993}},{"key":"d","value":{"doubleValue":0.5}}]}]}]}]}`;
    expect(JSON.parse(text).resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano).toBe(1714564801000000000); // what JSON.parse would do
    const c = convertExportRequest(parseOtlpJson(text), { projectId: 'e/p' }).calls[0]!;
    expect(c.start.started_at).toBe('2024-05-01T12:00:00.123456Z');
    expect(c.end.ended_at).toBe('2024-05-01T12:00:00.999999Z');
    expect(c.start.attributes).toEqual({ i: '9007199254740993', d: 0.5 });
    expect((c.start.otel_dump as any).kind).toBe('CLIENT');
  });
});

describe('projects and request shape', () => {
  it('takes the project from wandb.entity/wandb.project when the request names none; the request project wins', () => {
    const resource = [kv('wandb.entity', 'ent'), kv('wandb.project', 'proj')];
    expect(convertExportRequest(req([span()], resource), { projectId: null }).calls[0]!.start.project_id).toBe('ent/proj');
    expect(convertExportRequest(req([span()], resource), { projectId: 'a/b' }).calls[0]!.start.project_id).toBe('a/b');
    expect(() => convertExportRequest(req([span()]), { projectId: null })).toThrow(OtlpRequestError);
  });

  it('reads snake_case OTLP/JSON member names and an empty request', () => {
    const snake = {
      resource_spans: [
        {
          scope_spans: [
            {
              spans: [
                {
                  trace_id: T,
                  span_id: S,
                  name: 'x',
                  start_time_unix_nano: 1714564800000000000n.toString(),
                  end_time_unix_nano: '1714564800000001000',
                },
              ],
            },
          ],
        },
      ],
    };
    expect(convertExportRequest(snake, { projectId: 'e/p' }).calls).toHaveLength(1);
    expect(convertExportRequest({}, { projectId: 'e/p' })).toEqual({ calls: [], rejectedSpans: 0, errors: [], rejections: [] });
  });

  it('round-trips through the generated protobuf code, Long times included', () => {
    const buf = encodeExportTraceServiceRequest({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.from(T, 'hex'),
                  spanId: Buffer.from(S, 'hex'),
                  name: 'pb',
                  startTimeUnixNano: '1714564800123456789',
                  endTimeUnixNano: '1714564800123457999',
                  attributes: [{ key: 'big', value: { intValue: '9007199254740993' } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const c = convertExportRequest(decodeExportTraceServiceRequest(buf), { projectId: 'e/p' }).calls[0]!;
    expect(c.start).toMatchObject({ id: S, trace_id: T, started_at: '2024-05-01T12:00:00.123456Z' });
    expect(c.end.ended_at).toBe('2024-05-01T12:00:00.123457Z');
    expect(c.start.attributes).toEqual({ big: '9007199254740993' });
    expect((c.start.otel_dump as any).start_time_unix_nano).toBe('1714564800123456789');
    expect(() => decodeExportTraceServiceRequest(Buffer.from([0x0a, 0xff]))).toThrow(OtlpRequestError);
  });
});

describe('span events', () => {
  it('events named like gen_ai.user.message / gen_ai.choice carry inputs and outputs (Bedrock/Strands style)', () => {
    const c = one(
      span({
        events: [
          { name: 'gen_ai.user.message', timeUnixNano: '1714564800200000000', attributes: [kv('content', '[{"text": "hi"}]')] },
          {
            name: 'gen_ai.choice',
            timeUnixNano: '1714564800900000000',
            attributes: [kv('message', 'hello'), kv('finish_reason', 'end_turn')],
          },
        ],
      }),
    );
    expect(c.start.inputs).toEqual({ 'events.gen_ai.user.message': [{ content: [{ text: 'hi' }] }] });
    expect(c.end.output).toEqual({ 'events.gen_ai.choice': [{ message: 'hello', finish_reason: 'end_turn' }] });
  });
});
