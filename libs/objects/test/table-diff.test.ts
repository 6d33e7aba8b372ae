import { describe, expect, it } from 'vitest';
import { diffRowDigests } from '../src/table-diff';

const kinds = (d: ReturnType<typeof diffRowDigests>) => d.entries.map((e) => [e.kind, e.base_index, e.index]);

describe('diffRowDigests', () => {
  it('pairs an edited row (out and in at the same place) as a change', () => {
    const d = diffRowDigests(['a', 'b', 'c'], ['a', 'B', 'c']);
    expect(kinds(d)).toEqual([['changed', 1, 1]]);
    expect(d).toMatchObject({ added: 0, removed: 0, changed: 1, unchanged: 2 });
    expect(d.entries[0]).toMatchObject({ base_digest: 'b', digest: 'B' });
  });

  it('finds rows added, removed, and edits next to deletions', () => {
    // b deleted, d edited to D, e and f appended.
    const d = diffRowDigests(['a', 'b', 'c', 'd'], ['a', 'c', 'D', 'e', 'f']);
    expect(kinds(d)).toEqual([
      ['removed', 1, null],
      ['changed', 3, 2],
      ['added', null, 3],
      ['added', null, 4],
    ]);
    expect(d).toMatchObject({ added: 2, removed: 1, changed: 1, unchanged: 2 });
  });

  it('counts duplicates by how often they occur, and ignores moves', () => {
    expect(kinds(diffRowDigests(['a', 'a', 'b'], ['b', 'a']))).toEqual([['removed', 1, null]]);
    expect(kinds(diffRowDigests(['a'], ['a', 'a']))).toEqual([['added', null, 1]]);
    expect(diffRowDigests(['x', 'y'], ['y', 'x']).entries).toEqual([]);
  });

  it('handles empty versions', () => {
    expect(kinds(diffRowDigests([], ['a']))).toEqual([['added', null, 0]]);
    expect(kinds(diffRowDigests(['a'], []))).toEqual([['removed', 0, null]]);
    expect(diffRowDigests([], []).entries).toEqual([]);
  });

  it('is linear: 200,000 rows with a few edits in seconds at most (a quadratic pairing would take minutes)', () => {
    const base = Array.from({ length: 200_000 }, (_, i) => `row-${i}`);
    const next = base.slice();
    next[5] = 'edited';
    next.splice(100_000, 1);
    next.push('new');
    const t0 = performance.now();
    const d = diffRowDigests(base, next);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(d).toMatchObject({ added: 1, removed: 1, changed: 1, unchanged: 199_998 });
  });
});
