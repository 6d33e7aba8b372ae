import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestampMicros } from '@weft/core';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { basicAuth, bearerAuth, Client } from './helpers/client';
import { createKey, type TestKey } from './helpers/keys';
import { grpcExport } from './helpers/otlp-grpc-client';
import { ensurePythonClients, runPythonClient } from './helpers/python-clients';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * Stock OpenTelemetry: the Python SDK (pinned, installed into .cache/) with its OTLP/gRPC and
 * OTLP/HTTP exporters, thousands of spans each, every span found as a call with its exact ids
 * and times; and the gRPC receiver's error paths, with a bare gRPC client.
 */
let weft: RunningWeft;
let admin: Client;
let member: TestKey;

beforeAll(async () => {
  // Spans converted on a worker thread (the default from 4 cores; otel.test.ts has them on the serving thread).
  [weft] = await Promise.all([startWeft({ env: { WEFT_INGEST_WORKERS: '1' } }), ensurePythonClients()]);
  admin = new Client(weft.url);
  member = await createKey(admin, 'otel-sdk', ['acme']);
  expect(
    weft.logs.some((l: any) => l?.msg === 'request bodies of the ingest routes are converted on worker threads' && l.ingestWorkers === 1),
  ).toBe(true);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
});

/** A span's nanosecond time as the call's microseconds (truncated, as weft stores it). */
const micros = (ns: string) => Number(BigInt(ns) / 1000n);

interface ExportRun {
  sdk: string;
  exporter: string;
  flushed: boolean;
  results: { spans: number; result: string }[];
  spans: { name: string; trace_id: string; span_id: string; parent_id: string | null; start_ns: string; end_ns: string }[];
}

async function exportWithSdk(
  protocol: 'grpc' | 'http',
  authorization: string,
  project: string,
  compression: 'gzip' | 'none',
  spans: number,
  seed: number,
): Promise<ExportRun> {
  const endpoint = protocol === 'grpc' ? `127.0.0.1:${weft.grpcPort}` : `${weft.url}/otel/v1/traces`;
  const r = await runPythonClient(
    'otel_export.py',
    [protocol, endpoint, authorization, project, compression, String(spans), String(seed)],
    { timeoutMs: 240_000 },
  );
  if (r.code !== 0) throw new Error(`otel_export.py exited ${r.code}\n${r.stderr}`);
  return JSON.parse(r.stdout) as ExportRun;
}

/** Every span of the run is a call of `project` with the span's ids, parent and times, exactly. */
async function expectAllStored(run: ExportRun, project: string): Promise<void> {
  expect(run.flushed).toBe(true);
  expect(
    run.results.every((r) => r.result === 'SUCCESS'),
    JSON.stringify(run.results),
  ).toBe(true);
  expect(run.results.reduce((n, r) => n + r.spans, 0)).toBe(run.spans.length);
  // Acknowledged means stored: no waiting needed.
  const calls = await admin.jsonl('/calls/stream_query', { project_id: project });
  expect(calls).toHaveLength(run.spans.length);
  const byId = new Map(calls.map((c) => [c.id, c]));
  for (const s of run.spans) {
    const c = byId.get(s.span_id);
    expect(c, s.span_id).toBeDefined();
    expect([c.trace_id, c.parent_id, c.op_name, parseTimestampMicros(c.started_at), parseTimestampMicros(c.ended_at)]).toEqual([
      s.trace_id,
      s.parent_id,
      s.name,
      micros(s.start_ns),
      micros(s.end_ns),
    ]);
    expect([c.attributes.otel_span.start_time_unix_nano, c.attributes.otel_span.end_time_unix_nano]).toEqual([s.start_ns, s.end_ns]);
  }
  // The span with old and new semantic-convention names side by side is stored, both kept.
  const mixed = calls.find((c) => c.op_name === 'chat 1');
  expect(mixed.attributes.otel_span.attributes.db).toEqual({ system: 'postgresql', 'system.name': 'postgresql' });
  expect(mixed.summary.usage['gpt-4o']).toMatchObject({ input_tokens: 1, output_tokens: 2, requests: 1 });
}

describe('the OpenTelemetry Python SDK', () => {
  it('exports over OTLP/gRPC (insecure channel): gzip with Basic, uncompressed with Bearer metadata', async () => {
    const [a, b] = await Promise.all([
      exportWithSdk('grpc', basicAuth(member.key), 'acme/grpc-gzip', 'gzip', 1200, 1),
      exportWithSdk('grpc', bearerAuth(member.key), 'acme/grpc-plain', 'none', 1000, 2),
    ]);
    expect([a.sdk, a.exporter]).toEqual(['1.45.2', '1.45.2']);
    await expectAllStored(a, 'acme/grpc-gzip');
    await expectAllStored(b, 'acme/grpc-plain');
  }, 300_000);

  it('exports over OTLP/HTTP (protobuf): gzip with Bearer, uncompressed with Basic', async () => {
    const [a, b] = await Promise.all([
      exportWithSdk('http', bearerAuth(member.key), 'acme/http-gzip', 'gzip', 1200, 3),
      exportWithSdk('http', basicAuth(member.key), 'acme/http-plain', 'none', 1000, 4),
    ]);
    expect([a.sdk, a.exporter]).toEqual(['1.45.2', '1.45.2']);
    await expectAllStored(a, 'acme/http-gzip');
    await expectAllStored(b, 'acme/http-plain');
  }, 300_000);
});

const T = Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex');
const pbSpan = (spanId: Buffer, name: string) => ({
  traceId: T,
  spanId,
  name,
  startTimeUnixNano: '1714564800000001000',
  endTimeUnixNano: '1714564800000002000',
});
const exportBody = (spans: unknown[], resourceAttributes: unknown[] = []) =>
  encodeExportTraceServiceRequest({ resourceSpans: [{ resource: { attributes: resourceAttributes }, scopeSpans: [{ spans }] }] });

async function metricLine(name: string): Promise<number> {
  const text = await (await fetch(`${weft.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

describe('the OTLP/gRPC receiver', () => {
  it('answers partial success for a bad span, stores the rest, logs and counts the rejection', async () => {
    const metric = 'weft_otlp_spans_rejected_total{reason="invalid_span_id",transport="grpc"}';
    const before = await metricLine(metric);
    const r = await grpcExport(
      weft.grpcPort!,
      exportBody([pbSpan(Buffer.from('1100000000000001', 'hex'), 'good'), pbSpan(Buffer.alloc(8), 'zero-id')]),
      {
        authorization: bearerAuth(member.key),
        project_id: 'acme/grpc-errors',
      },
    );
    expect(r).toEqual({ ok: true, partial: { rejectedSpans: 1, errorMessage: expect.stringContaining("name='zero-id'") } });
    expect(await metricLine(metric)).toBe(before + 1);
    expect(
      weft.logs.some((l: any) => l?.msg === 'OTLP span rejected' && l.transport === 'grpc' && l.spanName === 'zero-id' && l.level === 40),
    ).toBe(true);
    const calls = await admin.jsonl('/calls/stream_query', { project_id: 'acme/grpc-errors' });
    expect(calls.map((c) => c.op_name)).toEqual(['good']);
  });

  it('takes the project from resource attributes when no metadata names it', async () => {
    const r = await grpcExport(
      weft.grpcPort!,
      exportBody(
        [pbSpan(Buffer.from('1200000000000001', 'hex'), 'from-resource')],
        [
          { key: 'wandb.entity', value: { stringValue: 'acme' } },
          { key: 'wandb.project', value: { stringValue: 'grpc-resource' } },
        ],
      ),
      { authorization: basicAuth(member.key) },
    );
    expect(r).toEqual({ ok: true, partial: null });
    expect((await admin.jsonl('/calls/stream_query', { project_id: 'acme/grpc-resource' })).map((c) => c.op_name)).toEqual([
      'from-resource',
    ]);
  });

  it('refuses with the gRPC codes exporters act on: unauthenticated, invalid, forbidden', async () => {
    const body = exportBody([pbSpan(Buffer.from('1300000000000001', 'hex'), 'x')]);
    expect(await grpcExport(weft.grpcPort!, body, { project_id: 'acme/grpc-errors' })).toMatchObject({ ok: false, code: 16 });
    expect(
      await grpcExport(weft.grpcPort!, body, { authorization: bearerAuth('wrong-key'), project_id: 'acme/grpc-errors' }),
    ).toMatchObject({ ok: false, code: 16 });
    expect(await grpcExport(weft.grpcPort!, body, { authorization: bearerAuth(member.key), project_id: 'no-slash' })).toEqual({
      ok: false,
      code: 3,
      details: 'project_id metadata: must be <entity>/<project>',
    });
    expect(
      await grpcExport(weft.grpcPort!, Buffer.from([0xff, 0xff, 0xff]), {
        authorization: bearerAuth(member.key),
        project_id: 'acme/grpc-errors',
      }),
    ).toMatchObject({
      ok: false,
      code: 3,
      details: expect.stringContaining('invalid protobuf ExportTraceServiceRequest'),
    });
    expect(await grpcExport(weft.grpcPort!, body, { authorization: bearerAuth(member.key) })).toMatchObject({
      ok: false,
      code: 3,
      details: expect.stringContaining('no project'),
    });
    expect(await grpcExport(weft.grpcPort!, body, { authorization: bearerAuth(member.key), project_id: 'other/p' })).toMatchObject({
      ok: false,
      code: 7,
    });
    expect(await admin.jsonl('/calls/stream_query', { project_id: 'other/p' })).toEqual([]);
  });
});
