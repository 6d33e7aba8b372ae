import type { ClickHouseSettings } from '@clickhouse/client';
import { type Lane, LANES, type LaneConfig, laneConfig, metrics, RetryableError } from '@weft/core';

/** What the store reads of the lanes' configuration (docs/operations.md, "Lanes"). */
export type LaneOptions = Pick<LaneConfig, 'connections' | 'threads' | 'nice' | 'maxSeconds' | 'maxMemoryMb' | 'maxRows' | 'queueMs'> & {
  /** One connection for every statement and no lane settings: how weft ran before lanes (bench:team's control). */
  shared?: boolean;
};

/** The defaults, as with no variable set. */
export const defaultLaneOptions = (): LaneOptions => laneConfig.parse({});

/**
 * The engine's own priority per lane (lower runs first; a statement of a later lane is paused
 * while one of an earlier lane runs): what a person waits for before analytics, analytics before
 * background passes. Inserts take no priority in the engine.
 */
const PRIORITY: Record<Lane, number> = { ingest: 1, interactive: 1, heavy: 5, background: 10 };

/** The engine settings a statement of `lane` runs with (its caps and its share of the cores). */
export function laneSettings(lane: Lane, opts: LaneOptions): ClickHouseSettings {
  const s: ClickHouseSettings = {};
  if (opts.shared) return s;
  if (lane !== 'ingest') s.priority = String(PRIORITY[lane]);
  if (opts.threads[lane] > 0) s.max_threads = opts.threads[lane];
  if (opts.nice[lane] > 0) s.os_thread_priority = String(opts.nice[lane]);
  if (opts.maxSeconds[lane] > 0) s.max_execution_time = opts.maxSeconds[lane];
  if (opts.maxMemoryMb[lane] > 0) s.max_memory_usage = String(opts.maxMemoryMb[lane] * 1024 * 1024);
  if (opts.maxRows[lane] > 0) s.max_rows_to_read = String(opts.maxRows[lane]);
  return s;
}

/** How recently a lane with a lower nice value must have begun a statement for another lane to yield to it. */
export const YIELD_WINDOW_MS = 1000;

/**
 * Whom a lane's nice value yields to: the lanes with a lower one (a person's reads, inserts) while
 * they have work — a statement running, or one begun within YIELD_WINDOW_MS (a person clicks
 * again, an agent sends the next batch). With none, a niced statement yields only to Node's own
 * threads serving it (its reply, the garbage collector) and is slower for no one's gain
 * (docs/performance.md, "The newest wing's home").
 */
export class LaneYielding {
  private readonly began = Object.fromEntries(LANES.map((l) => [l, -Infinity])) as Record<Lane, number>;

  constructor(
    private readonly opts: LaneOptions,
    private readonly turns: Record<Lane, LaneTurns>,
  ) {}

  /** A statement of `lane`, of work someone asked for, has its turn. */
  begin(lane: Lane): void {
    this.began[lane] = performance.now();
  }

  /** Whether a statement of `lane` beginning now should run at its lane's nice value. */
  shouldYield(lane: Lane): boolean {
    const mine = this.opts.nice[lane];
    if (!(mine > 0)) return false;
    const now = performance.now();
    return LANES.some((l) => this.opts.nice[l] < mine && (this.turns[l].load.running > 0 || now - this.began[l] < YIELD_WINDOW_MS));
  }
}

/** A statement whose caller went away before it ran (classified `aborted` by errors.ts). */
export const abandonedError = (when: string): Error => Object.assign(new Error(`statement abandoned ${when}`), { name: 'AbortError' });

/** A turn on one of a lane's connections: `slot` says which; release it exactly once. */
export interface Turn {
  slot: number;
  release(): void;
}

interface Waiter {
  grant(slot: number): void;
  refuse(e: Error): void;
}

/**
 * One lane's connections: at most one statement on each at a time (the embedded engine runs a
 * connection's statements one after another anyway), the others wait in order — for at most the
 * lane's queue bound, then they are refused (503 + Retry-After: the lane is saturated, not the
 * request wrong), and a waiter whose caller went away leaves the queue at once.
 */
export class LaneTurns {
  private readonly free: number[];
  private readonly queue: Waiter[] = [];

  constructor(
    readonly lane: Lane,
    readonly size: number,
    private readonly queueMs: number,
  ) {
    this.free = Array.from({ length: size }, (_, i) => size - 1 - i);
  }

  acquire(signal?: AbortSignal): Promise<Turn> {
    const slot = this.free.pop();
    if (slot !== undefined) return Promise.resolve(this.turn(slot, 0));
    const queuedAt = performance.now();
    metrics.laneQueued.inc({ lane: this.lane });
    return new Promise<Turn>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        metrics.laneQueued.dec({ lane: this.lane });
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: (s) => {
          leave();
          resolve(this.turn(s, performance.now() - queuedAt));
        },
        refuse: (e) => {
          leave();
          reject(e);
        },
      };
      const onAbort = () => {
        metrics.laneCancelled.inc({ lane: this.lane });
        waiter.refuse(abandonedError(`while waiting in the ${this.lane} lane`));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.queueMs > 0) {
        timer = setTimeout(() => {
          metrics.laneRefused.inc({ lane: this.lane, reason: 'queue' });
          waiter.refuse(
            new RetryableError(
              `the engine's ${this.lane} lane is busy: waited ${this.queueMs} ms for one of its ${this.size} connections (WEFT_LANE_CONNECTIONS, WEFT_LANE_QUEUE_MS)`,
              Math.max(1, Math.ceil(this.queueMs / 1000)),
            ),
          );
        }, this.queueMs);
        timer.unref();
      }
      this.queue.push(waiter);
    });
  }

  /** Statements running and waiting now. */
  get load(): { running: number; queued: number } {
    return { running: this.size - this.free.length, queued: this.queue.length };
  }

  private turn(slot: number, waitedMs: number): Turn {
    metrics.laneWaitSeconds.observe({ lane: this.lane }, waitedMs / 1000);
    metrics.laneRunning.inc({ lane: this.lane });
    let released = false;
    return {
      slot,
      release: () => {
        if (released) return;
        released = true;
        metrics.laneRunning.dec({ lane: this.lane });
        const next = this.queue[0];
        if (next) next.grant(slot);
        else this.free.push(slot);
      },
    };
  }
}

/** Every lane's turns, from the options. */
export function laneTurns(opts: LaneOptions): Record<Lane, LaneTurns> {
  if (opts.shared) {
    const one = new LaneTurns('interactive', 1, 0);
    return Object.fromEntries(LANES.map((lane) => [lane, one])) as Record<Lane, LaneTurns>;
  }
  return Object.fromEntries(
    LANES.map((lane) => [lane, new LaneTurns(lane, Math.max(1, opts.connections[lane]), opts.queueMs[lane])]),
  ) as Record<Lane, LaneTurns>;
}
