import { describe, expect, it } from 'vitest';
import { BusUnavailableError, InProcessBus } from '../src';

const opts = { maxBatch: 100, lingerMs: 1, maxPending: 1000, publishTimeoutMs: 2000 };
const msgs = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ key: tag, value: `${tag}-${i}` }));

describe('in-process bus', () => {
  it('resolves publishes only after the handler stored them, sharing handler calls (group commit)', async () => {
    const bus = new InProcessBus<string>(opts);
    const batches: string[][] = [];
    await bus.subscribe('t', async (b) => {
      await new Promise((r) => setTimeout(r, 20));
      batches.push(b);
    });
    const publishes = Array.from({ length: 10 }, (_, i) => bus.publish('t', msgs(5, `p${i}`)));
    await Promise.all(publishes);
    const all = batches.flat();
    expect(all).toHaveLength(50);
    expect(batches.length).toBeLessThan(10);
    await bus.close();
  });

  it('waits up to the window before each insert for more publishes, and not at all once a batch is full', async () => {
    const bus = new InProcessBus<string>({ ...opts, maxBatch: 10, lingerMs: 200 });
    const batches: string[][] = [];
    await bus.subscribe('t', async (b) => void batches.push(b));
    // Publishes spread over less than the window share one insert.
    const spread = [bus.publish('t', msgs(2, 'a'))];
    await new Promise((r) => setTimeout(r, 30));
    spread.push(bus.publish('t', msgs(2, 'b')));
    await Promise.all(spread);
    expect(batches).toEqual([['a-0', 'a-1', 'b-0', 'b-1']]);
    // A full batch goes at once: far sooner than the window.
    const started = performance.now();
    await bus.publish('t', msgs(10, 'c'));
    expect(performance.now() - started).toBeLessThan(150);
    expect(batches[1]).toHaveLength(10);
    await bus.close();
  });

  it("stretches the window while admitted requests or the last insert's publishers have yet to publish, up to its bound", async () => {
    const bus = new InProcessBus<string>({ ...opts, lingerMs: 10, maxLingerMs: 2_000 });
    let admitted = 3;
    bus.expectPublishesFrom(() => admitted);
    const batches: string[][] = [];
    await bus.subscribe('t', async (b) => void batches.push(b));
    const spaced = async (tags: string[]) => {
      const started = performance.now();
      const all: Promise<void>[] = [];
      for (const tag of tags) {
        if (all.length > 0) await new Promise((r) => setTimeout(r, 60));
        all.push(bus.publish('t', msgs(1, tag)));
      }
      await Promise.all(all);
      return performance.now() - started;
    };
    // Three requests admitted, publishing 60 ms apart (far past the 10 ms window): one insert,
    // closed by the last of them long before the bound.
    expect(await spaced(['a', 'b', 'c'])).toBeLessThan(1_000);
    expect(batches).toEqual([['a-0', 'b-0', 'c-0']]);
    // Its three publishers coming back, not yet admitted when the window opens: one insert again.
    admitted = 0;
    expect(await spaced(['d', 'e', 'f'])).toBeLessThan(1_000);
    expect(batches[1]).toEqual(['d-0', 'e-0', 'f-0']);
    // Expected publishers that never come (gone, or refused by validation) hold it to the bound only.
    const waited = await spaced(['g']);
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(4_000);
    expect(batches[2]).toEqual(['g-0']);
    await bus.close();
  });

  it('rejects publishes whose batch failed to store, and later ones still succeed', async () => {
    const bus = new InProcessBus<string>(opts);
    let fail = true;
    await bus.subscribe('t', async () => {
      if (fail) throw new Error('store down');
    });
    await expect(bus.publish('t', msgs(1, 'a'))).rejects.toBeInstanceOf(BusUnavailableError);
    fail = false;
    await expect(bus.publish('t', msgs(1, 'b'))).resolves.toBeUndefined();
  });

  it('pushes back when too many messages wait, and times out instead of acknowledging', async () => {
    const bus = new InProcessBus<string>({ ...opts, maxPending: 10, publishTimeoutMs: 50 });
    let release!: () => void;
    await bus.subscribe('t', () => new Promise<void>((r) => (release = r)));
    const first = bus.publish('t', msgs(10, 'a'));
    await expect(bus.publish('t', msgs(1, 'b'))).rejects.toThrow(/queue full/);
    // Already handed to the handler: the answer cannot promise it is not stored.
    await expect(first).rejects.toThrow(/may still be stored/);
    release();
  });

  it('never stores a publish that timed out while queued, and bounds the bytes waiting', async () => {
    const bus = new InProcessBus<string>({ ...opts, lingerMs: 0, publishTimeoutMs: 50, maxPendingBytes: 100, sizeOf: (v) => v.length });
    const stored: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await bus.subscribe('t', async (b) => {
      await gate;
      stored.push(...b);
    });
    const first = expect(bus.publish('t', msgs(1, 'first'))).rejects.toThrow(/may still be stored/);
    // Queued behind the blocked handler; it times out while waiting.
    const second = expect(bus.publish('t', msgs(2, 'second'))).rejects.toThrow(/not stored within 50 ms.*not stored/);
    expect(bus.pressure().pendingBytes).toBe('first-0'.length + 'second-0'.length * 2);
    await expect(bus.publish('t', [{ key: 'x', value: 'x'.repeat(90) }])).rejects.toThrow(/queue full.*not stored/);
    await second;
    await first;
    release();
    await new Promise((r) => setTimeout(r, 50));
    await bus.publish('t', msgs(1, 'third'));
    expect(stored).toEqual(['first-0', 'third-0']);
    expect(bus.pressure().pendingBytes).toBe(0);
    await bus.close();
  });
});
