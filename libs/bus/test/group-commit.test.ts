import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/group-commit';

describe('GroupCommit', () => {
  it('joins concurrent adds into one handle call, flushes by size, and fails each add with its batch', async () => {
    const calls: number[][] = [];
    const gate = new GroupCommit<number>({
      maxItems: 4,
      lingerMs: 20,
      handle: async (items) => {
        calls.push(items);
        if (items.includes(13)) throw new Error('rejected');
      },
    });
    await Promise.all([gate.add([1]), gate.add([2, 3])]);
    expect(calls).toEqual([[1, 2, 3]]);
    await Promise.all([gate.add([4, 5]), gate.add([6, 7]), gate.add([8])]);
    expect(calls.slice(1)).toEqual([[4, 5, 6, 7], [8]]);
    const results = await Promise.allSettled([gate.add([13]), gate.add([14])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls.at(-1)).toEqual([13, 14]);
  });

  it('tells each add which of its own items the handler rejected', async () => {
    const gate = new GroupCommit<string>({
      maxItems: 10,
      lingerMs: 20,
      handle: async (items) => ({
        rejected: items.flatMap((v, index) => (v.startsWith('bad') ? [{ index, reason: `refused ${v}` }] : [])),
      }),
    });
    const [a, b] = await Promise.all([gate.add(['ok1', 'bad1']), gate.add(['bad2', 'ok2', 'bad3'])]);
    expect(a).toEqual({ rejected: [{ index: 1, reason: 'refused bad1' }] });
    expect(b).toEqual({
      rejected: [
        { index: 0, reason: 'refused bad2' },
        { index: 2, reason: 'refused bad3' },
      ],
    });
  });
});
