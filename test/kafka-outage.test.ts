import { afterAll, describe, expect, it } from 'vitest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { basicAuth, Client, HARNESS_API_KEY } from './helpers/client';
import { grpcExport } from './helpers/otlp-grpc-client';
import { startKafkaBroker, type KafkaBroker } from './helpers/kafka-broker';
import { eventually, pipeline, queriedIds, upsertBatch } from './helpers/pipeline';
import { newDataDir, type RunningWeft } from './helpers/server';

// Topology: this file's own single-node broker (it is stopped mid-test, so it cannot be the
// shared one), a gateway process and a writer(+query) process, as in kafka-pipeline.test.ts.
const running: RunningWeft[] = [];
let broker: KafkaBroker | null = null;
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
  await broker?.stop();
});

describe('the gateway while Kafka is down', () => {
  it('answers 503 with Retry-After, pushes back when its bound is reached, and loses nothing it acknowledged', async () => {
    broker = await startKafkaBroker(newDataDir('outage-broker'));
    const p = pipeline(broker.brokers, 'outage', { WEFT_PUBLISH_TIMEOUT_MS: '2500', WEFT_BUS_MAX_PENDING: '300' });
    const gateway = await p.startGateway();
    const writer = await p.startWriter();
    running.push(gateway, writer);
    const api = new Client(gateway.url);
    const acked: string[] = [];
    const post = async (ids: string[]) => {
      const r = await api.post('/call/upsert_batch', upsertBatch('acme/outage', ids));
      if (r.status === 200) acked.push(...ids);
      return r;
    };
    for (let i = 0; i < 4; i++) expect((await post(Array.from({ length: 25 }, (_, j) => `before-${i}-${j}`))).status).toBe(200);
    // OTLP/gRPC through the same bus: OK only once Kafka acknowledged, UNAVAILABLE while it is down.
    const grpcSpan = (spanId: string) =>
      encodeExportTraceServiceRequest({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: Buffer.alloc(16, 7),
                    spanId: Buffer.from(spanId, 'hex'),
                    name: 'grpc',
                    startTimeUnixNano: '1714564800000001000',
                    endTimeUnixNano: '1714564800000002000',
                  },
                ],
              },
            ],
          },
        ],
      });
    const grpcMeta = { authorization: basicAuth(HARNESS_API_KEY), project_id: 'acme/outage' };
    expect(await grpcExport(gateway.grpcPort!, grpcSpan('0a0a0a0a0a0a0a01'), grpcMeta)).toEqual({ ok: true, partial: null });
    acked.push('0a0a0a0a0a0a0a01');

    await broker.stop();
    const started = Date.now();
    const down = await post(['during-0']);
    expect(down.status).toBe(503);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await grpcExport(gateway.grpcPort!, grpcSpan('0a0a0a0a0a0a0a02'), grpcMeta)).toMatchObject({ ok: false, code: 14 }); // UNAVAILABLE: exporters retry
    // Many concurrent writes: refused at once, as the broker is known down (or, before the
    // probe noticed, beyond WEFT_BUS_MAX_PENDING messages in flight), and never stored.
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => post(Array.from({ length: 50 }, (_, j) => `burst-${i}-${j}`))));
    expect(burst.every((r) => r.status === 503)).toBe(true);
    expect(burst.every((r) => /(kafka unreachable|queue full).*not stored/.test(r.body.reason))).toBe(true);
    // Readiness names the bus (the store is fine); liveness still answers at once.
    const ready = await fetch(`${gateway.url}/ready`);
    expect(ready.status).toBe(503);
    const why = (await ready.json()) as { reason: string; dependencies: Record<string, { ok: boolean }> };
    expect(why.reason).toMatch(/^not ready: bus \(/);
    expect(why.dependencies.store?.ok).toBe(true);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);

    await broker.restart();
    // The gateway recovers by itself and the writer catches up.
    await eventually(async () => (await post(['after-0'])).status === 200, 60_000, 'gateway recovered');
    await eventually(
      async () => {
        const ids = new Set(await queriedIds(writer.url, 'acme/outage'));
        return acked.every((id) => ids.has(id));
      },
      60_000,
      'every acknowledged call queryable',
    );
    expect(acked.length).toBeGreaterThanOrEqual(101);
    // A broker start, stop and restart plus two services: headroom for a loaded 2-core machine.
  }, 240_000);
});
