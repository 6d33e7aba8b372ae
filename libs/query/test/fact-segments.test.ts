import { describe, expect, it } from 'vitest';
import { dayStartUs, gapsOf, planDay, splitByCalls, type DayToPlan, type FactSegment, type SegmentState } from '../src';

const DAY = '2026-06-01';
const T0 = dayStartUs(DAY);
const MIN = 60_000_000;
const policy = {
  settleMs: 60_000,
  mergeWays: 3,
  mergeRatio: 4,
  patchRebuildMs: 600_000,
  patchRebuildCalls: 100,
  smallSegmentCalls: 200,
  maxSegmentCalls: 1_000_000,
};
/** Minute m of the day, in ms. */
const at = (m: number) => (T0 + m * MIN) / 1000;

let builds = 0;
function seg(fromMin: number, toMin: number, calls: number, state: SegmentState = { kind: 'current' }, builtAtMin = toMin) {
  const s: FactSegment = {
    day: DAY,
    from_us: T0 + fromMin * MIN,
    to_us: T0 + toMin * MIN,
    build: T0 + builtAtMin * MIN + ++builds,
    calls,
    starts_block: 1,
    ends_block: 1,
    deleted_block: 0,
    prices_block: 0,
  };
  return { ...s, state };
}
const ranges = (p: ReturnType<typeof planDay>) =>
  p.builds.map((b) => [(b.range[0] - T0) / MIN, (b.range[1] - T0) / MIN, b.replaces.length]);

describe('a day built a segment at a time', () => {
  it('first pass: the settled calls, from the day’s start to the cut; the rest due when the first of them settles', () => {
    const d: DayToPlan = { day: DAY, calls: { firstUs: T0 + 5 * MIN, lastUs: T0 + 30 * MIN }, segments: [] };
    const p = planDay(d, at(30), policy);
    expect(ranges(p)).toEqual([[0, 29, 0]]);
    expect(p.nextMs).toBe(at(30));
  });

  it('a live day: only the calls since the last segment, up to the cut', () => {
    const d: DayToPlan = { day: DAY, calls: { firstUs: T0, lastUs: T0 + 40 * MIN }, segments: [seg(0, 29, 1000)] };
    expect(ranges(planDay(d, at(41), policy))).toEqual([[29, 40, 0]]);
    // Nothing started since the last segment's end: nothing to build.
    const quiet: DayToPlan = { day: DAY, calls: { firstUs: T0, lastUs: T0 + 20 * MIN }, segments: [seg(0, 29, 1000)] };
    expect(planDay(quiet, at(41), policy)).toEqual({ builds: [], nextMs: Infinity });
  });

  it('a past day is built to its end; stale segments again, patched ones once old or touched enough', () => {
    const d: DayToPlan = {
      day: DAY,
      calls: { firstUs: T0, lastUs: T0 + 1439 * MIN },
      segments: [
        seg(0, 10, 500, { kind: 'stale' }),
        seg(10, 20, 500, { kind: 'patched', touched: 3 }, 20),
        seg(20, 30, 500, { kind: 'patched', touched: 3 }, 2000),
        seg(30, 40, 500, { kind: 'patched', touched: 150 }, 2000),
      ],
    };
    const p = planDay(d, at(2010), policy);
    // The stale one, the patched one built 1990 minutes ago, the one touched past the bound, then the rest of the day.
    expect(ranges(p)).toEqual([
      [0, 10, 1],
      [10, 20, 1],
      [30, 40, 1],
      [40, 1440, 0],
    ]);
    // The patched segment built 10 minutes ago is due when it is 10 minutes old.
    expect(Math.floor(p.nextMs)).toBe(at(2000) + 600_000);
  });

  it('the newest segments, once they hold alike counts, are built as one; a day keeps a few per size', () => {
    const d: DayToPlan = {
      day: DAY,
      calls: { firstUs: T0, lastUs: T0 + 50 * MIN },
      segments: [seg(0, 10, 900), seg(10, 20, 50), seg(20, 30, 60), seg(30, 40, 190)],
    };
    expect(ranges(planDay(d, at(45), policy))).toEqual([
      [40, 44, 0],
      [10, 40, 3],
    ]);
    // Counts further apart than the ratio: kept as they are.
    const apart: DayToPlan = { ...d, segments: [seg(0, 10, 900), seg(10, 20, 40), seg(20, 30, 60), seg(30, 40, 190)] };
    expect(ranges(planDay(apart, at(45), policy))).toEqual([[40, 44, 0]]);
    // A whole day of passes, a segment each: every call is built a few times, not once a pass.
    let segments: ReturnType<typeof seg>[] = [];
    let built = 0;
    for (let m = 1; m <= 1440; m++) {
      const day: DayToPlan = { day: DAY, calls: { firstUs: T0, lastUs: T0 + m * MIN - 1 }, segments };
      for (const b of planDay(day, at(m) + policy.settleMs, policy).builds) {
        const calls = (b.range[1] - b.range[0]) / MIN;
        built += calls;
        segments = [...segments.filter((s) => !b.replaces.includes(s)), seg((b.range[0] - T0) / MIN, (b.range[1] - T0) / MIN, calls)];
        segments.sort((x, y) => x.from_us - y.from_us);
      }
    }
    expect(built / 1440).toBeLessThan(10);
    expect(segments.length).toBeLessThan(16);
  });

  it('a day whose calls are all gone has its segments built again, empty', () => {
    const d: DayToPlan = { day: DAY, segments: [seg(0, 10, 5), seg(10, 20, 0)] };
    expect(ranges(planDay(d, at(100), policy))).toEqual([[0, 10, 1]]);
  });

  it('gaps: before, between and after the covered ranges', () => {
    expect(gapsOf([])).toEqual([[null, null]]);
    expect(gapsOf([seg(0, 10, 1), seg(10, 20, 1), seg(30, 40, 1)])).toEqual([
      [null, T0],
      [T0 + 20 * MIN, T0 + 30 * MIN],
      [T0 + 40 * MIN, null],
    ]);
  });

  it('a build stays under the calls cap: alike segments whose sum passes it are not merged', () => {
    const d: DayToPlan = {
      day: DAY,
      calls: { firstUs: T0, lastUs: T0 + 30 * MIN },
      segments: [seg(0, 10, 400), seg(10, 20, 400), seg(20, 30, 400)],
    };
    expect(ranges(planDay(d, at(31), policy))).toEqual([[0, 30, 3]]);
    expect(ranges(planDay(d, at(31), { ...policy, maxSegmentCalls: 1000 }))).toEqual([]);
  });

  it('a new range cut at minute boundaries into pieces of at most the cap (a busier minute alone), every call in one piece', () => {
    const minutes = [0, 1, 2, 3, 5, 6].map((m, i) => ({ atUs: T0 + m * MIN, calls: [300, 300, 500, 1500, 100, 100][i]! }));
    const pieces = splitByCalls([T0, T0 + 10 * MIN], minutes, 1000);
    expect(pieces.map((p) => [(p.range[0] - T0) / MIN, (p.range[1] - T0) / MIN, p.calls])).toEqual([
      [0, 2, 600],
      [2, 3, 500],
      [3, 5, 1500],
      [5, 10, 200],
    ]);
    expect(splitByCalls([T0, T0 + MIN], [], 1000)).toEqual([{ range: [T0, T0 + MIN], calls: 0 }]);
  });
});
