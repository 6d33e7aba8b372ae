import { afterAll, describe, expect, inject, it } from 'vitest';
import { Client } from './helpers/client';
import { eventually, metricValue, pipeline, queriedIds, upsertBatch } from './helpers/pipeline';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// The distributed mode's own mains, each a process: gateway → Kafka → the standalone writer
// main into its store; then the standalone query main reads that store (embedded chDB: one
// process per data dir, so the query main takes over the writer's once it has stopped).
const brokers = inject('kafkaBrokers');
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
});

describe('the standalone writer and query mains on Kafka', { timeout: 240_000 }, () => {
  it('writes what the gateway acknowledged, and the query main serves it', async () => {
    const p = pipeline(brokers, 'mains');
    const gateway = await p.startGateway();
    running.push(gateway);
    const writer = await startWeft({ entry: 'services/writer/src/main.ts', dataDir: newDataDir('mains-writer'), env: p.env });
    running.push(writer);
    const ready = await fetch(`${writer.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ dependencies: { store: { ok: true }, bus: { ok: true } } });

    const ids = Array.from({ length: 50 }, (_, i) => `mains-${i}`);
    expect((await new Client(gateway.url).post('/call/upsert_batch', upsertBatch('acme/mains', ids))).status).toBe(200);
    await eventually(
      // Each call's start and end came in one batch: one whole-call part each.
      async () => (await metricValue(writer.url, 'weft_writer_batch_rows_sum')) >= 50,
      30_000,
      'writer inserted every call',
    );
    expect(await writer.stop()).toBe(0);

    const query = await startWeft({ entry: 'services/query/src/main.ts', dataDir: writer.dataDir });
    running.push(query);
    expect((await queriedIds(query.url, 'acme/mains')).sort()).toEqual([...ids].sort());
  });
});
