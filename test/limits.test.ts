import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { bearerAuth, Client } from './helpers/client';
import { grpcExport } from './helpers/otlp-grpc-client';
import { createKey, clientFor } from './helpers/keys';
import { useWeft } from './helpers/fixture';
import { startWeft, type RunningWeft } from './helpers/server';

const P = 'acme/limits';
const TS = '2024-06-01T00:00:00Z';
const start = (over: Record<string, unknown> = {}) => ({ start: { project_id: P, op_name: 'o', started_at: TS, ...over } });

// Small limits so each is cheap to cross.
const LIMITS = {
  WEFT_BODY_LIMIT_BYTES: '65536',
  WEFT_MAX_ARRAY_ITEMS: '50',
  WEFT_MAX_STRING_CHARS: '2000',
  WEFT_MAX_JSON_DEPTH: '16',
  WEFT_MAX_STREAM_LIMIT: '500',
  WEFT_MAX_PAGE_LIMIT: '100',
  WEFT_MAX_QUERY_BYTES: '1024',
  WEFT_MAX_QUERY_DEPTH: '6',
};

// Upsert batches checked on an ingest worker thread: the same limits, answers and fields as every other route's.
const { weft, api } = useWeft({ env: { ...LIMITS, WEFT_INGEST_WORKERS: '1' } });

/** Every error answer: JSON {status, reason, field?}, the status matching, no stack trace. */
function expectError(r: { status: number; body: any; text: string }, status: number, field?: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.body.status).toBe(status);
  expect(typeof r.body.reason).toBe('string');
  if (field !== undefined) expect(r.body.field).toBe(field);
  expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
}

describe('limits', () => {
  it('answers an oversized body with 413', async () => {
    expectError(await api.post('/call/start', start({ inputs: { s: 'x'.repeat(70_000) } })), 413);
  });

  it('caps the items of a batch (and any array)', async () => {
    const item = { mode: 'start', req: start() };
    expectError(await api.post('/call/upsert_batch', { batch: Array(51).fill(item) }), 413, 'batch');
    expect((await api.post('/call/upsert_batch', { batch: Array(50).fill(item) })).status).toBe(200);
  });

  it('caps string sizes, naming the field', async () => {
    expectError(await api.post('/call/start', start({ inputs: { s: 'x'.repeat(2001) } })), 413, 'start.inputs.s');
    expect((await api.post('/call/start', start({ inputs: { s: 'x'.repeat(2000) } }))).status).toBe(200);
  });

  it('caps JSON nesting depth', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expectError(await api.post('/call/start', start({ inputs: deep })), 400);
    // Far deeper than any stack: still a clean 400.
    expectError(await api.raw('/call/start', '['.repeat(15_000) + ']'.repeat(15_000)), 400);
  });

  it('caps `limit` per kind of endpoint', async () => {
    expectError(await api.post('/calls/query_stats', { project_id: P, limit: 101 }), 400, 'limit');
    expect((await api.post('/calls/query_stats', { project_id: P, limit: 100 })).status).toBe(200);
    expectError(await api.post('/calls/stream_query', { project_id: P, limit: 501 }), 400, 'limit');
    expect((await api.post('/calls/stream_query', { project_id: P, limit: 500 })).status).toBe(200);
  });

  it('caps query expression size and depth', async () => {
    const big = { $expr: { $eq: [{ $getField: 'op_name' }, { $literal: 'x'.repeat(1100) }] } };
    expectError(await api.post('/calls/query_stats', { project_id: P, query: big }), 413, 'query');
    let e: unknown = { $getField: 'op_name' };
    for (let i = 0; i < 4; i++) e = { $not: [e] };
    expectError(await api.post('/calls/query_stats', { project_id: P, query: { $expr: e } }), 400, 'query');
  });
});

describe('bad input gets a clear 4xx, never a 500', () => {
  it('malformed UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"start":{"project_id":"acme/limits","op_name":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(`","started_at":"${TS}"}}`),
    ]);
    expectError(await api.raw('/call/start', bytes), 400);
  });

  it('numbers beyond float range, NaN-like and non-JSON literals', async () => {
    const body = (v: string) => `{"start":{"project_id":"acme/limits","op_name":"o","started_at":"${TS}","inputs":{"n":${v}}}}`;
    expectError(await api.raw('/call/start', body('1e400')), 400, 'start.inputs.n');
    expectError(await api.raw('/call/start', body('-1e999')), 400, 'start.inputs.n');
    for (const v of ['NaN', 'Infinity', '-Infinity', 'undefined', "'x'", '0x10', '01'])
      expectError(await api.raw('/call/start', body(v)), 400);
    // Huge but finite numbers are numbers.
    expect((await api.raw('/call/start', body('123456789012345678901234567890'))).status).toBe(200);
    // A body that does not fit its schema is the reference's 422 (what the SDK's batch splitting expects).
    expectError(await api.post('/calls/query_stats', { project_id: P, limit: 1e300 }), 422);
    // A negative limit fits the reference's model (an int); its query builder refuses it: 400.
    expectError(await api.post('/calls/query_stats', { project_id: P, limit: -1 }), 400, 'limit');
    expectError(await api.post('/calls/query_stats', { project_id: P, limit: 1.5 }), 422, 'limit');
  });

  it('wrong shapes, types, content types and empty bodies', async () => {
    for (const raw of ['', 'null', '[]', '"x"', '42', '{}', '{"start": null}', '{"start": {"project_id": 5}}']) {
      const r = await api.raw('/call/start', raw);
      expect([400, 413, 422], raw).toContain(r.status);
      expectError(r, r.status);
    }
    expectError(await api.raw('/call/start', 'a=b', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    expectError(await api.raw('/call/start', '{}', { 'content-type': 'text/plain' }), 415);
    expectError(await api.post('/call/start', start({ started_at: 'yesterday' })), 422, 'start.started_at');
    expectError(await api.post('/call/start', start({ project_id: 'no-slash' })), 422, 'start.project_id');
    // No Content-Type at all reads as JSON (older Weave SDKs send none); a wrong one is still 415.
    const untyped = await fetch(`${weft.url}/calls/query_stats`, {
      method: 'POST',
      headers: { authorization: api.authorization! },
      body: new TextEncoder().encode(JSON.stringify({ project_id: P })),
    });
    expect(untyped.status).toBe(200);
    expectError(await api.post('/no/such/endpoint', {}), 404);
  });

  it('prototype-polluting keys are plain data', async () => {
    const r = await api.raw(
      '/call/start',
      `{"start":{"project_id":"${P}","op_name":"o","started_at":"${TS}","inputs":{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}}}}}`,
    );
    expect(r.status).toBe(200);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('rate limits', () => {
  let limited: RunningWeft;
  beforeAll(async () => {
    limited = await startWeft({ env: { WEFT_RATE_LIMIT_MAX: '40', WEFT_RATE_LIMIT_WINDOW_MS: '60000' } });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('rate-limits per API key with 429 and Retry-After, other keys unaffected', async () => {
    const admin = new Client(limited.url);
    const noisy = clientFor(admin, await createKey(admin, 'noisy', ['acme']));
    const quiet = clientFor(admin, await createKey(admin, 'quiet', ['acme']));
    const statuses: number[] = [];
    let first429: Awaited<ReturnType<Client['post']>> | undefined;
    for (let i = 0; i < 45; i++) {
      const r = await noisy.post('/calls/query_stats', { project_id: P });
      statuses.push(r.status);
      if (r.status === 429) first429 ??= r;
    }
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
    expectError(first429!, 429);
    expect(Number(first429!.headers.get('retry-after'))).toBeGreaterThan(0);
    // The text names the limit and its window (not only the time left).
    expect((first429!.body as { reason: string }).reason).toMatch(
      /^rate limit exceeded: at most 40 requests per 60 s window per API key; retry in \d+s$/,
    );
    expect((await quiet.post('/calls/query_stats', { project_id: P })).status).toBe(200);
  });

  it('counts one budget per key across every route: contract, OTLP/HTTP (both paths), OTLP/gRPC, /v1', async () => {
    const admin = new Client(limited.url);
    const key = await createKey(admin, 'mixed', ['acme']);
    const basic = clientFor(admin, key);
    const bearer = admin.withAuth(bearerAuth(key.key));
    const otlp = (path: string) => basic.post(path, { resourceSpans: [] }, { project_id: P });
    const routes = [
      () => basic.post('/calls/query_stats', { project_id: P }),
      () => otlp('/otel/v1/traces'),
      () => basic.post('/otel/v1/trace', { project_id: P, traces: { resourceSpans: [] } }),
      () => bearer.post('/v1/chat/completions', { model: 'none', messages: [] }),
      () =>
        fetch(`${limited.url}/v1/models`, { headers: { authorization: bearerAuth(key.key) } }).then(async (r) => ({
          status: r.status,
          body: await r.json(),
        })),
      // OTLP/gRPC: RESOURCE_EXHAUSTED (8) is its 429.
      () =>
        grpcExport(limited.grpcPort!, encodeExportTraceServiceRequest({ resourceSpans: [] }), {
          authorization: bearerAuth(key.key),
          project_id: P,
        }).then((o) => ({
          status: o.ok ? 200 : o.code === 8 ? 429 : 500 + o.code,
        })),
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 46; i++) statuses.push((await routes[i % routes.length]!()).status);
    expect(
      statuses.slice(0, 40).every((s) => s !== 429 && s < 500),
      statuses.join(','),
    ).toBe(true);
    expect(statuses.slice(40), statuses.join(',')).toEqual([429, 429, 429, 429, 429, 429]);
    // The /v1 routes say it in the OpenAI shape.
    const v1 = await bearer.post('/v1/chat/completions', { model: 'none', messages: [] });
    expect(v1.status).toBe(429);
    expect(v1.body.error).toMatchObject({ code: 429, message: expect.stringContaining('per 60 s window') });
  });
});
