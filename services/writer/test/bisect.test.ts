import { describe, expect, it } from 'vitest';
import { markPermanent, RetryableError } from '@weft/core';
import { storeFindingRejected } from '../src/bisect';

/** A store that refuses (for good) any batch holding a value in `bad`, and records what it stored. */
function refusing(bad: Set<number>) {
  const stored: number[] = [];
  let calls = 0;
  const store = async (items: number[]) => {
    calls++;
    const b = items.find((i) => bad.has(i));
    if (b !== undefined) throw markPermanent(new Error(`bad value ${b}`));
    stored.push(...items);
  };
  return { store, stored, calls: () => calls };
}

describe('storeFindingRejected', () => {
  it('stores everything in one call when nothing is refused', async () => {
    const s = refusing(new Set());
    expect(await storeFindingRejected([1, 2, 3], s.store)).toEqual({ rejected: [] });
    expect(s.stored).toEqual([1, 2, 3]);
    expect(s.calls()).toBe(1);
  });

  it('finds each refused item by index and stores all the others exactly once', async () => {
    const items = Array.from({ length: 37 }, (_, i) => i);
    const s = refusing(new Set([3, 20, 36]));
    const { rejected } = await storeFindingRejected(items, s.store);
    expect(rejected.map((r) => r.index)).toEqual([3, 20, 36]);
    expect(rejected[1]?.reason).toBe('bad value 20');
    expect([...s.stored].sort((a, b) => a - b)).toEqual(items.filter((i) => ![3, 20, 36].includes(i)));
  });

  it('throws a retryable failure as is (the whole batch is retried, nothing bisected)', async () => {
    let calls = 0;
    const down = async () => {
      calls++;
      throw new RetryableError('store down');
    };
    await expect(storeFindingRejected([1, 2, 3, 4], down)).rejects.toThrow('store down');
    expect(calls).toBe(1);
  });
});
