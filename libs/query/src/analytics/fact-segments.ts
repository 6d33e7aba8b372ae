import type { FactSegment } from './facts';

/**
 * Which segments of a project's day a facts pass builds (facts-keeper.ts): the day's calls are
 * built a start range at a time, so a day still being written costs a pass its newest calls,
 * not the whole day again. Pure: the pass reads what it needs and writes what this says.
 */

/** What a look at a segment found: read from facts as built, read less a few touched calls, or not readable. */
export type SegmentState = { kind: 'current' } | { kind: 'patched'; touched: number } | { kind: 'stale' };

export interface DayToPlan {
  day: string;
  /** The day's calls' first and latest start (µs); absent: the day has no calls left. */
  calls?: { firstUs: number; lastUs: number };
  /** Its segments, by start, with what the look found. */
  segments: readonly (FactSegment & { state: SegmentState })[];
}

export interface SegmentPolicy {
  /** A call is built into facts once it started this long ago (ms): its end and its children's have mostly come. */
  settleMs: number;
  /** The newest `mergeWays` segments of a day are built as one once the largest holds at most `mergeRatio` times the smallest's calls. */
  mergeWays: number;
  mergeRatio: number;
  /**
   * A patched segment is built again once its build is `settleMs` old if it holds at most
   * `smallSegmentCalls` calls (cheap to build again), else once it is `patchRebuildMs` old, or at
   * once when its touched calls pass `patchRebuildCalls`.
   */
  patchRebuildMs: number;
  patchRebuildCalls: number;
  smallSegmentCalls: number;
  /** A build reads at most about this many calls (a merge stays under it; splitByCalls cuts new ranges): a statement's memory is capped. */
  maxSegmentCalls: number;
}

/** A build a pass runs: the calls started in `range`, replacing the segments `replaces`. */
export interface SegmentBuild {
  day: string;
  range: readonly [number, number];
  replaces: readonly FactSegment[];
}

export const DAY_US = 86_400_000_000;

/** The start of a UTC day (YYYY-MM-DD) in µs. */
export const dayStartUs = (day: string) => Date.parse(`${day}T00:00:00Z`) * 1000;

/**
 * The builds a day needs at `nowMs`, and when it next needs one if nothing is written meanwhile
 * (Infinity: not until something is): stale segments built again; patched ones once old enough or
 * touched enough; the ranges with calls that no segment covers, up to the calls that have
 * settled; and the newest segments as one once they hold alike counts.
 */
export function planDay(d: DayToPlan, nowMs: number, policy: SegmentPolicy): { builds: SegmentBuild[]; nextMs: number } {
  const start = dayStartUs(d.day);
  const end = start + DAY_US;
  const cut = Math.min(end, (nowMs - policy.settleMs) * 1000);
  const builds: SegmentBuild[] = [];
  let nextMs = Infinity;
  const rebuilt = new Set<FactSegment>();
  const rebuild = (s: FactSegment) => {
    builds.push({ day: d.day, range: [s.from_us, s.to_us], replaces: [s] });
    rebuilt.add(s);
  };
  for (const s of d.segments) {
    // A day whose calls are all gone (deleted, expired) has its segments built again, empty.
    if (s.state.kind === 'stale' || (!d.calls && s.calls > 0)) rebuild(s);
    else if (s.state.kind === 'patched') {
      const due = s.build / 1000 + (s.calls <= policy.smallSegmentCalls ? policy.settleMs : policy.patchRebuildMs);
      if (due <= nowMs || s.state.touched >= policy.patchRebuildCalls) rebuild(s);
      else nextMs = Math.min(nextMs, due);
    }
  }
  // The ranges no segment covers, within the day up to the cut, where the day has calls.
  if (d.calls) {
    const { firstUs, lastUs } = d.calls;
    let at = start;
    for (const s of [...d.segments, { from_us: end, to_us: end }]) {
      const from = Math.max(at, firstUs);
      const to = Math.min(s.from_us, cut);
      if (from <= lastUs && from < to) builds.push({ day: d.day, range: [at, to], replaces: [] });
      // Calls past the cut in this range: the first of them is built once it has settled.
      const unsettled = Math.max(at, cut, firstUs);
      if (unsettled <= lastUs && unsettled < s.from_us) nextMs = Math.min(nextMs, unsettled / 1000 + policy.settleMs);
      at = Math.max(at, s.to_us);
    }
  }
  // Runs of `mergeWays` neighbours holding alike counts, the newest first, built as one (a
  // size-tiered merge: each call is built again a few times a day, the day keeps a few segments per size).
  const alike = (run: readonly FactSegment[]) => {
    const counts = run.map((s) => Math.max(1, s.calls));
    const total = run.reduce((n, s) => n + s.calls, 0);
    return (
      run.every((s) => !rebuilt.has(s)) && Math.max(...counts) <= policy.mergeRatio * Math.min(...counts) && total <= policy.maxSegmentCalls
    );
  };
  for (let end = d.segments.length; end >= policy.mergeWays; end--) {
    const run = d.segments.slice(end - policy.mergeWays, end);
    if (!alike(run)) continue;
    builds.push({ day: d.day, range: [run[0]!.from_us, run[run.length - 1]!.to_us], replaces: run });
    break;
  }
  return { builds, nextMs };
}

/** Calls started in a minute of a range (startCountsQuery's rows). */
export interface MinuteCount {
  atUs: number;
  calls: number;
}

/**
 * A new range cut at minute boundaries into pieces of at most `maxCalls` calls each (a minute
 * holding more is a piece of its own), each with its count: a first build of a busy day is
 * several statements of bounded size, not one.
 */
export function splitByCalls(
  range: readonly [number, number],
  minutes: readonly MinuteCount[],
  maxCalls: number,
): { range: [number, number]; calls: number }[] {
  const pieces: { range: [number, number]; calls: number }[] = [];
  let from = range[0];
  let calls = 0;
  for (const m of minutes) {
    if (calls > 0 && calls + m.calls > maxCalls && m.atUs > from) {
      pieces.push({ range: [from, m.atUs], calls });
      from = m.atUs;
      calls = 0;
    }
    calls += m.calls;
  }
  pieces.push({ range: [from, range[1]], calls });
  return pieces;
}
