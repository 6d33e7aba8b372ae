import { afterAll, describe, expect, it } from 'vitest';
import { InProcessBus, TOPICS } from '@weft/bus';
import { ApiError, createLogger, type Caller } from '@weft/core';
import { decodeCallPartRowBinary, type CallPartRow } from '@weft/store';
import {
  CallIngest,
  inlineSpanConverter,
  IngestWorkers,
  workerSpanConverter,
  type CallPartEnvelope,
  type SpanConverter,
} from '@weft/ingest';
import { OtelIngest } from '../src/otel';

const pool = new IngestWorkers(1);
const workers = workerSpanConverter(pool);
afterAll(() => pool.close());

/** The real in-process bus with a subscriber that keeps what it is handed (in place of the ClickHouse writer). */
async function pipeline(spans: SpanConverter) {
  const bus = new InProcessBus<CallPartEnvelope>({ maxBatch: 1000, lingerMs: 0, maxPending: 10_000, publishTimeoutMs: 5000 });
  const stored: CallPartRow[] = [];
  await bus.subscribe(TOPICS.callParts, async (batch) => {
    for (const m of batch) stored.push(m.v === 1 ? m.row : decodeCallPartRowBinary(m.bytes));
  });
  return { otel: new OtelIngest(new CallIngest(bus), createLogger('silent'), spans), stored };
}

const caller = (over: Partial<Caller> = {}): Caller => ({ userId: 'u-1', keyId: 'k', isAdmin: false, entities: ['acme'], ...over });
const span = (spanId: string, project?: [string, string]) => ({
  resource: project
    ? {
        attributes: [
          { key: 'wandb.entity', value: { stringValue: project[0] } },
          { key: 'wandb.project', value: { stringValue: project[1] } },
        ],
      }
    : {},
  scopeSpans: [
    {
      spans: [
        { traceId: 'a'.repeat(32), spanId, name: 'op', startTimeUnixNano: '1714564800000000000', endTimeUnixNano: '1714564801000000000' },
      ],
    },
  ],
});

describe.each([
  ['on the serving thread', inlineSpanConverter],
  ['on a worker thread', workers],
])('OtelIngest, spans converted %s', (_where, spans) => {
  it('publishes one whole-call part (start and end) per accepted span, as the caller, once stored', async () => {
    const { otel, stored } = await pipeline(spans);
    const partial = await otel.ingest(
      { json: JSON.stringify({ resourceSpans: [span('b'.repeat(16)), span('xx')] }) },
      { projectId: 'acme/p', runId: 'r1', transport: 'http' },
      caller(),
    );
    expect(partial?.rejected_spans).toBe(1);
    expect(stored.map((r) => [r.id, r.started_at ?? null, r.ended_at ?? null])).toEqual([
      ['b'.repeat(16), Date.UTC(2024, 4, 1, 12) * 1000, Date.UTC(2024, 4, 1, 12, 0, 1) * 1000],
    ]);
    expect(stored[0]).toMatchObject({ project_id: 'acme/p', svc_user_id: 'u-1', svc_run_id: 'r1', trace_id: 'a'.repeat(32) });
  });

  it('refuses (403, nothing published) spans of a project outside the caller’s entities', async () => {
    const { otel, stored } = await pipeline(spans);
    const req = { resourceSpans: [span('c'.repeat(16), ['acme', 'p']), span('d'.repeat(16), ['other', 'p'])] };
    const err = await otel.ingest({ json: JSON.stringify(req) }, { projectId: null, transport: 'http' }, caller()).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
    expect(err.reason).toContain('other/p');
    expect(stored).toHaveLength(0);
    await otel.ingest({ json: JSON.stringify(req) }, { projectId: null, transport: 'http' }, caller({ isAdmin: true }));
    expect(new Set(stored.map((r) => r.project_id))).toEqual(new Set(['acme/p', 'other/p']));
  });

  it('turns a malformed request into a 400 naming the field', async () => {
    const { otel } = await pipeline(spans);
    const err = await otel
      .ingest(
        { decoded: { resourceSpans: [{ scopeSpans: 5 }] } },
        { projectId: 'acme/p', fieldPrefix: 'traces.', transport: 'http' },
        caller(),
      )
      .catch((e) => e);
    expect(err).toMatchObject({ status: 400, field: 'traces.resourceSpans.0.scopeSpans' });
    const json = await otel
      .ingest({ json: JSON.stringify({ resourceSpans: [{ scopeSpans: 5 }] }) }, { projectId: 'acme/p', transport: 'http' }, caller())
      .catch((e) => e);
    expect(json).toMatchObject({ status: 400, field: 'resourceSpans.0.scopeSpans' });
    const undecodable = await otel
      .ingest({ protobuf: Buffer.from([0x0a, 0xff]) }, { projectId: 'acme/p', transport: 'grpc' }, caller())
      .catch((e) => e);
    expect(undecodable).toMatchObject({ status: 400 });
    const badJson = await otel
      .ingest({ json: '{"resourceSpans": [' }, { projectId: 'acme/p', transport: 'http' }, caller())
      .catch((e) => e);
    expect(badJson).toMatchObject({ status: 400 });
    expect(badJson.reason).toContain('invalid JSON');
  });
});
