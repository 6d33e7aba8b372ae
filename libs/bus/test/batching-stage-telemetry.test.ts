import { describe, expect, it } from 'vitest';
import { metrics } from '@weft/core';
import { BatchingStage, type StageErrors } from '../src';

const errors: StageErrors = {
  full: () => new Error('full'),
  timedOut: () => new Error('timed out'),
  failed: (e) => e as Error,
};

/** A metric's value for the series whose labels include `labels` (a histogram's by its sample name). */
async function valueOf(
  metric: { get(): Promise<{ values: { labels: object; value: number; metricName?: string }[] }> },
  labels: Record<string, string>,
  sample?: string,
) {
  const { values } = await metric.get();
  const hit = values.find(
    (v) => (!sample || v.metricName === sample) && Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  );
  return hit?.value ?? 0;
}

describe('batching stage telemetry', () => {
  it('records batches, sends and pending itself, by transport and lane', async () => {
    const transport = 'test-batches';
    const stage = new BatchingStage<string>({ send: async () => {}, transport, maxBatchItems: 100, lingerMs: 20, errors });
    const offers = [stage.offer('a', ['1', '2'], 10), stage.offer('a', ['3'], 5), stage.offer('b', ['4'], 7)];
    expect(await valueOf(metrics.stagePendingItems, { transport })).toBe(4);
    expect(await valueOf(metrics.stagePendingBytes, { transport })).toBe(22);
    await Promise.all(offers);
    expect(await valueOf(metrics.stageBatchItems, { transport, lane: 'a' }, 'weft_stage_batch_items_count')).toBe(1);
    expect(await valueOf(metrics.stageBatchItems, { transport, lane: 'a' }, 'weft_stage_batch_items_sum')).toBe(3);
    expect(await valueOf(metrics.stageBatchItems, { transport, lane: 'b' }, 'weft_stage_batch_items_sum')).toBe(1);
    expect(await valueOf(metrics.stageSendSeconds, { transport, lane: 'a', outcome: 'ok' }, 'weft_stage_send_seconds_count')).toBe(1);
    expect(await valueOf(metrics.stagePendingItems, { transport })).toBe(0);
    expect(await valueOf(metrics.stagePendingBytes, { transport })).toBe(0);
    await stage.close();
  });

  it('counts failed sends, retries, and the offers it refuses (full, timed out)', async () => {
    const transport = 'test-failures';
    let attempts = 0;
    const retrying = new BatchingStage<string>({
      send: async () => {
        if (++attempts < 3) throw new Error('store away');
      },
      transport,
      laneLabel: (lane) => lane.toUpperCase(),
      maxBatchItems: 10,
      lingerMs: 0,
      retryMs: 5,
      errors,
    });
    await retrying.offer('t', ['x'], 1);
    expect(await valueOf(metrics.stageSendRetries, { transport, lane: 'T' })).toBe(2);
    expect(await valueOf(metrics.stageSendSeconds, { transport, lane: 'T', outcome: 'failed' }, 'weft_stage_send_seconds_count')).toBe(2);
    expect(await valueOf(metrics.stageSendSeconds, { transport, lane: 'T', outcome: 'ok' }, 'weft_stage_send_seconds_count')).toBe(1);
    await retrying.close();

    const overload = await valueOf(metrics.busRejected, { reason: 'overload' });
    const timeout = await valueOf(metrics.busRejected, { reason: 'timeout' });
    const stuck = new BatchingStage<string>({
      send: () => new Promise(() => {}),
      transport,
      maxBatchItems: 1,
      lingerMs: 0,
      maxPendingItems: 1,
      timeoutMs: 30,
      errors,
    });
    const first = stuck.offer('t', ['a'], 1);
    await expect(stuck.offer('t', ['b'], 1)).rejects.toThrow('full');
    await expect(first).rejects.toThrow('timed out');
    expect(await valueOf(metrics.busRejected, { reason: 'overload' })).toBe(overload + 1);
    expect(await valueOf(metrics.busRejected, { reason: 'timeout' })).toBe(timeout + 1);
  });
});
