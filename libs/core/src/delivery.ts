import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from './metrics';

/**
 * Visible delivery: what became of the calls sent to this process, per project and per entrance
 * — accepted (acknowledged to the client), stored (queryable), refused (by reason), dead-lettered,
 * sampled out, replayed — and the current ack→queryable lag. One ledger per process, as the
 * metrics registry: the all-in-one counts every outcome; in a distributed setup a gateway or
 * inference process counts what it accepted and refused, a writer what it stored (docs/operations.md).
 *
 * Units: accepted, stored, dead-lettered, sampled-out and replayed count call *parts*, a call's
 * start and its end (a call is two, whether they came together — an OTLP span, a recorded
 * completion, /calls/complete — or apart); refused counts requests (one refused before its body
 * was read has no known calls); spans_rejected counts OTLP spans refused inside an accepted request.
 */

/** Where calls come in. `unknown`: parts stored without one (written by a version before entrances were recorded). */
export const ENTRANCES = ['calls', 'otlp_http', 'otlp_grpc', 'inference'] as const;
export type Entrance = (typeof ENTRANCES)[number];
export type StoredEntrance = Entrance | 'unknown';

/** The counts of one project at one entrance. */
export interface EntranceCounts {
  accepted: number;
  stored: number;
  dead_lettered: number;
  sampled_out: number;
  /** Parts a dry-run sampling rate would have dropped (they were kept). */
  would_sample_out: number;
  replayed: number;
  /** Requests refused whole, by reason. */
  refused: Record<string, number>;
  /** OTLP spans refused inside an accepted request (partial_success), by reason. */
  spans_rejected: Record<string, number>;
}

/** What the ledger knows of one project's lag. */
export interface DeliveryLag {
  /**
   * The current ack→queryable lag (s): the age of the oldest part acknowledged and not yet stored
   * (0 when none) where this process both accepts and stores; a writer alone reports the lag of
   * the last parts it stored; null where nothing is stored (a gateway alone).
   */
  seconds: number | null;
  /** Parts acknowledged and not yet stored or dead-lettered (null unless this process does both). */
  pending_parts: number | null;
  /** Ack→stored time of the project's last stored parts (the slowest of that batch), s; null before any. */
  last_stored_seconds: number | null;
  last_stored_at: string | null;
}

const emptyCounts = (): EntranceCounts => ({
  accepted: 0,
  stored: 0,
  dead_lettered: 0,
  sampled_out: 0,
  would_sample_out: 0,
  replayed: 0,
  refused: {},
  spans_rejected: {},
});

/** Acknowledged parts waiting to be stored, oldest first, in slices of about this long (ms): memory bounded by the backlog's span, not its size. */
const SLICE_MS = 100;
/** A store reported with nothing acknowledged to match (the ingest log's replay after a restart, or ack-after-insert storing before the publish resolves) is matched against what is acknowledged within this long. */
const CREDIT_MS = 10_000;
/** A writer alone reports the lag of its last stored parts for this long after them; then 0 (nothing seen waiting). */
const WRITER_LAG_FRESH_MS = 60_000;

class ProjectLedger {
  readonly entrances = new Map<StoredEntrance, EntranceCounts>();
  /** Acknowledged parts not yet stored: [acknowledged at (ms), parts] slices, oldest first. */
  private readonly waiting: [number, number][] = [];
  private waitingParts = 0;
  private credit = 0;
  private creditAt = 0;
  lastStoredLagMs: number | null = null;
  lastStoredAt: number | null = null;

  counts(entrance: StoredEntrance): EntranceCounts {
    let c = this.entrances.get(entrance);
    if (!c) this.entrances.set(entrance, (c = emptyCounts()));
    return c;
  }

  wait(parts: number, at: number): void {
    if (this.credit > 0 && at - this.creditAt <= CREDIT_MS) {
      const used = Math.min(this.credit, parts);
      this.credit -= used;
      parts -= used;
    }
    if (parts <= 0) return;
    const last = this.waiting[this.waiting.length - 1];
    if (last && at - last[0] < SLICE_MS) last[1] += parts;
    else this.waiting.push([at, parts]);
    this.waitingParts += parts;
  }

  settle(parts: number, at: number): void {
    while (parts > 0 && this.waiting.length > 0) {
      const first = this.waiting[0]!;
      const used = Math.min(first[1], parts);
      first[1] -= used;
      parts -= used;
      this.waitingParts -= used;
      if (first[1] === 0) this.waiting.shift();
    }
    if (parts > 0) {
      if (at - this.creditAt > CREDIT_MS) this.credit = 0;
      this.credit += parts;
      this.creditAt = at;
    }
  }

  pending(): number {
    return this.waitingParts;
  }

  oldestWaiting(): number | null {
    return this.waiting[0]?.[0] ?? null;
  }
}

const deliveryParts = new Counter({
  name: 'weft_delivery_parts_total',
  help: 'Call parts (a start or an end) per project and entrance, by outcome: accepted, stored, dead_lettered, sampled_out, would_sample_out, replayed',
  labelNames: ['project', 'entrance', 'outcome'] as const,
  registers: [metricsRegistry],
});
const deliveryRefused = new Counter({
  name: 'weft_delivery_refused_total',
  help: 'Call-writing requests refused whole, per project (empty: not known when refused) and entrance, by reason',
  labelNames: ['project', 'entrance', 'reason'] as const,
  registers: [metricsRegistry],
});
const deliverySpansRejected = new Counter({
  name: 'weft_delivery_spans_rejected_total',
  help: 'OTLP spans refused inside an accepted request (partial_success), per project and entrance, by reason',
  labelNames: ['project', 'entrance', 'reason'] as const,
  registers: [metricsRegistry],
});

export class DeliveryLedger {
  /** When counting began (the process's start). */
  readonly since = new Date();
  private readonly projects = new Map<string, ProjectLedger>();
  /** What this process does: accept (a gateway or inference role), store (a writer). */
  private readonly roles = { accepts: false, stores: false };
  /** Lag above this (s) is flagged (WEFT_DELIVERY_LAG_WARN_MS). */
  lagWarningSeconds = 30;

  constructor(private readonly now: () => number = Date.now) {}

  /** Declared by the roles of the process: what it counts (a lag is only measured where both run). */
  countsAccepted(): void {
    this.roles.accepts = true;
  }
  countsStored(): void {
    this.roles.stores = true;
  }
  reports(): ('accepted' | 'stored')[] {
    return [...(this.roles.accepts ? ['accepted' as const] : []), ...(this.roles.stores ? ['stored' as const] : [])];
  }

  private project(id: string): ProjectLedger {
    let p = this.projects.get(id);
    if (!p) this.projects.set(id, (p = new ProjectLedger()));
    return p;
  }

  /** Parts acknowledged to the client (sampled-out ones included: the client was told they were taken). */
  accepted(project: string, entrance: Entrance, parts: number): void {
    if (parts <= 0) return;
    const p = this.project(project);
    p.counts(entrance).accepted += parts;
    deliveryParts.inc({ project, entrance, outcome: 'accepted' }, parts);
    if (this.roles.stores) p.wait(parts, this.now());
  }

  /** Parts acknowledged and dropped by the project's sampling rate (`dryRun`: kept, counted as would_sample_out). */
  sampledOut(project: string, entrance: Entrance, parts: number, dryRun: boolean): void {
    if (parts <= 0) return;
    const p = this.project(project);
    if (dryRun) p.counts(entrance).would_sample_out += parts;
    else {
      p.counts(entrance).sampled_out += parts;
      // Never stored: not waiting either.
      if (this.roles.stores) p.settle(parts, this.now());
    }
    deliveryParts.inc({ project, entrance, outcome: dryRun ? 'would_sample_out' : 'sampled_out' }, parts);
  }

  /** A call-writing request refused whole; `project` null when it was not known (refused before its body was read). */
  refused(project: string | null, entrance: Entrance, reason: string): void {
    const counts = this.project(project ?? '').counts(entrance);
    counts.refused[reason] = (counts.refused[reason] ?? 0) + 1;
    deliveryRefused.inc({ project: project ?? '', entrance, reason });
  }

  spansRejected(project: string | null, entrance: Entrance, reason: string, spans: number): void {
    if (spans <= 0) return;
    const counts = this.project(project ?? '').counts(entrance);
    counts.spans_rejected[reason] = (counts.spans_rejected[reason] ?? 0) + spans;
    deliverySpansRejected.inc({ project: project ?? '', entrance, reason }, spans);
  }

  /** Parts stored (queryable); `oldestAcceptedMs` the acknowledgement time of the oldest of them (their created_at). */
  stored(project: string, entrance: StoredEntrance, parts: number, oldestAcceptedMs: number | null): void {
    if (parts <= 0) return;
    const p = this.project(project);
    const now = this.now();
    p.counts(entrance).stored += parts;
    deliveryParts.inc({ project, entrance, outcome: 'stored' }, parts);
    if (oldestAcceptedMs !== null) {
      p.lastStoredLagMs = Math.max(0, now - oldestAcceptedMs);
      p.lastStoredAt = now;
    }
    if (this.roles.accepts) p.settle(parts, now);
  }

  /** Parts the store refused for good, moved to the bus's dead letters. */
  deadLettered(project: string, entrance: StoredEntrance, parts: number): void {
    if (parts <= 0) return;
    const p = this.project(project);
    p.counts(entrance).dead_lettered += parts;
    deliveryParts.inc({ project, entrance, outcome: 'dead_lettered' }, parts);
    if (this.roles.accepts) p.settle(parts, this.now());
  }

  /** Dead-lettered parts published again (an admin's replay): they wait to be stored again. */
  replayed(project: string, entrance: StoredEntrance, parts: number): void {
    if (parts <= 0) return;
    const p = this.project(project);
    p.counts(entrance).replayed += parts;
    deliveryParts.inc({ project, entrance, outcome: 'replayed' }, parts);
    if (this.roles.stores && this.roles.accepts) p.wait(parts, this.now());
  }

  lag(project: string): DeliveryLag {
    const p = this.projects.get(project);
    const now = this.now();
    const last = {
      last_stored_seconds: p?.lastStoredLagMs != null ? p.lastStoredLagMs / 1000 : null,
      last_stored_at: p?.lastStoredAt != null ? new Date(p.lastStoredAt).toISOString() : null,
    };
    if (this.roles.accepts && this.roles.stores) {
      const oldest = p?.oldestWaiting() ?? null;
      return { seconds: oldest === null ? 0 : Math.max(0, now - oldest) / 1000, pending_parts: p?.pending() ?? 0, ...last };
    }
    if (this.roles.stores) {
      const fresh = p?.lastStoredAt != null && now - p.lastStoredAt <= WRITER_LAG_FRESH_MS;
      return { seconds: fresh ? p.lastStoredLagMs! / 1000 : 0, pending_parts: null, ...last };
    }
    return { seconds: null, pending_parts: null, ...last };
  }

  /** A project's counts per entrance (every entrance, zeros included; `unknown` only when it has any). */
  entrances(project: string): ({ entrance: StoredEntrance } & EntranceCounts)[] {
    const p = this.projects.get(project);
    const listed: StoredEntrance[] = [...ENTRANCES, ...(p?.entrances.has('unknown') ? (['unknown'] as const) : [])];
    return listed.map((entrance) => ({ entrance, ...structuredClone(p?.entrances.get(entrance) ?? emptyCounts()) }));
  }

  /** The projects with any count (the empty name: refusals whose project was not known). */
  projectIds(): string[] {
    return [...this.projects.keys()];
  }
}

/** The counts of entrances added up. */
export function totalCounts(list: readonly EntranceCounts[]): EntranceCounts {
  const total = emptyCounts();
  for (const c of list) {
    total.accepted += c.accepted;
    total.stored += c.stored;
    total.dead_lettered += c.dead_lettered;
    total.sampled_out += c.sampled_out;
    total.would_sample_out += c.would_sample_out;
    total.replayed += c.replayed;
    for (const [k, n] of Object.entries(c.refused)) total.refused[k] = (total.refused[k] ?? 0) + n;
    for (const [k, n] of Object.entries(c.spans_rejected)) total.spans_rejected[k] = (total.spans_rejected[k] ?? 0) + n;
  }
  return total;
}

/** The process's ledger (as `metrics`: one per process, shared by its roles). */
export const delivery = new DeliveryLedger();

// The current lag per project, computed when /metrics is read.
new Gauge({
  name: 'weft_delivery_lag_seconds',
  help: 'Current ack→queryable lag per project: the age of the oldest part acknowledged and not yet stored (all-in-one); a writer alone: the lag of the last parts it stored',
  labelNames: ['project'] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const project of delivery.projectIds()) {
      if (project === '') continue;
      const seconds = delivery.lag(project).seconds;
      if (seconds !== null) this.set({ project }, seconds);
    }
  },
});

const REFUSED_PROJECT = Symbol('the project a refused request named');

/** Marks an error with the project of the request it refuses (found while handling it: a span's resource attributes), for the delivery counts. */
export function withDeliveryProject<E extends object>(err: E, project: string | null): E {
  if (project) Object.defineProperty(err, REFUSED_PROJECT, { value: project, enumerable: false });
  return err;
}

export function deliveryProjectOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? ((err as Record<symbol, string | undefined>)[REFUSED_PROJECT] ?? undefined) : undefined;
}
