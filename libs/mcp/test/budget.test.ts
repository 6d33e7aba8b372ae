import { describe, expect, it } from 'vitest';
import { clip, fitPage, fitValue, jsonSize, LIST_CLIP } from '../src/budget';
import { ArgumentError, decodeCursor, encodeCursor } from '../src/cursor';
import { textChunk } from '../src/tools/calls';
import { depthFirst } from '../src/tools/trace';
import type { ApiCall } from '../src/tools/shared';

describe('budgets', () => {
  it('clips long strings, long arrays, wide and deep values, saying how much was left out', () => {
    const v = { s: 'x'.repeat(250), a: Array.from({ length: 12 }, (_, i) => i), deep: { a: { b: { c: { d: 1 } } } } };
    expect(clip(v, LIST_CLIP)).toEqual({
      s: `${'x'.repeat(200)}…[+50 chars]`,
      a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, '…[+2 items]'],
      deep: { a: { b: { c: '…[object of 1 keys]' } } },
    });
  });

  it('fits any value in its share, at worst as the start of its JSON', () => {
    const huge = { rows: Array.from({ length: 500 }, (_, i) => ({ i, text: 'y'.repeat(1000) })) };
    for (const chars of [50, 300, 5_000]) expect(jsonSize(fitValue(huge, chars))).toBeLessThanOrEqual(chars);
    expect(fitValue({ a: 1 }, 100)).toEqual({ a: 1 });
  });

  it('pages a list: the whole answer within the budget, at least one item', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ i, pad: 'z'.repeat(90) }));
    const page = fitPage({}, items, 2_000, (n) => ({ items: items.slice(0, n), next: n, note: 'n'.repeat(200) })) as { next: number };
    expect(jsonSize(page)).toBeLessThanOrEqual(2_000);
    expect(page.next).toBeGreaterThan(5);
    expect((fitPage({}, items, 10, (n) => ({ n })) as { n: number }).n).toBe(1);
  });

  it('cuts text by the size of its JSON, never inside a surrogate pair', () => {
    const quotes = '"'.repeat(1000);
    expect(JSON.stringify(textChunk(quotes, 0, 500)).length).toBeLessThanOrEqual(500);
    const emoji = '😀'.repeat(10);
    const c = textChunk(emoji, 0, 7);
    expect(c.length % 2).toBe(0);
  });
});

describe('cursors', () => {
  it('come back to the tool and question that gave them, else name the argument', () => {
    const args = { project_id: 'a/b', limit: 5 };
    const cursor = encodeCursor('search_calls', args, 40);
    expect(decodeCursor('search_calls', { ...args, cursor, max_chars: 3000 }, cursor)).toBe(40);
    expect(() => decodeCursor('get_trace', args, cursor)).toThrow(ArgumentError);
    expect(() => decodeCursor('search_calls', { ...args, limit: 6 }, cursor)).toThrow(/other arguments/);
    expect(() => decodeCursor('search_calls', args, '%%%')).toThrow(/"cursor"/);
  });
});

describe('a trace as a tree', () => {
  it('orders calls depth first, children by start, orphans as roots', () => {
    const c = (id: string, parent: string | null, t: number) =>
      ({ id, parent_id: parent, started_at: new Date(1_700_000_000_000 + t).toISOString() }) as ApiCall;
    const nodes = depthFirst([c('b', 'r', 2), c('r', null, 0), c('a', 'r', 1), c('a1', 'a', 3), c('x', 'gone', 5)]);
    expect(nodes.map((n) => [n.call.id, n.depth, n.children])).toEqual([
      ['r', 0, 2],
      ['a', 1, 1],
      ['a1', 2, 0],
      ['b', 1, 0],
      ['x', 0, 0],
    ]);
  });
});
