import type { Logger } from 'pino';
import { metrics } from '@weft/core';
import {
  blocksOf,
  CALL_MARKS,
  FACT_DAYS_SQL,
  FACT_SOURCES,
  PROJECT_DAYS_SQL,
  SOURCE_COUNTERS_SQL,
  buildFactsQuery,
  builtDaysQuery,
  factDaysQuery,
  mutationsOf,
  otherDaysQuery,
  supersededFactsCountQuery,
  recordBuiltDays,
  removeSupersededFacts,
  touchedDaysQuery,
  touchedIdsQuery,
  childIdsQuery,
  watermarkOf,
  type FactDay,
  type FactsCoverage,
  type SourceCounter,
  type Watermark,
} from '@weft/query';
import { PeriodicWorker } from '@weft/runtime';
import type { Store } from '@weft/store';

export interface CallFactsOptions {
  /** How often a pass builds the days that need it (ms). */
  intervalMs: number;
  /** A day is built once its last call started this long ago, or the day is over (ms). */
  settleMs: number;
  /** A superseded build's rows are removed this long after it was replaced (ms): reads of it are over by then. */
  graceMs: number;
}

const MARKS = FACT_SOURCES.map((s) => s.mark);

/**
 * Keeps the analytics facts (libs/query call-facts.ts): a pass every `intervalMs` builds the
 * days of every project that have none or whose facts went stale, once they have settled, and
 * removes superseded builds. `coverage` tells a query which days it may read from facts now.
 */
export class CallFacts {
  private readonly worker: PeriodicWorker;
  private lastBuild = 0;
  /**
   * The engine's counters a pass saw, and until when nothing is due at those counters (an
   * unsettled day settling, a superseded build's grace ending): a pass before then at the same
   * counters is skipped.
   */
  private idle: { key: string; until: number } | undefined;
  /** Each project's last coverage, and the engine's counters it was computed at. */
  private readonly coverages = new Map<string, { key: string; coverage: FactsCoverage | undefined }>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: CallFactsOptions,
  ) {
    this.worker = new PeriodicWorker(() => this.buildDue(), {
      name: 'analytics-facts',
      intervalMs: opts.intervalMs,
      // The engine rests `intervalMs` between builds; the first comes soon after the start.
      pace: 'rest',
      firstPassMs: Math.min(opts.intervalMs, 1000),
      log,
      failure: { level: 'warn', message: 'analytics facts: a build pass failed; the next one tries again' },
    });
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** One pass now (or the one running). */
  pass(): Promise<void> {
    return this.worker.pass();
  }

  /**
   * The days of a project a query may read from facts — each day's facts current: no mutation on
   * the sources since its build, no row written since that touches it — and the other days with calls.
   */
  async coverage(projectId: string, signal?: AbortSignal): Promise<FactsCoverage | undefined> {
    const { counters, key } = await this.counters(signal);
    // Nothing written, deleted or built since the last answer for this project: the same answer.
    const cached = this.coverages.get(projectId);
    if (cached?.key === key) return cached.coverage;
    const coverage = await this.computeCoverage(projectId, counters, signal);
    this.coverages.set(projectId, { key, coverage });
    return coverage;
  }

  /** The engine's counters of the sources and of call_facts_days, and a key that changes when they do. */
  private async counters(signal?: AbortSignal): Promise<{ counters: SourceCounter[]; key: string }> {
    const counters = await this.store.rows<SourceCounter>(SOURCE_COUNTERS_SQL, {}, { name: 'facts.counters', signal });
    return { counters, key: JSON.stringify([...counters].sort((x, y) => x.table.localeCompare(y.table))) };
  }

  private async computeCoverage(projectId: string, counters: SourceCounter[], signal?: AbortSignal): Promise<FactsCoverage | undefined> {
    const q = factDaysQuery(projectId);
    const days = (await this.store.rows<FactDay>(q.sql, q.params, { name: 'facts.days', signal })).map(numeric);
    if (days.length === 0) return undefined;
    const mutated = mutationsOf(counters);
    const blocks = blocksOf(counters);
    // A mutation of any source, or a price added since, makes a day stale whatever it holds.
    let current = days.filter((d) => MARKS.every((m) => mutated[m] <= d[m]) && blocks.prices_block <= d.prices_block);
    const since = {} as Watermark;
    for (const m of CALL_MARKS) since[m] = Math.min(...current.map((d) => d[m]));
    let patched: FactDay[] = [];
    let ids: string[] = [];
    let children: string[] = [];
    if (current.length && CALL_MARKS.some((m) => blocks[m] > since[m])) {
      const t = touchedDaysQuery(projectId, since);
      const touched = await this.store.rows<Watermark & { day: string; calls: string }>(t.sql, t.params, { name: 'facts.touched', signal });
      const byDay = new Map(touched.map((x) => [x.day, x]));
      const stale = (d: FactDay) => {
        const x = byDay.get(d.day);
        return x !== undefined && CALL_MARKS.some((m) => Number(x[m]) > d[m]);
      };
      // A day with a few of its calls touched keeps its facts for the rest (PATCH_SHARE); one
      // mostly rewritten is read from the call tables whole.
      patched = current.filter((d) => stale(d) && Number(byDay.get(d.day)!.calls) <= d.calls * PATCH_SHARE);
      current = current.filter((d) => !stale(d));
      if (patched.length) {
        // The touched calls' ids go to each query as a list, so a few thousand at most.
        const q = touchedIdsQuery(projectId, since, PATCH_MAX_CALLS + 1);
        ids = (await this.store.rows<{ id: string }>(q.sql, q.params, { name: 'facts.touched_ids', signal })).map((r) => r.id);
        if (ids.length <= PATCH_MAX_CALLS) {
          const c = childIdsQuery(projectId, ids, PATCH_MAX_CALLS + 1);
          children = (await this.store.rows<{ id: string }>(c.sql, c.params, { name: 'facts.touched_children', signal })).map((r) => r.id);
        }
        if (ids.length > PATCH_MAX_CALLS || children.length > PATCH_MAX_CALLS) patched = [];
      }
    }
    if (current.length === 0 && patched.length === 0) return undefined;
    const o = otherDaysQuery(
      projectId,
      [...current, ...patched].map((d) => d.day),
    );
    const otherDays = (await this.store.rows<{ day: string }>(o.sql, o.params, { name: 'facts.other_days', signal })).map((r) => r.day);
    return { current, otherDays, ...(patched.length ? { patched: { days: patched, ids, children } } : {}) };
  }

  /** One pass: every project's days that need a build and have settled, built; superseded builds removed. */
  private async buildDue(): Promise<void> {
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
    const withFacts = await this.store.rows<{ project_id: string; day: string }>(FACT_DAYS_SQL, {}, { name: 'facts.all_days' });
    const projects = new Map<string, Map<string, { firstUs: number; lastUs: number }>>();
    const dayMap = (p: string) => projects.get(p) ?? projects.set(p, new Map()).get(p)!;
    for (const r of withCalls) dayMap(r.project_id).set(r.day, { firstUs: Number(r.first_us), lastUs: Number(r.last_us) });
    // A day with facts and no calls left (deleted, expired) is built again, empty.
    for (const r of withFacts) if (!dayMap(r.project_id).has(r.day)) dayMap(r.project_id).set(r.day, { firstUs: 0, lastUs: 0 });
    const today = new Date(now).toISOString().slice(0, 10);
    let built = 0;
    for (const [projectId, days] of projects) {
      if (this.worker.stopping) return;
      const cov = await this.coverage(projectId);
      const current = new Set(cov?.current.map((d) => d.day));
      const builtAt = new Map(cov?.patched?.days.map((d) => [d.day, d.build / 1000]));
      built += current.size;
      const unbuilt = [...days].filter(([day]) => !current.has(day));
      const due: string[] = [];
      for (const [day, { firstUs, lastUs }] of unbuilt) {
        // Today's calls settle `settleMs` after the last one started, or when the day ends; a day
        // still being written is built all the same `settleMs` after its first call or its last
        // build, and read patched in between.
        const settled = day < today ? now : Math.min(lastUs / 1000 + this.opts.settleMs, Date.parse(`${day}T00:00:00Z`) + 86_400_000);
        const settles = Math.min(settled, (builtAt.get(day) ?? firstUs / 1000) + this.opts.settleMs);
        if (settles <= now) due.push(day);
        else until = Math.min(until, settles);
      }
      if (due.length === 0) continue;
      await this.build(projectId, due);
      built += due.length;
    }
    metrics.analyticsFactsDays.set(built);
    until = Math.min(until, await this.removeSuperseded(now));
    this.idle = { key, until };
  }

  /** Builds `days` of a project as one new build, then makes it current for those days. */
  private async build(projectId: string, days: string[]): Promise<void> {
    const started = performance.now();
    // Read before the build reads anything: whatever is written later counts as new.
    const mark = watermarkOf(await this.store.rows<SourceCounter>(SOURCE_COUNTERS_SQL, {}, { name: 'facts.counters' }));
    const build = (this.lastBuild = Math.max(Date.now() * 1000, this.lastBuild + 1));
    const q = buildFactsQuery(projectId, days, build);
    await this.store.command(q.sql, q.params, { name: 'facts.build' });
    const c = builtDaysQuery(projectId, build);
    const counts = new Map(
      (await this.store.rows<{ day: string; calls: string }>(c.sql, c.params, { name: 'facts.built' })).map((r) => [
        r.day,
        Number(r.calls),
      ]),
    );
    await recordBuiltDays(this.store, projectId, days, build, counts, mark);
    metrics.analyticsFactsBuildSeconds.observe((performance.now() - started) / 1000);
    this.log.info(
      { project_id: projectId, days: days.length, calls: [...counts.values()].reduce((a, b) => a + b, 0) },
      'analytics facts built',
    );
  }

  /**
   * Removes the superseded builds past their grace; answers when the ones left (replaced less
   * than `graceMs` ago) will be past theirs (Infinity: none left).
   */
  private async removeSuperseded(now: number): Promise<number> {
    const q = supersededFactsCountQuery(now * 1000);
    const left = await this.store.row<{ n: string }>(q.sql, q.params, { name: 'facts.superseded' });
    if (Number(left?.n ?? 0) === 0) return Infinity;
    const graceUs = (now - this.opts.graceMs) * 1000;
    await removeSupersededFacts(this.store, graceUs);
    return now + this.opts.graceMs;
  }
}

/**
 * The largest share of a day's calls that rows written since its build may touch for its facts
 * to be read still, with the touched calls from the call tables.
 */
const PATCH_SHARE = 0.25;
/** The most calls (and children of them) the touched rows may touch for days to be patched (their ids are lists in each query). */
const PATCH_MAX_CALLS = 5000;

/** The JSON row's numbers (UInt64 come back as strings). */
function numeric(d: FactDay): FactDay {
  return {
    day: d.day,
    build: Number(d.build),
    calls: Number(d.calls),
    starts_block: Number(d.starts_block),
    ends_block: Number(d.ends_block),
    deleted_block: Number(d.deleted_block),
    prices_block: Number(d.prices_block),
  };
}
