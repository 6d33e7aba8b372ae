import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError, RejectedByStoreError, splitOutcome } from './bus';
import { publishWithDeadline, type Settleable } from './deadline';
import type { BusMessage } from './messages';

export interface InProcessBusOptions<T = unknown> {
  /** Largest batch handed to the subscriber. */
  maxBatch: number;
  /**
   * The group-commit window: before every insert, wait up to this long (ms) for more messages
   * unless `maxBatch` are already waiting. Each insert has a large fixed cost in the engine (a
   * part in every table its views feed, and the merges of those parts), so a fuller batch costs
   * less CPU per message; the window bounds what that adds to the acknowledgement latency.
   */
  lingerMs: number;
  /**
   * How far the window stretches while more publishes are known to be on their way (requests
   * admitted on publishing routes and not yet published, or the last insert's publishers not
   * back yet: `expected`), so that concurrent clients' requests join the insert instead of
   * making the next one.
   */
  maxLingerMs?: number;
  /** Messages waiting beyond this make publish fail fast (back-pressure, 503 upstream). */
  maxPending: number;
  /** Bytes waiting (as `sizeOf` counts them) beyond which publish fails fast, as for Kafka. */
  maxPendingBytes?: number;
  /** A message's size in bytes for `maxPendingBytes` (an estimate; no encoding needed). */
  sizeOf?: (value: T) => number;
  /** A publish not handled within this many ms is rejected (not acknowledged). */
  publishTimeoutMs: number;
}

interface Pending<T> extends Settleable {
  values: T[];
  /** Handed to the handler: from then on a timeout cannot promise the values are not stored. */
  inHandler: boolean;
}

/**
 * The all-in-one bus: publishers wait until the subscriber has stored their messages, and
 * concurrent publishers share one handler call (group commit): while one batch is being
 * inserted, the next one gathers. Memory is bounded by `maxPending` messages and `maxPendingBytes`.
 */
export class InProcessBus<T> implements Bus<T> {
  private readonly queues = new Map<string, Pending<T>[]>();
  private readonly pendingCount = new Map<string, number>();
  private pendingBytes = 0;
  private readonly handlers = new Map<string, BatchHandler<T>>();
  private readonly draining = new Set<string>();
  private readonly idle = new Map<string, Promise<void>>();
  /** Messages queued per topic (not yet handed to the handler), and who waits for a full batch. */
  private readonly queuedCount = new Map<string, number>();
  private readonly fullBatchWaiters = new Map<string, { wake: () => void; stretching: boolean }>();
  /** Publishes not yet settled, and how many the HTTP edge has admitted (expectPublishesFrom). */
  private publishesInFlight = 0;
  private announced: (() => number) | null = null;
  /** Publishes the last insert acknowledged, and publishes arrived since: its clients coming back. */
  private lastInsertPublishes = 0;
  private arrivedSinceInsert = 0;
  private closed = false;

  constructor(private readonly opts: InProcessBusOptions<T>) {}

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    if (!this.handlers.has(topic)) throw new BusUnavailableError(`no consumer for ${topic}`);
    const count = this.pendingCount.get(topic) ?? 0;
    const sizeOf = this.opts.sizeOf;
    let bytes = 0;
    if (sizeOf) for (const m of messages) bytes += sizeOf(m.value);
    const maxBytes = this.opts.maxPendingBytes ?? Infinity;
    if (count > 0 && (count + messages.length > this.opts.maxPending || this.pendingBytes + bytes > maxBytes)) {
      throw new BusUnavailableError(`ingest queue full (${count} messages, ${this.pendingBytes} bytes waiting); not stored`, 1);
    }
    this.pendingCount.set(topic, count + messages.length);
    this.pendingBytes += bytes;
    this.publishesInFlight++;
    const publish = publishWithDeadline(
      { values: messages.map((m) => m.value), inHandler: false },
      this.opts.publishTimeoutMs,
      (p) => {
        if (p.inHandler) {
          return new BusUnavailableError(
            `not confirmed within ${this.opts.publishTimeoutMs} ms: the store write is under way, so these parts may still be stored`,
            2,
          );
        }
        // Still queued: it is dropped from the queue (drain skips settled publishes), so never stored.
        return new BusUnavailableError(`not stored within ${this.opts.publishTimeoutMs} ms (the writer is behind); not stored`, 2);
      },
      (p) => {
        let q = this.queues.get(topic);
        if (!q) this.queues.set(topic, (q = []));
        q.push(p);
        this.arrivedSinceInsert++;
        const queued = (this.queuedCount.get(topic) ?? 0) + p.values.length;
        this.queuedCount.set(topic, queued);
        const window = this.fullBatchWaiters.get(topic);
        if (window && (queued >= this.opts.maxBatch || (window.stretching && this.expected() === 0))) window.wake();
        this.kick(topic);
      },
    );
    return publish.finally(() => {
      this.pendingBytes -= bytes;
      this.publishesInFlight--;
    });
  }

  /**
   * `count`: requests admitted on routes that publish and not yet answered (the HTTP edge's
   * admission). Those not yet published are on their way: the group-commit window waits for them.
   */
  expectPublishesFrom(count: () => number): void {
    this.announced = count;
  }

  /**
   * Publishes on their way: admitted requests that have not published yet, or — when more — the
   * publishers of the last insert that have not published again (closed-loop clients send their
   * next request once acknowledged; it is admitted only after a network turn and the window's
   * first part may have passed by then). Only with an HTTP edge announcing (expectPublishesFrom).
   */
  private expected(): number {
    // Near the pending-bytes bound, a longer window holds bytes that admission then refuses
    // others for: throughput at the bound is bytes over latency, so do not stretch there.
    if (!this.announced || this.pendingBytes * 2 >= (this.opts.maxPendingBytes ?? Infinity)) return 0;
    return Math.max(0, this.announced() - this.publishesInFlight, this.lastInsertPublishes - this.arrivedSinceInsert);
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.pendingBytes,
      maxPendingBytes: this.opts.maxPendingBytes ?? Infinity,
      down: this.closed ? 'bus is shutting down' : null,
      // The all-in-one acknowledges only what is inserted: never behind.
      behind: null,
    };
  }

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    if (this.handlers.has(topic)) throw new Error(`${topic} already has a subscriber`);
    this.handlers.set(topic, handler);
    return {
      stop: async () => {
        await this.idle.get(topic);
        this.handlers.delete(topic);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const window of this.fullBatchWaiters.values()) window.wake();
    await Promise.all([...this.idle.values()]);
  }

  private kick(topic: string): void {
    if (this.draining.has(topic)) return;
    this.draining.add(topic);
    this.idle.set(
      topic,
      this.drain(topic).finally(() => this.draining.delete(topic)),
    );
  }

  /**
   * The group-commit window: a wait until `maxBatch` messages wait, `lingerMs` pass, or the bus
   * closes; then, while publishes are on their way (`expected`), until they have all arrived or
   * `maxLingerMs` passed since the start. Null when there is nothing to wait for (then the batch
   * is taken in the same tick).
   */
  private gather(topic: string): Promise<void> | null {
    if (this.opts.lingerMs <= 0 || this.closed || (this.queuedCount.get(topic) ?? 0) >= this.opts.maxBatch) return null;
    return new Promise<void>((resolve) => {
      const started = performance.now();
      const waiters = this.fullBatchWaiters;
      const window = { wake, stretching: false };
      const stretch = (): void => {
        const left = (this.opts.maxLingerMs ?? 0) - (performance.now() - started);
        if (left < 1 || this.closed || this.expected() === 0) return wake();
        window.stretching = true;
        timer = setTimeout(wake, left);
      };
      let timer = setTimeout(stretch, this.opts.lingerMs);
      function wake(): void {
        clearTimeout(timer);
        waiters.delete(topic);
        resolve();
      }
      waiters.set(topic, window);
    });
  }

  private async drain(topic: string): Promise<void> {
    const q = this.queues.get(topic)!;
    for (;;) {
      const window = this.gather(topic);
      if (window) await window;
      if (q.length === 0) return;
      const group: Pending<T>[] = [];
      const batch: T[] = [];
      let skipped = 0;
      while (q.length > 0 && (batch.length === 0 || batch.length + q[0]!.values.length <= this.opts.maxBatch)) {
        const p = q.shift()!;
        this.queuedCount.set(topic, (this.queuedCount.get(topic) ?? 0) - p.values.length);
        // Timed out while queued: its publisher was told "not stored", so it must not be.
        if (p.settled) {
          skipped += p.values.length;
          continue;
        }
        p.inHandler = true;
        group.push(p);
        for (const v of p.values) batch.push(v);
      }
      if (batch.length === 0) {
        this.pendingCount.set(topic, (this.pendingCount.get(topic) ?? 0) - skipped);
        continue;
      }
      const handler = this.handlers.get(topic);
      try {
        if (!handler) throw new BusUnavailableError(`no consumer for ${topic}`);
        // A publish with a value the store refused for good is refused (its other values are stored).
        const outcomes = splitOutcome(
          await handler(batch),
          group.map((p) => p.values.length),
        );
        this.lastInsertPublishes = group.length;
        this.arrivedSinceInsert = 0;
        group.forEach((p, i) => {
          const own = outcomes[i]!.rejected;
          if (own.length === 0) p.resolve();
          else p.reject(new RejectedByStoreError(own.length, p.values.length, own[0]!.reason));
        });
      } catch (e) {
        const err = e instanceof BusUnavailableError ? e : new BusUnavailableError(`store write failed: ${(e as Error).message}`, 2);
        for (const p of group) p.reject(err);
      } finally {
        this.pendingCount.set(topic, (this.pendingCount.get(topic) ?? 0) - batch.length - skipped);
      }
    }
  }
}
