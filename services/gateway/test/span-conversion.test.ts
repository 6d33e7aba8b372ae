import { afterAll, describe, expect, it } from 'vitest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { exportRequest } from '../../../bench/otlp-span-mix';
import { inlineSpanConverter, spanWorkerCount, workerSpanConverter } from '../src/span-conversion';

const opts = { projectId: 'acme/otel', runId: null, userId: 'u-1', acceptedAtMicros: 1_714_564_800_000_000 };

describe('span conversion on worker threads', () => {
  const workers = workerSpanConverter(2);
  afterAll(() => workers.close());

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
    const one = workerSpanConverter(1);
    try {
      const done: number[] = [];
      const bodies = [40, 1, 30, 2, 20, 3, 10, 4].map((n) => Buffer.from(encodeExportTraceServiceRequest(exportRequest(n, true))));
      await Promise.all(bodies.map((protobuf, i) => one.convert({ payload: { protobuf }, opts }).then(() => done.push(i))));
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

describe('WEFT_OTLP_WORKERS', () => {
  it('auto: none below 4 cores, then the cores less two, at most 4', () => {
    expect([1, 2, 3, 4, 6, 8, 32].map((cores) => spanWorkerCount('auto', cores))).toEqual([0, 0, 0, 2, 4, 4, 4]);
    expect(spanWorkerCount(3, 2)).toBe(3);
    expect(spanWorkerCount(0, 16)).toBe(0);
  });
});
