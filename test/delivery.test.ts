import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogBus, TOPICS } from '@weft/bus';
import { createLogger } from '@weft/core';
import type { CallPartEnvelope } from '@weft/ingest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { callPartTsvLine } from '@weft/harness';
import { Client, bearerAuth, basicAuth, postOversized } from './helpers/client';
import { clientFor, createKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { grpcExport } from './helpers/otlp-grpc-client';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

/**
 * Visible delivery: a server takes calls through each entrance (HTTP calls, OTLP/HTTP, OTLP/gRPC,
 * the inference front), some refused for known reasons; its counts per project and entrance —
 * through /project/delivery, /projects/delivery and /metrics — equal what was sent, accepted
 * parts are all stored, and a record of an envelope version not read is dead-lettered.
 */
const P = 'deliv/ok';
const POISON = 'deliv/poison';
const TS = '2024-06-01T00:00:00Z';
const RATE_LIMIT = 400;
let weft: RunningWeft;
let upstream: ModelServer;
let api: Client;

const id = (n: number) => `0199dddd-0000-7000-8000-${String(n).padStart(12, '0')}`;
const start = (n: number, project = P) => ({
  mode: 'start',
  req: { start: { project_id: project, id: id(n), trace_id: id(n), op_name: 'op', started_at: TS, inputs: { n }, attributes: {} } },
});
const end = (n: number, project = P) => ({
  mode: 'end',
  req: { end: { project_id: project, id: id(n), ended_at: TS, output: n, summary: {} } },
});

const span = (spanId: string, over: Record<string, unknown> = {}) => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId,
  name: 'span',
  startTimeUnixNano: '1714564800000001000',
  endTimeUnixNano: '1714564800500002000',
  ...over,
});

beforeAll(async () => {
  upstream = await startModelServer({ vllmKey: 'k' });
  const dataDir = newDataDir('delivery');
  const upstreams = join(dataDir, 'upstreams.json');
  writeFileSync(
    upstreams,
    JSON.stringify({ upstreams: [{ name: 'vllm', base_url: `${upstream.url}/vllm/v1`, api_key_env: 'FAKE_KEY', models: ['m'] }] }),
  );
  // A record an earlier process left in its ingest log in an envelope version this one does not
  // read (version 2, a pre-1.0 TabSeparated line): dead-lettered at the start with why.
  const line = callPartTsvLine({
    project_id: POISON,
    id: 'bad-date',
    started_at: Date.UTC(2026, 0, 1) * 1000,
    input_refs: [],
    output_refs: [],
    created_at: Date.UTC(2026, 0, 1) * 1000,
  });
  const log = new LogBus<CallPartEnvelope>({
    dir: join(dataDir, 'ingest-log'),
    // Writes the old record; reads it as a value that stays unstored (this process must not dead-letter it).
    codec: { encodeMany: () => Buffer.from('\u0002' + line), decodeMany: () => [{} as CallPartEnvelope] },
    batchRows: 100,
    flushMs: 60_000,
    maxPendingBytes: 1 << 20,
    fsync: false,
    log: createLogger('silent'),
  });
  log.open();
  // A subscriber that stores nothing: the record stays in the log for the server.
  await log.subscribe(TOPICS.callParts, async () => {
    throw new Error('not stored by this test');
  });
  await log.publish(TOPICS.callParts, [{ key: `${POISON}/bad-date`, value: {} as CallPartEnvelope }]);
  await log.close();

  weft = await startWeft({
    dataDir,
    env: {
      WEFT_UPSTREAMS_FILE: upstreams,
      FAKE_KEY: 'k',
      WEFT_BODY_LIMIT_BYTES: String(64 * 1024),
      WEFT_RATE_LIMIT_MAX: String(RATE_LIMIT),
      WEFT_RATE_LIMIT_WINDOW_MS: '600000',
      WEFT_OTLP_GRPC_PORT: '0',
    },
  });
  api = new Client(weft.url);
  expect((await api.post('/admin/entities/create', { name: 'deliv' })).status).toBe(200);
  expect((await api.post('/admin/entities/create', { name: 'other' })).status).toBe(200);
}, 180_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

describe('visible delivery', () => {
  it('counts what each entrance accepted and refused (by reason), per project, and all of it stored', async () => {
    // HTTP calls: 3 calls whole, 1 start then its end, 2 finished calls = 12 parts.
    const batch = await api.post('/call/upsert_batch', { batch: [start(1), end(1), start(2), end(2), start(3), end(3), start(4)] });
    expect(batch.status, batch.text).toBe(200);
    expect((await api.post('/call/end', { end: end(4).req.end })).status).toBe(200);
    const completed = [5, 6].map((n) => ({ ...start(n).req.start, ended_at: TS, output: n, summary: {} }));
    expect((await api.post(`/v2/${P}/calls/complete`, { batch: completed })).status).toBe(200);
    // Refused: an invalid batch, another entity's key, a rate-limited key (the project in the path), one too large, a wrong key.
    expect((await api.post('/call/upsert_batch', { batch: [{ mode: 'start', req: { start: { project_id: P } } }] })).status).toBe(422);
    const stranger = clientFor(api, await createKey(api, 'stranger', ['other']));
    expect((await stranger.post('/call/start', start(7).req)).status).toBe(403);
    const flood = clientFor(api, await createKey(api, 'flood', ['deliv']));
    for (let i = 0; i < RATE_LIMIT; i++) await flood.post('/project/delivery', { project_id: P });
    const limited = await Promise.all([1, 2].map(() => flood.post(`/v2/${P}/call/start`, start(8).req)));
    expect(limited.map((r) => r.status)).toEqual([429, 429]);
    expect(await postOversized(weft.url, '/call/upsert_batch', 1024 * 1024, basicAuth('test-key'))).toBe(413);
    expect((await api.withAuth(basicAuth('no-such-key')).post('/call/start', start(9).req)).status).toBe(401);

    // OTLP/HTTP: 3 spans taken, 1 refused inside the request (6 parts); a request too large for the project.
    const otlp = { project_id: P, 'content-type': 'application/json' };
    const spans = [span('1000000000000001'), span('1000000000000002'), span('1000000000000003'), span('not-hex')];
    const traces = await api.raw('/otel/v1/traces', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }), otlp);
    expect(traces.status, traces.text).toBe(200);
    expect(traces.body.partialSuccess.rejectedSpans).toBe(1);
    const big = 'x'.repeat(70 * 1024);
    expect((await api.raw('/otel/v1/traces', JSON.stringify({ big }), otlp)).status).toBe(413);

    // OTLP/gRPC: 2 spans (4 parts); a wrong key.
    const pb = encodeExportTraceServiceRequest({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: ['2000000000000001', '2000000000000002'].map((s) => ({
                traceId: Buffer.from('1af7651916cd43dd8448eb211c80319c', 'hex'),
                spanId: Buffer.from(s, 'hex'),
                name: 'grpc-span',
                startTimeUnixNano: '1714564800000001000',
                endTimeUnixNano: '1714564800000002000',
              })),
            },
          ],
        },
      ],
    });
    const grpcOk = await grpcExport(weft.grpcPort!, pb, { authorization: 'Bearer test-key', project_id: P });
    expect(grpcOk.ok).toBe(true);
    const grpcBad = await grpcExport(weft.grpcPort!, pb, { authorization: 'Bearer wrong', project_id: P });
    expect(grpcBad.ok).toBe(false);

    // Inference: one completion recorded (a start and an end); one invalid request.
    const chat = new Client(weft.url, bearerAuth('test-key'));
    const headers = { 'x-project-id': P };
    const done = await chat.post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, headers);
    expect(done.status, done.text).toBe(200);
    expect((await chat.post('/v1/chat/completions', { model: 'm' }, headers)).status).toBe(400);

    const delivery = async () => (await api.post('/project/delivery', { project_id: P })).body;
    await expect.poll(async () => (await delivery()).total.stored, { timeout: 20_000, interval: 200 }).toBe(24);
    const d = await delivery();
    const by = Object.fromEntries(d.entrances.map((e: { entrance: string }) => [e.entrance, e]));
    expect(by.calls).toMatchObject({
      accepted: 12,
      stored: 12,
      dead_lettered: 0,
      sampled_out: 0,
      refused: { invalid: 1, forbidden: 1, rate_limited: 2 },
    });
    expect(by.otlp_http).toMatchObject({ accepted: 6, stored: 6, refused: { too_large: 1 }, spans_rejected: { invalid_span_id: 1 } });
    expect(by.otlp_grpc).toMatchObject({ accepted: 4, stored: 4, refused: { unauthenticated: 1 } });
    expect(by.inference).toMatchObject({ accepted: 2, stored: 2, refused: { invalid: 1 } });
    expect(d.total).toMatchObject({ accepted: 24, stored: 24 });
    expect(d.lag).toMatchObject({ seconds: 0, pending_parts: 0 });
    expect(d.lag.last_stored_seconds).toBeGreaterThanOrEqual(0);
    expect(d.lag_over_warning).toBe(false);
    expect(d.reports).toEqual(['accepted', 'stored']);
    // What the engine holds: every accepted call of the project.
    const stats = await api.post('/calls/query_stats', { project_id: P });
    expect(stats.body.count).toBe(6 + 3 + 2 + 1);
  });

  it('shows refusals whose project was not known, and dead letters, to admin keys; a member sees its projects only', async () => {
    const all = (await api.post('/projects/delivery', {})).body;
    const unknown = all.projects.find((p: { project_id: string | null }) => p.project_id === null);
    expect(unknown.total.refused).toEqual({ too_large: 1, unauthenticated: 1 });
    // The record of a version not read is dead-lettered before any part is read: no project counts it.
    expect(all.projects.find((p: { project_id: string | null }) => p.project_id === POISON)).toBeUndefined();
    const letters = (await api.post('/admin/dead_letters/list', {})).body.dead_letters;
    expect(letters).toHaveLength(1);
    expect(letters[0].reason).toMatch(/envelope version 2 is not read/);
    const read = await api.post('/admin/dead_letters/read', { seq: letters[0].seq });
    expect(read.body.payload).toEqual([{ undecodable: expect.stringMatching(/envelope version 2 is not read/) }]);

    const member = clientFor(api, await createKey(api, 'member', ['deliv']));
    const mine = (await member.post('/projects/delivery', {})).body.projects.map((p: { project_id: string }) => p.project_id);
    expect(mine).toEqual([P]);
    const stranger = clientFor(api, await createKey(api, 'stranger-2', ['other']));
    expect((await stranger.post('/project/delivery', { project_id: P })).status).toBe(403);
  });

  it('exposes the same counts in /metrics', async () => {
    const text = await (await fetch(`${weft.url}/metrics`)).text();
    const value = (name: string, labels: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
    };
    expect(value('weft_delivery_parts_total', `project="${P}",entrance="calls",outcome="accepted"`)).toBe(12);
    expect(value('weft_delivery_parts_total', `project="${P}",entrance="otlp_grpc",outcome="stored"`)).toBe(4);
    expect(value('weft_delivery_refused_total', `project="${P}",entrance="calls",reason="rate_limited"`)).toBe(2);
    expect(value('weft_delivery_refused_total', `project="",entrance="calls",reason="too_large"`)).toBe(1);
    expect(value('weft_delivery_parts_total', `project="${POISON}",entrance="unknown",outcome="dead_lettered"`)).toBeUndefined();
    expect(value('weft_dead_lettered_total', 'kind="undecodable"')).toBe(1);
    expect(value('weft_delivery_lag_seconds', `project="${P}"`)).toBe(0);
  });
});
