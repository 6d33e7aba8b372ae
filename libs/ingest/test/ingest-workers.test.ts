import { afterAll, describe, expect, it } from 'vitest';
import { ApiError, type Caller } from '@weft/core';
import { defaultRequestLimits, checkRouteJsonBody } from '@weft/http';
import {
  callPartCodec,
  callPartMessage,
  coalesceCallParts,
  encodeCallBatch,
  encodedCallPartMessages,
  inlineSpanConverter,
  IngestWorkers,
  ingestWorkerCount,
  upsertBatchParts,
  workerSpanConverter,
  type CallBatchRefused,
  type CallBatchTask,
  type EncodedCallBatch,
} from '@weft/ingest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { exportRequest } from '../../../bench/otlp-span-mix';
import { callItems } from '../../../bench/sample-calls';

const opts = { projectId: 'acme/otel', runId: null, userId: 'u-1', acceptedAtMicros: 1_714_564_800_000_000 };
const pool = new IngestWorkers(2);
afterAll(() => pool.close());

describe('OTLP spans on the ingest workers', () => {
  const workers = workerSpanConverter(pool);

  it('hands back the very bytes, keys and counts the serving thread makes, for protobuf and OTLP/JSON', async () => {
    // The bench's GenAI agent mix: messages as JSON text, usage, events, errors, threads.
    const protobuf = Buffer.from(encodeExportTraceServiceRequest(exportRequest(200, true)));
    const json = JSON.stringify(exportRequest(50, false));
    for (const payload of [{ protobuf }, { json }]) {
      const here = await inlineSpanConverter.convert({ payload, opts });
      const there = await workers.convert({ payload, opts });
      expect(here.ok && there.ok).toBe(true);
      if (!here.ok || !there.ok) continue;
      expect(there.accepted).toBeGreaterThan(0);
      expect(Buffer.from(there.bytes).equals(Buffer.from(here.bytes))).toBe(true);
      expect({ ...there, bytes: null }).toEqual({ ...here, bytes: null });
    }
  });

  it('converts requests in parallel, each answered with its own spans', async () => {
    const bodies = [3, 5, 7, 11].map((n) => Buffer.from(encodeExportTraceServiceRequest(exportRequest(n, true))));
    const results = await Promise.all(bodies.map((protobuf) => workers.convert({ payload: { protobuf }, opts })));
    expect(results.map((r) => (r.ok ? r.accepted : -1))).toEqual([3, 5, 7, 11]);
  });

  it('converts requests in the order they came: none waits behind later ones', async () => {
    const one = new IngestWorkers(1);
    try {
      const done: number[] = [];
      const bodies = [40, 1, 30, 2, 20, 3, 10, 4].map((n) => Buffer.from(encodeExportTraceServiceRequest(exportRequest(n, true))));
      const converter = workerSpanConverter(one);
      await Promise.all(bodies.map((protobuf, i) => converter.convert({ payload: { protobuf }, opts }).then(() => done.push(i))));
      expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await one.close();
    }
  });

  it('returns a refused request as a value naming the field, as the serving thread does', async () => {
    const refused = await workers.convert({ payload: { json: JSON.stringify({ resourceSpans: [{ scopeSpans: 5 }] }) }, opts });
    expect(refused).toMatchObject({ ok: false, reason: 'invalid_request', field: 'resourceSpans.0.scopeSpans' });
    const undecodable = await workers.convert({ payload: { protobuf: Buffer.from([0x0a, 0xff]) }, opts });
    expect(undecodable).toMatchObject({ ok: false, reason: null, field: 'body' });
  });
});

describe('upsert batches on the ingest workers', () => {
  const caller: Caller = { userId: 'u-1', keyId: 'k', isAdmin: false, entities: ['acme'] };
  const task = (body: string | Buffer | null): CallBatchTask => ({
    body: typeof body === 'string' ? Buffer.from(body) : body,
    caller,
    acceptedAtMicros: 1_714_564_800_000_000,
    limits: defaultRequestLimits,
  });
  const convert = (t: CallBatchTask) => pool.run<EncodedCallBatch | CallBatchRefused>('convertCallBatch', t);
  const batchOf = (calls: number, from = 0) =>
    JSON.stringify({ batch: Array.from({ length: calls }, (_, i) => callItems('acme/bench', `call-${from + i}`, from + i)).flat() });

  it('hands back the records the serving thread would publish, and its response', async () => {
    // A start and end folded into one part each, a start alone, an end alone, a start without ids.
    const body = JSON.parse(batchOf(50)) as { batch: unknown[] };
    body.batch.push((callItems('acme/bench', 'open', 7) as unknown[])[0], (callItems('acme/bench', 'earlier', 8) as unknown[])[1], {
      mode: 'start',
      req: { start: { project_id: 'acme/bench', op_name: 'x', started_at: '2026-01-01T00:00:00Z', inputs: {} } },
    });
    const t = task(JSON.stringify(body));
    const there = await convert(t);
    expect(there.ok).toBe(true);
    if (!there.ok) return;

    // The serving thread's path: the edge's checks, the rows, the bus codec over v1 messages.
    const checked = checkRouteJsonBody('callUpsertBatch', t.body, caller, defaultRequestLimits);
    const here = upsertBatchParts(checked.batch, caller, t.acceptedAtMicros);
    const generated = there.res[102] as { id: string; trace_id: string };
    expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
    // Ids the server makes differ per run: give the serving thread's row the worker's.
    const last = here.rows[102]!;
    here.rows[102] = { ...last, id: generated.id, trace_id: generated.trace_id };
    here.res[102] = generated;
    expect(there.res).toEqual(here.res);
    expect(there.acknowledged).toBe(103);
    const parts = coalesceCallParts(here.rows);
    expect(there.keys).toEqual(parts.map((r) => `${r.project_id}/${r.id}`));
    const inline = callPartCodec.encodeMany!(parts.map((r) => callPartMessage(r).value));
    const worker = callPartCodec.encodeMany!(encodedCallPartMessages(there.bytes, there.ends, there.keys).map((m) => m.value));
    expect(Buffer.from(worker).equals(Buffer.from(inline))).toBe(true);
  });

  it('refuses what the serving thread refuses, with its status, reason and field (seven kinds)', async () => {
    const other = batchOf(2).replace('acme/bench', 'globex/bench');
    const badMode = JSON.stringify({ batch: [{ mode: 'upsert', req: {} }] });
    const deep = JSON.stringify({ batch: [{ mode: 'start', req: { start: { inputs: JSON.parse('['.repeat(200) + ']'.repeat(200)) } } }] });
    // …and a request with no body at all (no Content-Type, no bytes: the handler's body is undefined).
    const bodies = [other, badMode, deep, '{"batch": [', '', Buffer.from([0x7b, 0xff, 0x7d]), null];
    for (const body of bodies) {
      const t = task(body);
      let expected: ApiError | undefined;
      try {
        checkRouteJsonBody('callUpsertBatch', t.body, caller, defaultRequestLimits);
      } catch (e) {
        expected = e as ApiError;
      }
      expect(expected).toBeInstanceOf(ApiError);
      const r = await convert(t);
      expect(r).toEqual({
        ok: false,
        status: expected!.status,
        reason: expected!.reason,
        field: expected!.field,
        extra: expected!.extra,
        headers: expected!.headers,
      });
    }
  });

  it('runs the same function the serving thread would', () => {
    const t = task(batchOf(3));
    const r = encodeCallBatch(t);
    expect(r.ok && r.res.length).toBe(6);
  });
});

describe('WEFT_INGEST_WORKERS', () => {
  it('auto: none below 4 cores, then the cores less two, at most 4', () => {
    expect([1, 2, 3, 4, 6, 8, 32].map((cores) => ingestWorkerCount('auto', cores))).toEqual([0, 0, 0, 2, 4, 4, 4]);
    expect(ingestWorkerCount(3, 2)).toBe(3);
    expect(ingestWorkerCount(0, 16)).toBe(0);
  });
});
