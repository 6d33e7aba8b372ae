import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { context, trace, SpanStatusCode, type Span } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { decodeExportTraceServiceResponse, decodeRpcStatus, encodeExportTraceServiceRequest } from '@weft/otlp';
import { basicAuth, bearerAuth } from './helpers/client';
import { REPO_ROOT } from './helpers/paths';
import { useWeft } from './helpers/fixture';

const P = 'acme/otel';

// Spans converted on the serving thread, as by default below 4 cores (otel-sdk.test.ts has them on a worker).
const { weft, api } = useWeft({ env: { WEFT_INGEST_WORKERS: '0' } });

/** `weft_otlp_spans_rejected_total` by `reason/transport`, as /metrics shows it now. */
async function rejectedMetric(): Promise<Record<string, number>> {
  const text = await (await fetch(`${weft.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^weft_otlp_spans_rejected_total\{reason="([^"]+)",transport="([^"]+)"\} (\d+)$/gm))
    out[`${m[1]}/${m[2]}`] = Number(m[3]);
  return out;
}

/** Wraps an exporter to record each export's result code (0 = success). */
function recording(inner: SpanExporter, results: number[]): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done) => inner.export(spans, (r) => (results.push(r.code), done(r))),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** Runs a small GenAI agent trace through a real SDK + exporter; returns its trace id. */
async function exportAgentTrace(exporter: SpanExporter, label: string): Promise<{ traceId: string; ids: Record<string, string> }> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': `agent-${label}`, 'deployment.environment': 'test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('weft-test', '1.2.3');
  const under = (s: Span) => trace.setSpan(context.active(), s);
  // HrTime [seconds, nanoseconds]: the exact instants the calls must read back with.
  const root = tracer.startSpan(`agent.run ${label}`, {
    startTime: [1714564800, 123456789],
    attributes: { 'session.id': `sess-${label}`, 'input.value': '{"question": "capital of France?"}', 'output.value': 'Paris' },
  });
  const chat = tracer.startSpan(
    'chat gpt-4o',
    {
      startTime: [1714564800, 200000999],
      kind: 2,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 8,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'capital of France?' }] }]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Paris' }] }]),
      },
    },
    under(root),
  );
  chat.end([1714564801, 623456001]);
  const tool = tracer.startSpan(
    'tool lookup',
    {
      startTime: [1714564801, 700000000],
      attributes: {
        'traceloop.entity.input': '{"city": "Paris"}',
        'traceloop.entity.output': '{"population": 2100000}',
        'traceloop.span.kind': 'tool',
      },
    },
    under(root),
  );
  tool.setStatus({ code: SpanStatusCode.ERROR, message: 'lookup timed out' });
  tool.end([1714564801, 900000000]);
  root.end([1714564802, 5]);
  await provider.forceFlush();
  await provider.shutdown();
  const hex = (s: Span) => s.spanContext().spanId;
  return { traceId: root.spanContext().traceId, ids: { root: hex(root), chat: hex(chat), tool: hex(tool) } };
}

const exporterOptions = (headers: Record<string, string> = {}) => ({
  url: '',
  headers: { project_id: P, Authorization: basicAuth('test-key'), ...headers },
});

async function readTrace(traceId: string) {
  const rows = await api.jsonl('/calls/stream_query', {
    project_id: P,
    filter: { trace_ids: [traceId] },
    sort_by: [{ field: 'started_at', direction: 'asc' }],
  });
  return Object.fromEntries(rows.map((c) => [c.op_name, c]));
}

describe('real OpenTelemetry SDK → weft', () => {
  for (const [label, make] of [
    ['protobuf', (o: ReturnType<typeof exporterOptions>) => new ProtoExporter(o)],
    ['json', (o: ReturnType<typeof exporterOptions>) => new JsonExporter(o)],
  ] as const) {
    it(`${label} exporter: nested GenAI spans read back with parents, inputs, outputs, usage and exact times`, async () => {
      const results: number[] = [];
      const opts = exporterOptions();
      opts.url = `${weft.url}/otel/v1/traces`;
      const { traceId, ids } = await exportAgentTrace(recording(make(opts), results), label);
      expect(results).toEqual([0, 0, 0]);

      const calls = await readTrace(traceId);
      expect(Object.keys(calls).sort()).toEqual([`agent.run ${label}`, 'chat gpt-4o', 'tool lookup']);
      const root = calls[`agent.run ${label}`];
      const chat = calls['chat gpt-4o'];
      const tool = calls['tool lookup'];

      expect(root).toMatchObject({
        id: ids.root,
        trace_id: traceId,
        parent_id: null,
        started_at: '2024-05-01T12:00:00.123456Z',
        ended_at: '2024-05-01T12:00:02Z',
        inputs: { 'input.value': { question: 'capital of France?' } },
        output: { 'output.value': 'Paris' },
        thread_id: `sess-${label}`,
        turn_id: ids.root,
        exception: null,
      });
      expect(chat).toMatchObject({
        id: ids.chat,
        parent_id: ids.root,
        trace_id: traceId,
        started_at: '2024-05-01T12:00:00.200Z',
        ended_at: '2024-05-01T12:00:01.623456Z',
        thread_id: null,
        inputs: { 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'capital of France?' }] }] },
        output: { 'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'Paris' }] }] },
        attributes: {
          system: 'openai',
          model: 'gpt-4o-2024-08-06',
          operation: 'chat',
          model_parameters: { model: 'gpt-4o', temperature: 0.2 },
        },
      });
      expect(chat.summary.usage).toEqual({
        'gpt-4o-2024-08-06': { input_tokens: 120, output_tokens: 8, total_tokens: 128, requests: 1 },
      });
      expect(chat.summary.weave).toMatchObject({ status: 'success', latency_ms: 1423 });
      // The original span, with exact nanosecond times, resource and scope.
      expect(chat.attributes.otel_span).toMatchObject({
        name: 'chat gpt-4o',
        kind: 'CLIENT',
        context: { trace_id: traceId, span_id: ids.chat },
        parent_id: ids.root,
        start_time_unix_nano: '1714564800200000999',
        end_time_unix_nano: '1714564801623456001',
        resource: { attributes: { 'service.name': `agent-${label}`, 'deployment.environment': 'test' } },
        scope: { name: 'weft-test', version: '1.2.3' },
      });
      expect(tool).toMatchObject({
        parent_id: ids.root,
        inputs: { 'traceloop.entity.input': { city: 'Paris' } },
        output: { 'traceloop.entity.output': { population: 2100000 } },
        exception: 'lookup timed out',
        attributes: { kind: 'tool' },
      });
      expect(tool.summary.weave.status).toBe('error');
      expect(tool.attributes.otel_span.status).toEqual({ code: 'ERROR', message: 'lookup timed out' });
    });
  }

  it('takes gzip-compressed exports from the stock exporters (protobuf and JSON)', async () => {
    type Config = NonNullable<ConstructorParameters<typeof ProtoExporter>[0]>;
    const gzip = 'gzip' as Config['compression'];
    for (const [label, exporter] of [
      [
        'gz-pb',
        new ProtoExporter({
          url: `${weft.url}/otel/v1/traces`,
          headers: { project_id: P, Authorization: basicAuth('test-key') },
          compression: gzip,
        }),
      ],
      [
        'gz-json',
        new JsonExporter({
          url: `${weft.url}/otel/v1/traces`,
          headers: { project_id: P, Authorization: basicAuth('test-key') },
          compression: gzip,
        }),
      ],
    ] as const) {
      const results: number[] = [];
      const { traceId, ids } = await exportAgentTrace(recording(exporter, results), label);
      expect(results).toEqual([0, 0, 0]);
      const calls = await readTrace(traceId);
      expect(calls['chat gpt-4o']).toMatchObject({ parent_id: ids.root, ended_at: '2024-05-01T12:00:01.623456Z' });
    }
  });

  it('accepts Bearer auth from a stock exporter', async () => {
    const results: number[] = [];
    const { traceId } = await exportAgentTrace(
      recording(
        new ProtoExporter({ url: `${weft.url}/otel/v1/traces`, headers: { project_id: P, Authorization: bearerAuth('test-key') } }),
        results,
      ),
      'bearer',
    );
    expect(results).toEqual([0, 0, 0]);
    expect(Object.keys(await readTrace(traceId))).toHaveLength(3);
  });
});

// ---- hand-made OTLP requests -------------------------------------------------------------

const T = '0af7651916cd43dd8448eb211c80319c';
const span = (over: Record<string, unknown> = {}) => ({
  traceId: T,
  spanId: 'b7ad6b7169203331',
  name: 'ok',
  startTimeUnixNano: '1714564800000001000',
  endTimeUnixNano: '1714564800500002000',
  attributes: [{ key: 'input.value', value: { stringValue: 'hi' } }],
  ...over,
});
const request = (spans: unknown[], resourceAttributes: unknown[] = []) => ({
  resourceSpans: [{ resource: { attributes: resourceAttributes }, scopeSpans: [{ scope: { name: 's' }, spans }] }],
});
const otlpHeaders = { project_id: P, 'content-type': 'application/json' };

describe('rejections and partial success', () => {
  const mixed = [
    span({ spanId: '1000000000000001', name: 'good' }),
    span({ spanId: 'not-hex', name: 'bad-id' }),
    span({
      spanId: '1000000000000003',
      name: 'conflict',
      attributes: [
        { key: 'a', value: { intValue: 1 } },
        { key: 'a.b', value: { intValue: 2 } },
      ],
    }),
    span({ spanId: '1000000000000004', name: 'bad-time', startTimeUnixNano: 'yesterday' }),
  ];

  it('counts rejected spans on /otel/v1/traces (OTLP/JSON), keeps the rest, and logs and counts each rejection', async () => {
    const metricsBefore = await rejectedMetric();
    const r = await api.raw('/otel/v1/traces', JSON.stringify(request(mixed)), otlpHeaders);
    expect(r.status).toBe(200);
    expect(r.body.partialSuccess.rejectedSpans).toBe(2);
    const msg: string = r.body.partialSuccess.errorMessage;
    expect(msg).toContain(`Rejected span (name='bad-id' trace_id='${T}' span_id='not-hex'): invalid span_id`);
    expect(msg).toContain("Rejected span (name='bad-time'");
    expect(msg).toContain('invalid start_time_unix_nano');
    expect(msg).not.toContain("name='conflict'");
    const rows = await api.jsonl('/calls/stream_query', {
      project_id: P,
      filter: { trace_ids: [T] },
      sort_by: [{ field: 'op_name', direction: 'asc' }],
    });
    expect(rows.map((c) => c.op_name)).toEqual(['conflict', 'good']);
    expect(rows[1]).toMatchObject({
      id: '1000000000000001',
      started_at: '2024-05-01T12:00:00.000001Z',
      ended_at: '2024-05-01T12:00:00.500002Z',
    });
    // A key that is both a value and a prefix keeps both values.
    expect(rows[0].attributes).toMatchObject({ a: 1, 'a.b': 2 });
    // Each rejection: a warn line with project, trace and span id and reason, and a counter by reason.
    const warned = weft.logs.filter((l: any) => l?.msg === 'OTLP span rejected' && l.traceId === T) as any[];
    expect(warned.map((l) => [l.level, l.project, l.spanId, l.reason])).toEqual([
      [40, P, 'not-hex', 'invalid_span_id'],
      [40, P, '1000000000000004', 'invalid_start_time_unix_nano'],
    ]);
    const after = await rejectedMetric();
    expect(after['invalid_span_id/http']! - (metricsBefore['invalid_span_id/http'] ?? 0)).toBe(1);
    expect(after['invalid_start_time_unix_nano/http']! - (metricsBefore['invalid_start_time_unix_nano/http'] ?? 0)).toBe(1);
  });

  it('stores a span that carries old and new semantic-convention names side by side', async () => {
    const t = '8bf7651916cd43dd8448eb211c80319c';
    const attrs = [
      { key: 'db.system', value: { stringValue: 'postgresql' } },
      { key: 'db.system.name', value: { stringValue: 'postgresql' } },
      { key: 'gen_ai.system', value: { stringValue: 'openai' } },
      { key: 'gen_ai.system.name', value: { stringValue: 'openai' } },
    ];
    const r = await api.raw(
      '/otel/v1/traces',
      JSON.stringify(request([span({ traceId: t, spanId: '8b00000000000001', name: 'mixed-semconv', attributes: attrs })])),
      otlpHeaders,
    );
    expect(r.body).toEqual({});
    const [c] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { trace_ids: [t] } });
    expect(c.op_name).toBe('mixed-semconv');
    expect(c.attributes.otel_span.attributes).toEqual({
      db: { system: 'postgresql', 'system.name': 'postgresql' },
      gen_ai: { system: 'openai', 'system.name': 'openai' },
    });
  });

  it('reports partial_success on /otel/v1/trace (the interface body) too', async () => {
    const t2 = '1af7651916cd43dd8448eb211c80319c';
    // Span ids are call ids: fresh ones, since call ids are unique per project.
    const spans = mixed.map((s) => ({ ...s, traceId: t2, spanId: s.spanId === 'not-hex' ? s.spanId : s.spanId.replace(/^1/, '2') }));
    const r = await api.post('/otel/v1/trace', { project_id: P, traces: request(spans), svc_run_id: 'run-7', svc_user_id: 'mallory' });
    expect(r.status).toBe(200);
    expect(r.body.partial_success.rejected_spans).toBe(2);
    expect(r.body.partial_success.error_message.split('; ')).toHaveLength(2);
    const [good] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { trace_ids: [t2] } });
    expect(good).toMatchObject({ op_name: 'good', svc_run_id: 'run-7' });
    expect(good.svc_user_id).not.toBe('mallory');
  });

  it('answers partial_success null when all spans are accepted, 400 naming the field for a malformed request', async () => {
    const ok = await api.post('/otel/v1/trace', {
      project_id: P,
      traces: request([span({ traceId: '2af7651916cd43dd8448eb211c80319c' })]),
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ partial_success: null });
    const bad = await api.post('/otel/v1/trace', { project_id: P, traces: { resourceSpans: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('traces.resourceSpans');
  });

  it('caps error_message at 20 messages and appends "; ..."', async () => {
    const spans = Array.from({ length: 25 }, (_, i) => span({ name: `s${i}`, spanId: 'zz' }));
    const r = await api.raw('/otel/v1/traces', JSON.stringify(request(spans)), otlpHeaders);
    expect(r.body.partialSuccess.rejectedSpans).toBe(25);
    const parts = r.body.partialSuccess.errorMessage.split('; ');
    expect(parts).toHaveLength(21);
    expect(parts[20]).toBe('...');
  });
});

describe('OTLP/HTTP transport', () => {
  it('takes gzip JSON and gzip protobuf bodies; the protobuf answer is an ExportTraceServiceResponse', async () => {
    const t = '3af7651916cd43dd8448eb211c80319c';
    const json = await api.raw(
      '/otel/v1/traces',
      gzipSync(JSON.stringify(request([span({ traceId: t, spanId: '3000000000000001', name: 'gz-json' })]))),
      {
        ...otlpHeaders,
        'content-encoding': 'gzip',
      },
    );
    expect(json.status).toBe(200);
    expect(json.body).toEqual({});

    const pb = encodeExportTraceServiceRequest({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.from(t, 'hex'),
                  spanId: Buffer.from('3000000000000002', 'hex'),
                  name: 'gz-pb',
                  startTimeUnixNano: '1714564800000001000',
                  endTimeUnixNano: '1714564800000002000',
                },
                {
                  traceId: Buffer.from(t, 'hex'),
                  spanId: Buffer.alloc(3, 1),
                  name: 'short-id',
                  startTimeUnixNano: '1714564800000001000',
                  endTimeUnixNano: '1714564800000002000',
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await fetch(`${weft.url}/otel/v1/traces`, {
      method: 'POST',
      headers: {
        project_id: P,
        authorization: basicAuth('test-key'),
        'content-type': 'application/x-protobuf',
        'content-encoding': 'gzip',
      },
      body: gzipSync(pb),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-protobuf');
    const decoded = decodeExportTraceServiceResponse(new Uint8Array(await res.arrayBuffer()));
    expect(decoded?.rejectedSpans).toBe(1);
    expect(decoded?.errorMessage).toContain("name='short-id'");

    const rows = await api.jsonl('/calls/stream_query', {
      project_id: P,
      filter: { trace_ids: [t] },
      sort_by: [{ field: 'op_name', direction: 'asc' }],
    });
    expect(rows.map((c) => c.op_name)).toEqual(['gz-json', 'gz-pb']);
  });

  it('refuses a gzip body that inflates past the body limit (413), and garbage gzip (400)', async () => {
    const bomb = gzipSync(Buffer.alloc(33 * 1024 * 1024, 0x20)); // ~33 KB on the wire
    expect(bomb.length).toBeLessThan(100_000);
    const r = await api.raw('/otel/v1/traces', bomb, { ...otlpHeaders, 'content-encoding': 'gzip' });
    expect(r.status).toBe(413);
    const g = await api.raw('/otel/v1/traces', 'not gzip at all', { ...otlpHeaders, 'content-encoding': 'gzip' });
    expect(g.status).toBe(400);
    const e = await api.raw('/otel/v1/traces', '{}', { ...otlpHeaders, 'content-encoding': 'br' });
    expect(e.status).toBe(415);
  });

  it('takes the project from wandb.entity/wandb.project resource attributes when no header names it', async () => {
    const t = '4af7651916cd43dd8448eb211c80319c';
    const body = request(
      [span({ traceId: t })],
      [
        { key: 'wandb.entity', value: { stringValue: 'acme' } },
        { key: 'wandb.project', value: { stringValue: 'from-resource' } },
      ],
    );
    const r = await api.raw('/otel/v1/traces', JSON.stringify(body), { 'content-type': 'application/json' });
    expect(r.status).toBe(200);
    expect(await api.jsonl('/calls/stream_query', { project_id: 'acme/from-resource', filter: { trace_ids: [t] } })).toHaveLength(1);
    const none = await api.raw('/otel/v1/traces', JSON.stringify(request([span()])), { 'content-type': 'application/json' });
    expect(none.status).toBe(400);
    expect(none.body.field).toBe('project_id');
    const badHeader = await api.raw('/otel/v1/traces', JSON.stringify(request([span()])), { ...otlpHeaders, project_id: 'no-slash' });
    expect(badHeader.status).toBe(400);
  });

  it('accepts base64 ids (proto3 JSON bytes) as well as hex', async () => {
    const t = '5af7651916cd43dd8448eb211c80319c';
    const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
    const body = request([
      span({ traceId: b64(t), spanId: b64('5000000000000001'), name: 'parent' }),
      span({ traceId: b64(t), spanId: b64('5000000000000002'), parentSpanId: b64('5000000000000001'), name: 'child' }),
    ]);
    const r = await api.raw('/otel/v1/traces', JSON.stringify(body), otlpHeaders);
    expect(r.body).toEqual({});
    const rows = await api.jsonl('/calls/stream_query', { project_id: P, filter: { trace_ids: [t] } });
    expect(Object.fromEntries(rows.map((c) => [c.op_name, c.parent_id]))).toEqual({ parent: null, child: '5000000000000001' });
  });

  it('needs credentials, and leaves every other route on strict JSON', async () => {
    const anon = await api.withAuth(null).raw('/otel/v1/traces', JSON.stringify(request([span()])), otlpHeaders);
    expect(anon.status).toBe(401);
    const pb = await api.raw('/call/start', Buffer.from([1, 2, 3]), { 'content-type': 'application/x-protobuf' });
    expect(pb.status).toBe(415);
    const pbTrace = await api.raw('/otel/v1/trace', Buffer.from([1, 2, 3]), { 'content-type': 'application/x-protobuf' });
    expect(pbTrace.status).toBe(415);
    const badPb = await api.raw('/otel/v1/traces', Buffer.from([0xff, 0xff, 0xff]), {
      ...otlpHeaders,
      'content-type': 'application/x-protobuf',
    });
    expect(badPb.status).toBe(400);
    const badJson = await api.raw('/otel/v1/traces', '{"resourceSpans": [', otlpHeaders);
    expect(badJson.status).toBe(400);
    const text = await api.raw('/otel/v1/traces', 'hello', { ...otlpHeaders, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.body.reason).toBe("unsupported Content-Type 'text/plain': OTLP/HTTP takes application/x-protobuf or application/json");
    const charset = await api.raw(
      '/otel/v1/traces',
      JSON.stringify(request([span({ traceId: '6af7651916cd43dd8448eb211c80319c', spanId: '6000000000000001' })])),
      {
        ...otlpHeaders,
        'content-type': 'application/json; charset=utf-8',
      },
    );
    expect(charset.status).toBe(200);
  });
});

describe('OTLP/HTTP error bodies', () => {
  const post = (body: Uint8Array | string, headers: Record<string, string>) =>
    fetch(`${weft.url}/otel/v1/traces`, {
      method: 'POST',
      headers: { project_id: P, authorization: basicAuth('test-key'), ...headers },
      body,
    });

  it('answers protobuf requests with a protobuf google.rpc.Status, JSON requests with JSON', async () => {
    const bad = await post(Buffer.from([0xff, 0xff, 0xff]), { 'content-type': 'application/x-protobuf' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/x-protobuf');
    const status = decodeRpcStatus(new Uint8Array(await bad.arrayBuffer()));
    expect(status.code).toBe(3); // INVALID_ARGUMENT
    expect(status.message).toContain('invalid protobuf ExportTraceServiceRequest');

    const anon = await fetch(`${weft.url}/otel/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.alloc(0),
    });
    expect(anon.status).toBe(401);
    expect(decodeRpcStatus(new Uint8Array(await anon.arrayBuffer())).code).toBe(16); // UNAUTHENTICATED

    const noProject = await fetch(`${weft.url}/otel/v1/traces`, {
      method: 'POST',
      headers: { authorization: basicAuth('test-key'), 'content-type': 'application/x-protobuf' },
      body: encodeExportTraceServiceRequest({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  { traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 1), name: 'x', startTimeUnixNano: '1', endTimeUnixNano: '2' },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(noProject.status).toBe(400);
    expect(decodeRpcStatus(new Uint8Array(await noProject.arrayBuffer())).message).toMatch(/^project_id: no project/);

    const json = await post('{"resourceSpans": [', { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toContain('application/json');
    expect(await json.json()).toMatchObject({ status: 400, code: 3, message: expect.stringContaining('invalid JSON') });
  });
});

describe('costs', () => {
  it('include_costs prices the usage of OTel calls (keyed by the response model)', async () => {
    const t = '7af7651916cd43dd8448eb211c80319c';
    // After the seeded default prices' effective date: prices apply from a call's start.
    const body = request([
      span({
        traceId: t,
        spanId: '7000000000000001',
        name: 'chat gpt-4o',
        startTimeUnixNano: '1767225600000000000', // 2026-01-01
        endTimeUnixNano: '1767225601000000000',
        attributes: [
          { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
          { key: 'gen_ai.response.model', value: { stringValue: 'gpt-4o-2024-08-06' } },
          { key: 'gen_ai.usage.input_tokens', value: { intValue: '1000' } },
          { key: 'gen_ai.usage.output_tokens', value: { intValue: '200' } },
        ],
      }),
    ]);
    expect((await api.raw('/otel/v1/traces', JSON.stringify(body), otlpHeaders)).body).toEqual({});
    const [c] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { trace_ids: [t] }, include_costs: true });
    const cost = c.summary.weave.costs['gpt-4o-2024-08-06'];
    expect(cost).toMatchObject({ prompt_tokens: 1000, completion_tokens: 200, pricing_level: 'default' });
    expect(cost.prompt_tokens_total_cost).toBeGreaterThan(0);
    expect(cost.completion_tokens_total_cost).toBeCloseTo(200 * cost.completion_token_cost, 12);
    expect(cost.prompt_tokens_total_cost).toBeCloseTo(1000 * cost.prompt_token_cost, 12);
  });
});

describe('distributed mode', () => {
  it('the front proxy sends /otel/v1/traces to the gateway and keeps the project_id header', () => {
    const conf = readFileSync(join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf'), 'utf8');
    expect(conf).toMatch(/location = \/otel\/v1\/traces \{ proxy_pass http:\/\/gateway; \}/);
    expect(conf).toMatch(/underscores_in_headers on;/);
  });
});
