import { metrics, type Logger } from '@weft/core';
import type { Store } from '@weft/store';
import { planDay, splitByCalls, type SegmentBuild, type SegmentState } from './fact-segments';
import {
  CALL_MARKS,
  FACT_SEGMENT_DAYS_SQL,
  FACT_SOURCES,
  PROJECT_DAYS_SQL,
  SOURCE_COUNTERS_SQL,
  blocksOf,
  buildFactsQuery,
  builtCallsQuery,
  callsInRangesQuery,
  childIdsQuery,
  factSegmentsQuery,
  gapsOf,
  mutationsOf,
  newRowsCountQuery,
  recordSegments,
  removeSupersededFacts,
  startCountsQuery,
  supersededFactsCountQuery,
  touchedIdsQuery,
  touchedSegmentsQuery,
  watermarkOf,
  type FactSegment,
  type FactsCoverage,
  type RetiredBuild,
  type SourceCounter,
  type Watermark,
} from './facts';

export interface FactsKeeperOptions {
  /** A call is built into facts once it started this long ago (ms); later ones are read from the call tables. */
  settleMs: number;
  /** A superseded build's rows are removed this long after it was replaced (ms): reads of it are over by then. */
  graceMs: number;
}

const MARKS = FACT_SOURCES.map((s) => s.mark);

/** A project's segments as a look found them, the coverage a query reads, and the counters it was computed at. */
interface Look {
  key: string;
  counters: SourceCounter[];
  coverage: FactsCoverage | undefined;
  segments: (FactSegment & { state: SegmentState })[];
}

/**
 * Keeps the analytics facts (facts.ts): a pass builds, per project and day, the segments that
 * need it — the newest settled calls, a touched or stale segment again, two small neighbours as
 * one (fact-segments.ts) — and removes superseded builds. `coverage` tells a query which segments
 * it may read from facts now. Its passes are run by the query role's worker (services/query
 * call-facts.ts), one at a time.
 */
export class FactsKeeper {
  /** The last build or segment version handed out (µs): each is unique and later than the one before. */
  private lastStamp = 0;
  /** Builds replaced by this process, removed once past the grace. */
  private retired: RetiredBuild[] = [];
  /**
   * The engine's counters a pass saw, and until when nothing is due at those counters (a call
   * settling, a patched segment coming due, a superseded build's grace ending): a pass before
   * then at the same counters is skipped.
   */
  private idle: { key: string; until: number } | undefined;
  /** Each project's last look, and the engine's counters it was computed at. */
  private readonly looks = new Map<string, Look>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: FactsKeeperOptions,
  ) {}

  /**
   * The segments of a project a query may read from facts — each one's facts current: no
   * mutation on the sources since its build, no row written since that touches it — and the
   * start ranges it reads from the call tables.
   */
  async coverage(projectId: string, signal?: AbortSignal): Promise<FactsCoverage | undefined> {
    return (await this.look(projectId, signal)).coverage;
  }

  /** The engine's counters of the sources and of call_facts_segments, and a key that changes when they do. */
  private async counters(signal?: AbortSignal): Promise<{ counters: SourceCounter[]; key: string }> {
    const counters = await this.store.rows<SourceCounter>(SOURCE_COUNTERS_SQL, {}, { name: 'facts.counters', signal });
    return { counters, key: JSON.stringify([...counters].sort((x, y) => x.table.localeCompare(y.table))) };
  }

  private async look(projectId: string, signal?: AbortSignal): Promise<Look> {
    const { counters, key } = await this.counters(signal);
    // Nothing written, deleted or built since the last look at this project: the same answer.
    const cached = this.looks.get(projectId);
    if (cached?.key === key) return cached;
    const look = { key, counters, ...(await this.computeLook(projectId, counters, signal)) };
    this.looks.set(projectId, look);
    return look;
  }

  private async computeLook(
    projectId: string,
    counters: SourceCounter[],
    signal?: AbortSignal,
  ): Promise<Pick<Look, 'coverage' | 'segments'>> {
    const q = factSegmentsQuery(projectId);
    const all = (await this.store.rows<FactSegment>(q.sql, q.params, { name: 'facts.segments', signal })).map(numeric);
    if (all.length === 0) return { coverage: undefined, segments: [] };
    const mutated = mutationsOf(counters);
    const blocks = blocksOf(counters);
    const state = new Map<FactSegment, SegmentState>();
    // A mutation of any source, or a price added since, makes a segment stale whatever it holds.
    const live = all.filter((d) => MARKS.every((m) => mutated[m] <= d[m]) && blocks.prices_block <= d.prices_block);
    const isLive = new Set(live);
    for (const d of all) state.set(d, { kind: isLive.has(d) ? 'current' : 'stale' });
    const since = {} as Watermark;
    for (const m of CALL_MARKS) since[m] = Math.min(...live.map((d) => d[m]));
    let ids: string[] = [];
    let children: string[] = [];
    const written = live.length > 0 && CALL_MARKS.some((m) => blocks[m] > since[m]);
    // Too many rows written since to look for the segments they touch (a bulk load, a long pause):
    // every segment is built again (in builds of bounded size) rather than a look past the memory cap.
    if (written && (await this.newRows(projectId, since, signal)) > LOOK_MAX_NEW_ROWS)
      for (const d of live) state.set(d, { kind: 'stale' });
    else if (written) {
      const t = touchedSegmentsQuery(projectId, since, live);
      const touched = await this.store.rows<Watermark & { segment: number; calls: string }>(t.sql, t.params, {
        name: 'facts.touched',
        signal,
      });
      for (const x of touched) {
        const d = live[Number(x.segment)]!;
        if (!CALL_MARKS.some((m) => Number(x[m]) > d[m])) continue;
        // A segment with a few of its calls touched keeps its facts for the rest (PATCH_SHARE); one
        // mostly rewritten is read from the call tables whole.
        const calls = Number(x.calls);
        state.set(d, calls <= d.calls * PATCH_SHARE ? { kind: 'patched', touched: calls } : { kind: 'stale' });
      }
      if (live.some((d) => state.get(d)!.kind === 'patched')) {
        // The touched calls' ids go to each query as a list, so a few thousand at most.
        const q = touchedIdsQuery(projectId, since, PATCH_MAX_CALLS + 1);
        ids = (await this.store.rows<{ id: string }>(q.sql, q.params, { name: 'facts.touched_ids', signal })).map((r) => r.id);
        if (ids.length <= PATCH_MAX_CALLS) {
          const c = childIdsQuery(projectId, ids, PATCH_MAX_CALLS + 1);
          children = (await this.store.rows<{ id: string }>(c.sql, c.params, { name: 'facts.touched_children', signal })).map((r) => r.id);
        }
      }
    }
    const segments = all.map((d) => Object.assign(d, { state: state.get(d)! }));
    const current = segments.filter((d) => d.state.kind === 'current');
    // Too many touched calls to list: the patched segments are read from the call tables this time.
    const listable = ids.length <= PATCH_MAX_CALLS && children.length <= PATCH_MAX_CALLS;
    const patched = listable ? segments.filter((d) => d.state.kind === 'patched') : [];
    if (current.length === 0 && patched.length === 0) return { coverage: undefined, segments };
    const gaps = gapsOf([...current, ...patched].sort((x, y) => x.from_us - y.from_us));
    const c = callsInRangesQuery(projectId, gaps);
    const inGaps = Number((await this.store.row<{ n: string }>(c.sql, c.params, { name: 'facts.other_calls', signal }))?.n ?? 0) > 0;
    const coverage = { current, other: inGaps ? gaps : [], ...(patched.length ? { patched: { segments: patched, ids, children } } : {}) };
    return { coverage, segments };
  }

  /** How many rows of the call tables were written after `since` (a cheap count: new parts' block numbers). */
  private async newRows(projectId: string, since: Watermark, signal?: AbortSignal): Promise<number> {
    const q = newRowsCountQuery(projectId, since);
    return Number((await this.store.row<{ n: string }>(q.sql, q.params, { name: 'facts.new_rows', signal }))?.n ?? 0);
  }

  /** A build number or segment version: unique, later than any before (µs). */
  private stamp(): number {
    return (this.lastStamp = Math.max(Date.now() * 1000, this.lastStamp + 1));
  }

  /** One pass: every project's days that need builds, built; superseded builds removed (`stopping`: leave between projects). */
  async pass(stopping: () => boolean = () => false): Promise<void> {
    const now = Date.now();
    // Nothing written, deleted or built since the last pass, and nothing it left has come due: nothing to do (no scan of the calls).
    const { key } = await this.counters();
    if (this.idle?.key === key && now < this.idle.until) return;
    let until = Infinity;
    const withCalls = await this.store.rows<{ project_id: string; day: string; first_us: string; last_us: string }>(
      PROJECT_DAYS_SQL,
      {},
      { name: 'facts.project_days' },
    );
    const withFacts = await this.store.rows<{ project_id: string; day: string }>(FACT_SEGMENT_DAYS_SQL, {}, { name: 'facts.all_days' });
    const projects = new Map<string, Map<string, { firstUs: number; lastUs: number } | undefined>>();
    const dayMap = (p: string) => projects.get(p) ?? projects.set(p, new Map()).get(p)!;
    for (const r of withCalls) dayMap(r.project_id).set(r.day, { firstUs: Number(r.first_us), lastUs: Number(r.last_us) });
    for (const r of withFacts) if (!dayMap(r.project_id).has(r.day)) dayMap(r.project_id).set(r.day, undefined);
    const readable = new Set<string>();
    for (const [projectId, days] of projects) {
      if (stopping()) return;
      const look = await this.look(projectId);
      await this.confirm(projectId, look);
      const builds: SegmentBuild[] = [];
      for (const [day, calls] of days) {
        const segments = look.segments.filter((s) => s.day === day);
        const plan = planDay({ day, calls, segments }, now, POLICY(this.opts.settleMs));
        builds.push(...plan.builds);
        until = Math.min(until, plan.nextMs);
        const rebuilt = new Set(plan.builds.flatMap((b) => b.replaces));
        if (plan.builds.length || segments.some((s) => s.state.kind !== 'stale' && !rebuilt.has(s))) readable.add(`${projectId} ${day}`);
      }
      for (const group of buildGroups(await this.splitLargeRanges(projectId, builds), MAX_BUILD_CALLS)) await this.build(projectId, group);
    }
    metrics.analyticsFactsDays.set(readable.size);
    until = Math.min(until, await this.removeSuperseded(now));
    this.idle = { key, until };
  }

  /**
   * The builds with each range of a new or rebuilt segment cut into pieces of at most
   * MAX_BUILD_CALLS calls (counted per minute), each with its count: the first piece of a rebuild
   * takes the segment's place, the others are new segments. Merges are kept under the cap by the plan.
   */
  private async splitLargeRanges(projectId: string, builds: SegmentBuild[]): Promise<(SegmentBuild & { calls?: number })[]> {
    const out: (SegmentBuild & { calls?: number })[] = [];
    for (const b of builds) {
      if (b.replaces.length > 1) {
        out.push(b);
        continue;
      }
      const q = startCountsQuery(projectId, b.range);
      const minutes = (await this.store.rows<{ at_us: string; calls: string }>(q.sql, q.params, { name: 'facts.start_counts' })).map(
        (r) => ({
          atUs: Number(r.at_us),
          calls: Number(r.calls),
        }),
      );
      splitByCalls(b.range, minutes, MAX_BUILD_CALLS).forEach((piece, i) =>
        out.push({ ...b, ...piece, replaces: i === 0 ? b.replaces : [] }),
      );
    }
    return out;
  }

  /**
   * Moves the watermark of the segments a look found current up to the counters it was computed
   * at: nothing written up to them touches those segments, so the next look scans only what is
   * written after (not everything since the oldest build).
   */
  private async confirm(projectId: string, look: Look): Promise<void> {
    const mark = watermarkOf(look.counters);
    const behind = look.segments.filter((s) => s.state.kind === 'current' && MARKS.some((m) => s[m] < mark[m]));
    if (behind.length === 0) return;
    await recordSegments(
      this.store,
      behind.map((s) => ({ ...segmentRow(projectId, s), ...mark })),
      this.stamp(),
    );
  }

  /**
   * Builds segments' ranges (of distinct days) as one new build, then makes each current in place
   * of the segments it replaces.
   */
  private async build(projectId: string, group: readonly SegmentBuild[]): Promise<void> {
    const started = performance.now();
    // Read before the build reads anything: whatever is written later counts as new.
    const mark = watermarkOf(await this.store.rows<SourceCounter>(SOURCE_COUNTERS_SQL, {}, { name: 'facts.counters' }));
    const build = this.stamp();
    const q = buildFactsQuery(
      projectId,
      group.map((b) => b.range),
      build,
    );
    await this.store.command(q.sql, q.params, { name: 'facts.build' });
    const c = builtCallsQuery(projectId, build);
    const counts = new Map(
      (await this.store.rows<{ day: string; calls: string }>(c.sql, c.params, { name: 'facts.built' })).map((r) => [
        r.day,
        Number(r.calls),
      ]),
    );
    const rows = group.flatMap((b) => {
      const [from, to] = b.range;
      const segment = { project_id: projectId, day: b.day, from_us: from, to_us: to, build, calls: counts.get(b.day) ?? 0, ...mark };
      // A replaced segment starting elsewhere is removed in the same insert (a merge's second half).
      const removed = b.replaces
        .filter((r) => r.from_us !== from)
        .map((r) => ({ ...segmentRow(projectId, r), to_us: r.from_us, build: 0, calls: 0 }));
      return [segment, ...removed];
    });
    await recordSegments(this.store, rows, this.stamp());
    const at = Date.now();
    this.retired.push(...group.flatMap((b) => b.replaces.map((r) => ({ day: r.day, build: r.build, at }))));
    const calls = [...counts.values()].reduce((a, n) => a + n, 0);
    metrics.analyticsFactsBuildSeconds.observe((performance.now() - started) / 1000);
    metrics.analyticsFactsBuiltCalls.inc(calls);
    this.log.debug({ project_id: projectId, days: group.length, calls }, 'analytics facts built');
  }

  /**
   * Removes the superseded builds past their grace; answers when the ones left (replaced less
   * than `graceMs` ago) will be past theirs (Infinity: none left).
   */
  private async removeSuperseded(now: number): Promise<number> {
    const graceUs = (now - this.opts.graceMs) * 1000;
    const due = this.retired.filter((r) => r.at * 1000 < graceUs);
    const q = supersededFactsCountQuery(graceUs, due);
    const left = await this.store.row<{ n: string }>(q.sql, q.params, { name: 'facts.superseded' });
    if (Number(left?.n ?? 0) > 0) await removeSupersededFacts(this.store, graceUs, due);
    this.retired = this.retired.filter((r) => !due.includes(r));
    return this.retired.length ? Math.min(...this.retired.map((r) => r.at)) + this.opts.graceMs : Infinity;
  }
}

/**
 * The builds of a pass as groups run as one build each: the new ranges together, at most one per
 * day (a segment is its day's rows of a build) and `maxCalls` calls, so a first pass over a long
 * history is a few statements of bounded size, not one per day.
 */
function buildGroups(builds: readonly (SegmentBuild & { calls?: number })[], maxCalls: number): SegmentBuild[][] {
  const groups: (SegmentBuild & { calls?: number })[][] = [];
  const calls = (g: readonly { calls?: number }[]) => g.reduce((n, x) => n + (x.calls ?? 0), 0);
  for (const b of builds) {
    // A range built again (stale, patched, merged) is a build of its own: it is read soon and alone.
    const group =
      b.replaces.length === 0
        ? groups.find((g) => g[0]!.replaces.length === 0 && !g.some((x) => x.day === b.day) && calls(g) + (b.calls ?? 0) <= maxCalls)
        : undefined;
    if (group) group.push(b);
    else groups.push([b]);
  }
  return groups;
}

/** A segment's row of a project (its state in the look left out). */
function segmentRow(projectId: string, s: FactSegment) {
  const { day, from_us, to_us, build, calls, starts_block, ends_block, deleted_block, prices_block } = s;
  return { project_id: projectId, day, from_us, to_us, build, calls, starts_block, ends_block, deleted_block, prices_block };
}

/** How a day is cut into segments (fact-segments.ts). */
const POLICY = (settleMs: number) => ({
  settleMs,
  mergeWays: 4,
  mergeRatio: 4,
  patchRebuildMs: PATCH_REBUILD_MS,
  patchRebuildCalls: PATCH_MAX_CALLS / 2,
  smallSegmentCalls: 100_000,
  maxSegmentCalls: MAX_BUILD_CALLS,
});

/** A patched segment of more than 100,000 calls is read patched for this long at most before it is built again (ms). */
const PATCH_REBUILD_MS = 600_000;

/**
 * The largest share of a segment's calls that rows written since its build may touch for its facts
 * to be read still, with the touched calls from the call tables.
 */
const PATCH_SHARE = 0.25;
/** The most calls (and children of them) the touched rows may touch for segments to be patched (their ids are lists in each query). */
const PATCH_MAX_CALLS = 5000;
/** New rows a look joins at most to find the segments they touch (the join holds their ids; 10M passed a 4 GiB cap). */
const LOOK_MAX_NEW_ROWS = 1_000_000;
/**
 * Calls one build reads at most (new ranges cut to it, merges kept under it): a build of a whole
 * busy day (8.6M calls) passed the background lane's 4 GiB statement cap; 1.4M took 4 s within it.
 */
const MAX_BUILD_CALLS = 1_000_000;

/** The JSON row's numbers (UInt64 come back as strings). */
function numeric(d: FactSegment): FactSegment {
  return {
    day: d.day,
    from_us: Number(d.from_us),
    to_us: Number(d.to_us),
    build: Number(d.build),
    calls: Number(d.calls),
    starts_block: Number(d.starts_block),
    ends_block: Number(d.ends_block),
    deleted_block: Number(d.deleted_block),
    prices_block: Number(d.prices_block),
  };
}
