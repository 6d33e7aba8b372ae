import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationFromEvents, decodeExportLogsServiceResponse, encodeExportLogsServiceRequest } from '@weft/otlp';
import { basicAuth, bearerAuth, Client } from './helpers/client';
import { grpcExportLogs } from './helpers/otlp-grpc-client';
import { createKey, type TestKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { ensureInstrumentationClients, runInstrumentedClient } from './helpers/python-clients';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * OTLP logs: /otel/v1/logs and /v1/logs (OTLP/JSON and protobuf, gzip), per-record rejection
 * in partial_success, tenancy, the body marker, the logs query endpoint; and the GenAI events
 * of opentelemetry-instrumentation-openai-v2 in event_only mode, stored against their spans.
 */
let upstream: ModelServer;
let weft: RunningWeft;
let admin: Client;
let member: TestKey;
let dir: string;

beforeAll(async () => {
  upstream = await startModelServer();
  dir = newDataDir('otel-logs');
  const file = join(dir, 'upstreams.json');
  writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, models: ['m-vllm'] }] }));
  [weft] = await Promise.all([startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file } }), ensureInstrumentationClients()]);
  admin = new Client(weft.url, basicAuth('test-key'));
  member = await createKey(admin, 'otel-logs', ['acme']);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

const T = '5b8efff798038103d269b633813fc60c';
const S = 'eee19b7ec3c1b174';
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const logsBody = (records: unknown[]) => ({
  resourceLogs: [{ resource: { attributes: [str('service.name', 'svc')] }, scopeLogs: [{ scope: { name: 'app' }, logRecords: records }] }],
});

async function post(path: string, body: unknown, key: string, project: string, headers: Record<string, string> = {}) {
  return fetch(weft.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: bearerAuth(key), project_id: project, ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? (body as string | Buffer) : JSON.stringify(body),
  });
}

async function metricLine(name: string): Promise<number> {
  const text = await (await fetch(`${weft.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

describe('OTLP/HTTP logs', () => {
  it('stores each record per project; a malformed one is refused alone, reported, logged and counted', async () => {
    const metric = 'weft_otlp_log_records_rejected_total{reason="invalid_span_id",transport="http"}';
    const before = await metricLine(metric);
    const r = await post(
      '/otel/v1/logs',
      logsBody([
        {
          timeUnixNano: '1714564800000001000',
          traceId: T,
          spanId: S,
          eventName: 'gen_ai.user.message',
          body: { kvlistValue: { values: [str('content', 'hi')] } },
        },
        {
          timeUnixNano: '1714564800000002000',
          severityNumber: 9,
          severityText: 'INFO',
          body: { stringValue: 'plain log line' },
          attributes: [str('k', 'v')],
        },
        { timeUnixNano: '1714564800000003000', traceId: T, spanId: 'nothex', body: { stringValue: 'bad' } },
      ]),
      member.key,
      'acme/logs',
    );
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      partialSuccess: { rejectedLogRecords: 1, errorMessage: expect.stringContaining("span_id='nothex'") },
    });
    expect(await metricLine(metric)).toBe(before + 1);
    expect(weft.logs.some((l: any) => l?.msg === 'OTLP log record rejected' && l.spanId === 'nothex' && l.level === 40)).toBe(true);

    const { logs } = (await admin.post('/otel/logs/query', { project_id: 'acme/logs' })).body;
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatchObject({
      severity_text: 'INFO',
      body: 'plain log line',
      attributes: { k: 'v' },
      trace_id: null,
      resource: { 'service.name': 'svc' },
    });
    expect(logs[1]).toMatchObject({
      event_name: 'gen_ai.user.message',
      trace_id: T,
      span_id: S,
      body: { content: 'hi' },
      time: '2024-05-01T12:00:00.000001Z',
    });
    const bySpan = (await admin.post('/otel/logs/query', { project_id: 'acme/logs', span_id: S })).body.logs;
    expect(bySpan.map((l: any) => l.event_name)).toEqual(['gen_ai.user.message']);
  });

  it('takes gzip protobuf at the Collector path and answers protobuf', async () => {
    const body = gzipSync(
      encodeExportLogsServiceRequest(
        logsBody([
          {
            timeUnixNano: '1714564800000001000',
            body: { stringValue: 'from protobuf' },
            traceId: Buffer.from(T, 'hex'),
            spanId: Buffer.from(S, 'hex'),
          },
        ]),
      ),
    );
    const r = await post('/v1/logs', body, member.key, 'acme/logs-pb', {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/x-protobuf');
    expect(decodeExportLogsServiceResponse(new Uint8Array(await r.arrayBuffer()))).toBeNull();
    const { logs } = (await admin.post('/otel/logs/query', { project_id: 'acme/logs-pb' })).body;
    expect(logs).toEqual([expect.objectContaining({ body: 'from protobuf', trace_id: T, span_id: S })]);
  });

  it('refuses another tenant, no project, bad ids in the query; marks a body cut at the limit', async () => {
    const one = logsBody([{ timeUnixNano: '1714564800000001000', body: { stringValue: 'x' } }]);
    expect((await post('/otel/v1/logs', one, member.key, 'other/p')).status).toBe(403);
    expect(await admin.post('/otel/logs/query', { project_id: 'other/p' }).then((r) => r.body.logs)).toEqual([]);
    const noProject = await fetch(weft.url + '/otel/v1/logs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bearerAuth(member.key) },
      body: JSON.stringify(one),
    });
    expect(noProject.status).toBe(400);
    expect(await noProject.json()).toMatchObject({ message: expect.stringContaining('project_id') });
    const badQuery = await admin.post('/otel/logs/query', { project_id: 'acme/logs', span_id: 'XYZ' });
    expect(badQuery.status).toBe(422);
    expect(JSON.stringify(badQuery.body)).toContain('span_id');

    const big = 'a'.repeat(1_200_000);
    expect(
      (
        await post(
          '/otel/v1/logs',
          logsBody([{ timeUnixNano: '1714564800000001000', body: { stringValue: big } }]),
          member.key,
          'acme/logs-big',
        )
      ).status,
    ).toBe(200);
    const [stored] = (await admin.post('/otel/logs/query', { project_id: 'acme/logs-big' })).body.logs;
    expect(stored.body_truncated).toBe(true);
    expect(stored.body.length).toBe(1_000_000);
  });
});

describe('OTLP/gRPC logs (LogsService/Export)', () => {
  const record = (body: string, spanId = S) => ({
    timeUnixNano: '1714564800000001000',
    body: { stringValue: body },
    traceId: Buffer.from(T, 'hex'),
    spanId: spanId === '' ? new Uint8Array(0) : Buffer.from(spanId, 'hex'),
  });

  it('stores records as OTLP/HTTP does; a malformed record is refused alone, reported and counted', async () => {
    const metric = 'weft_otlp_log_records_rejected_total{reason="invalid_span_id",transport="grpc"}';
    const before = await metricLine(metric);
    const body = encodeExportLogsServiceRequest(logsBody([record('over grpc'), record('bad', 'abcd')]));
    const r = await grpcExportLogs(weft.grpcPort!, body, { authorization: bearerAuth(member.key), project_id: 'acme/logs-grpc' });
    expect(r).toEqual({ ok: true, partial: { rejectedLogRecords: 1, errorMessage: expect.stringContaining('span_id') } });
    expect(await metricLine(metric)).toBe(before + 1);
    const { logs } = (await admin.post('/otel/logs/query', { project_id: 'acme/logs-grpc' })).body;
    expect(logs).toEqual([expect.objectContaining({ body: 'over grpc', trace_id: T, span_id: S })]);
  });

  it('answers UNAUTHENTICATED, PERMISSION_DENIED and INVALID_ARGUMENT as the trace service does, storing nothing', async () => {
    const body = encodeExportLogsServiceRequest(logsBody([record('refused')]));
    expect(await grpcExportLogs(weft.grpcPort!, body, { project_id: 'acme/logs-grpc-refused' })).toMatchObject({ ok: false, code: 16 });
    expect(
      await grpcExportLogs(weft.grpcPort!, body, { authorization: bearerAuth(member.key), project_id: 'other/logs-grpc' }),
    ).toMatchObject({ ok: false, code: 7, details: expect.stringContaining('other/logs-grpc') });
    expect(await grpcExportLogs(weft.grpcPort!, body, { authorization: bearerAuth(member.key) })).toMatchObject({
      ok: false,
      code: 3,
      details: expect.stringContaining('project_id'),
    });
    expect(
      await grpcExportLogs(weft.grpcPort!, Buffer.from('not protobuf at all'), {
        authorization: bearerAuth(member.key),
        project_id: 'acme/logs-grpc-refused',
      }),
    ).toMatchObject({ ok: false, code: 3 });
    for (const project of ['acme/logs-grpc-refused', 'other/logs-grpc'])
      expect((await admin.post('/otel/logs/query', { project_id: project })).body.logs).toEqual([]);
  });
});

describe('GenAI events from opentelemetry-instrumentation-openai-v2 (event_only)', () => {
  it.each(['http', 'grpc'] as const)(
    'stores the events of each chat span (logs over %s) against that span; they read back as its conversation',
    async (transport) => {
      const P = `acme/genai-events-${transport}`;
      const grpc = transport === 'grpc' ? [`127.0.0.1:${weft.grpcPort}`] : [];
      const r = await runInstrumentedClient(
        'instrumented_openai.py',
        ['genai-events', weft.url, 'test-key', P, join(dir, `events-${transport}.json`), ...grpc],
        {
          timeoutMs: 180_000,
        },
      );
      if (r.code !== 0) throw new Error(`instrumented_openai.py exited ${r.code}\n${r.stderr}`);
      const out = JSON.parse(r.stdout);
      expect(out.logs_flushed).toBe(true);
      const calls = await admin.jsonl<any>('/calls/stream_query', { project_id: P, sort_by: [{ field: 'started_at', direction: 'asc' }] });
      const chats = calls.filter((c) => c.attributes.operation === 'chat');
      expect(chats).toHaveLength(2);
      // event_only: no content on the spans; the call reads its conversation from its span's events.
      expect(chats[0].inputs['gen_ai.input.messages']).toBeUndefined();
      const SYSTEM = { role: 'system', content: 'You answer briefly.' };
      const USER = { role: 'user', content: 'tools' };
      expect(chats[0].inputs.messages).toEqual([SYSTEM, USER]);
      expect(chats[0].output.choices).toEqual([
        expect.objectContaining({
          message: expect.objectContaining({ role: 'assistant', tool_calls: [expect.objectContaining({ id: 'call_1' })] }),
        }),
      ]);
      expect(chats[1].inputs.messages.slice(0, 2)).toEqual([SYSTEM, USER]);
      expect(chats[1].inputs.messages.at(-1)).toMatchObject({ role: 'tool', content: 'sunny', tool_call_id: 'call_1' });
      expect(chats[1].output.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from vllm' });
      // /call/read joins the same way; the span's own attributes are kept.
      const { call } = (await admin.post('/call/read', { project_id: P, id: chats[1].id })).body;
      expect(call.inputs.messages).toEqual(chats[1].inputs.messages);
      expect(call.output.choices).toEqual(chats[1].output.choices);
      expect(call.summary.usage).toEqual(chats[1].summary.usage);
      const { logs } = (await admin.post('/otel/logs/query', { project_id: P })).body;
      expect(logs.length).toBeGreaterThan(0);
      for (const chat of chats) {
        const own = logs.filter((l: any) => l.span_id === chat.id && l.trace_id === chat.trace_id);
        expect(own.length, JSON.stringify(logs.map((l: any) => [l.event_name, l.span_id]))).toBeGreaterThan(0);
        const conversation = conversationFromEvents(
          own.map((l: any) => ({
            event_name: l.event_name,
            body_dump: JSON.stringify(l.body),
            attributes_dump: JSON.stringify(l.attributes),
          })),
        );
        expect(conversation?.messages?.[1], JSON.stringify(own)).toEqual({ role: 'user', content: 'tools' });
        expect(conversation?.choices?.length).toBe(1);
      }
    },
    300_000,
  );
});

describe('GenAI events joined to their span’s call', () => {
  const TRACE = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  const SPAN = '0123456789abcdef';
  const userEvent = (content: string) => ({
    timeUnixNano: '1714564800000001000',
    traceId: TRACE,
    spanId: SPAN,
    eventName: 'gen_ai.user.message',
    body: { kvlistValue: { values: [str('content', content)] } },
  });
  const choiceEvent = {
    timeUnixNano: '1714564800000002000',
    traceId: TRACE,
    spanId: SPAN,
    eventName: 'gen_ai.choice',
    body: {
      kvlistValue: {
        values: [
          { key: 'index', value: { intValue: '0' } },
          { key: 'finish_reason', value: { stringValue: 'stop' } },
          { key: 'message', value: { kvlistValue: { values: [str('role', 'assistant'), str('content', 'hello back')] } } },
        ],
      },
    },
  };
  const chatSpan = {
    resourceSpans: [
      {
        resource: { attributes: [str('service.name', 'svc')] },
        scopeSpans: [
          {
            scope: { name: 'app' },
            spans: [
              {
                traceId: TRACE,
                spanId: SPAN,
                name: 'chat m-vllm',
                kind: 3,
                startTimeUnixNano: '1714564800000000000',
                endTimeUnixNano: '1714564800500000000',
                attributes: [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'm-vllm')],
              },
            ],
          },
        ],
      },
    ],
  };

  it('events that arrive before their span are read into its call; another project’s events for the same ids never are', async () => {
    const P = 'acme/events-first';
    expect((await post('/otel/v1/logs', logsBody([userEvent('hi'), choiceEvent]), member.key, P)).status).toBe(200);
    // The same span ids in another project of the same key: not this call's events.
    expect((await post('/otel/v1/logs', logsBody([userEvent('intruder')]), member.key, 'acme/events-other')).status).toBe(200);
    expect((await post('/otel/v1/traces', chatSpan, member.key, P)).status).toBe(200);
    const [call] = await admin.jsonl<any>('/calls/stream_query', { project_id: P });
    expect(call).toMatchObject({ id: SPAN, trace_id: TRACE });
    expect(call.inputs.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(call.output.choices).toEqual([
      expect.objectContaining({
        index: 0,
        finish_reason: 'stop',
        message: expect.objectContaining({ role: 'assistant', content: 'hello back' }),
      }),
    ]);
    // The other project has the events but no such call: nothing to join there, nothing made up.
    expect(await admin.jsonl<any>('/calls/stream_query', { project_id: 'acme/events-other' })).toEqual([]);
    // A project with the span and no events: the call is as stored.
    expect((await post('/otel/v1/traces', chatSpan, member.key, 'acme/events-none')).status).toBe(200);
    const [bare] = await admin.jsonl<any>('/calls/stream_query', { project_id: 'acme/events-none' });
    expect(bare.inputs.messages).toBeUndefined();
  });
});
