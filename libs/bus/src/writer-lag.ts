import type { Logger } from '@weft/core';
import { BusUnavailableError } from './bus';

/** Committed offsets of the writers' group: per topic, per partition, the next offset to write (-1: none yet). */
export type CommittedOffsets = Map<string, Map<number, number>>;

export interface WriterLagOptions {
  /** The bound: past it publishes wait, past four times it they are refused; 0 = no pacing. */
  maxLagMs: number;
  /** How often the writers' committed offsets are read. */
  intervalMs: number;
  /** The writers' consumer group's committed offsets for these topics (one admin request). */
  fetchCommitted: (topics: string[]) => Promise<CommittedOffsets>;
  log: Logger;
  now?: () => number;
}

/** Records of one acknowledged send: offsets up to `last` of a partition, acknowledged at `at`. */
interface AckedRange {
  last: number;
  at: number;
  bytes: number;
}

/**
 * Refusing starts at this many times the bound: a record's way through a busy writer (a fetch,
 * the group-commit window, the insert before its own, its own) alone can take the bound; only a
 * writer stalled well past it (or gone) has the gateway answer 503.
 */
const STALLED = 4;

interface Waiter {
  bytes: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Pacing by the writers' lag, as a publishing process (the gateway) sees it: for each partition
 * it published to, the records Kafka acknowledged to it (offsets, bytes, and when) against the
 * writers' consumer group's committed offsets (read every `intervalMs`). From the two: the
 * bytes acknowledged and not yet written (the backlog), and the rate at which the writers
 * write them while they have a backlog throughout. The backlog over that rate is how long a call
 * acknowledged now would wait before the writers reach it. Past `maxLagMs`, publishes wait
 * (before they are sent) until it is back under: clients slow to what the writers absorb,
 * and the writers keep about `maxLagMs` of work queued, so their inserts stay full. Once the
 * oldest unwritten record is older than STALLED times the bound (writers stalled or gone, not
 * just busy), publishes waiting and new call writes get 503 + Retry-After. Either way the backlog
 * and the ack→queryable delay stay bounded instead of growing while the gateway outpaces the
 * writers. Only this process's records are tracked; on a partition shared with other gateways
 * theirs are older than ours or committed with them.
 */
export class WriterLag {
  private readonly acked = new Map<string, Map<number, AckedRange[]>>();
  private committed: CommittedOffsets = new Map();
  private timer: NodeJS.Timeout | null = null;
  private fetching: Promise<void> | null = null;
  /** Bytes acknowledged and not known written. */
  private backlogBytes = 0;
  /** Bytes the writers write per ms while busy (a moving average; 0: not measured yet). */
  private rate = 0;
  /** When the committed offsets were last read, and whether a backlog was left then. */
  private sampledAt = 0;
  private busySince = false;
  /** Bytes of publishes let through and not yet settled (sent, not all acknowledged yet). */
  private reserved = 0;
  private refusal: string | null = null;
  private waiters: Waiter[] = [];
  private lastWarnAt = -Infinity;
  private readonly now: () => number;

  constructor(private readonly opts: WriterLagOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  get enabled(): boolean {
    return this.opts.maxLagMs > 0;
  }

  /** A send of `count` records (`bytes`) to a partition, first at `baseOffset`, was acknowledged now. */
  acknowledged(topic: string, partition: number, baseOffset: number, count: number, bytes: number): void {
    if (!this.enabled || count <= 0) return;
    let byPartition = this.acked.get(topic);
    if (!byPartition) this.acked.set(topic, (byPartition = new Map()));
    let ranges = byPartition.get(partition);
    if (!ranges) byPartition.set(partition, (ranges = []));
    ranges.push({ last: baseOffset + count - 1, at: this.now(), bytes });
    this.backlogBytes += bytes;
    this.start();
  }

  /** Why call writes are refused now (the writers are stalled past four times the bound), else null. */
  refused(): string | null {
    return this.refusal;
  }

  /**
   * A publish of `bytes`: null (go) while the backlog, with what is on its way and these bytes,
   * would take the writers no longer than the bound; else a wait (first come, first served)
   * until there is room, which rejects (503, nothing sent) if the writers fall past STALLED
   * times the bound first. Once it goes, the caller settles the bytes when the publish ends.
   */
  admit(bytes: number): Promise<void> | null {
    if (!this.enabled) return null;
    if (this.refusal) return Promise.reject(new BusUnavailableError(`${this.refusal}; not stored`, 1));
    if (this.waiters.length === 0 && this.room(bytes)) {
      this.reserved += bytes;
      return null;
    }
    return new Promise<void>((resolve, reject) => this.waiters.push({ bytes, resolve, reject }));
  }

  /** A publish let through by `admit` ended (acknowledged or not): its bytes are no longer on their way. */
  settle(bytes: number): void {
    if (!this.enabled) return;
    this.reserved -= bytes;
    this.release();
  }

  /**
   * Room for `bytes` more: always when nothing is unwritten or on its way (progress), and
   * before a pace is measured (until the writers are seen behind, they keep up).
   */
  private room(bytes: number): boolean {
    const ahead = this.backlogBytes + this.reserved;
    return this.rate === 0 || ahead === 0 || (ahead + bytes) / this.rate <= this.opts.maxLagMs;
  }

  /** Lets waiting publishes go, in order, as far as there is room: a release never overshoots the bound by more than one publish. */
  private release(): void {
    while (this.waiters.length > 0 && !this.refusal && this.room(this.waiters[0]!.bytes)) {
      const w = this.waiters.shift()!;
      this.reserved += w.bytes;
      w.resolve();
    }
  }

  /**
   * Forgets the records now known committed and returns the age (ms) of the oldest one not yet
   * committed (0 when none). `fresh`: the committed offsets were just read, so what was
   * written since the last read is a sample of the writers' rate — when they had a backlog
   * all along (else they wrote what came, not what they can).
   */
  private observe(fresh: boolean): number {
    const now = this.now();
    let oldest = 0;
    let written = 0;
    for (const [topic, byPartition] of this.acked) {
      const committed = this.committed.get(topic);
      for (const [partition, ranges] of byPartition) {
        const next = committed?.get(partition) ?? -1;
        let drop = 0;
        while (drop < ranges.length && ranges[drop]!.last < next) written += ranges[drop++]!.bytes;
        if (drop > 0) ranges.splice(0, drop);
        if (ranges.length > 0) oldest = Math.max(oldest, now - ranges[0]!.at);
      }
    }
    this.backlogBytes -= written;
    if (fresh) {
      if (!this.busySince) {
        this.sampledAt = now;
        this.busySince = this.backlogBytes > 0;
      } else if (written > 0) {
        // Busy since the last sample and still: what was written over that time is their pace.
        if (this.backlogBytes > 0) {
          const sample = written / Math.max(1, now - this.sampledAt);
          this.rate = this.rate === 0 ? sample : 0.7 * this.rate + 0.3 * sample;
        }
        this.sampledAt = now;
        this.busySince = this.backlogBytes > 0;
      }
    }
    return oldest;
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /**
   * Every tick: start a read of the committed offsets unless one is under way, and judge with
   * the offsets known now. A read that fails or hangs leaves the last known offsets: the ages
   * keep growing from them, so a coordinator out of reach ends in refusals, not in an
   * unbounded backlog.
   */
  private tick(): void {
    if (!this.fetching) {
      this.fetching = this.opts
        .fetchCommitted([...this.acked.keys()])
        .then(
          (committed) => {
            this.committed = committed;
            this.judge(true);
          },
          (e: unknown) => this.opts.log.debug({ err: e }, 'reading the writers committed offsets failed'),
        )
        .finally(() => {
          this.fetching = null;
        });
    }
    this.judge(false);
  }

  /**
   * Refusing while the oldest unwritten record is older than STALLED times the bound (waiting
   * publishes are refused too); else letting waiting publishes go as far as there is room.
   */
  private judge(fresh: boolean): void {
    const age = this.observe(fresh);
    const was = this.refusal;
    this.refusal =
      age > STALLED * this.opts.maxLagMs
        ? `the writers are behind: acknowledged call parts unwritten for ${Math.round(age)} ms (WEFT_MAX_WRITER_LAG_MS ${this.opts.maxLagMs})`
        : null;
    if (this.refusal) {
      const waiting = this.waiters;
      this.waiters = [];
      const e = new BusUnavailableError(`${this.refusal}; not stored`, 1);
      for (const w of waiting) w.reject(e);
      // Under sustained overload this flips every few ticks: one warning per 5 s says it.
      if (!was && this.now() - this.lastWarnAt > 5_000) {
        this.lastWarnAt = this.now();
        this.opts.log.warn({ lagMs: Math.round(age) }, 'writers behind; refusing call writes until they catch up');
      }
    } else this.release();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.reject(new BusUnavailableError('bus is shutting down; not stored'));
  }
}
