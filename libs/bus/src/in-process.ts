import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError, RejectedByStoreError } from './bus';
import { BatchingStage } from './batching-stage';
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
   * back yet: `expectPublishesFrom`), so that concurrent clients' requests join the insert
   * instead of making the next one.
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

/**
 * The ack-after-insert bus (WEFT_ACK_AFTER=insert): publishers wait until the subscriber has
 * stored their messages, and concurrent publishers share one handler call (group commit): while
 * one batch is being inserted, the next one gathers. The batching stage does all of it; its
 * sender is the subscriber (a lane per topic), its window the one that waits for admitted publishes.
 */
export class InProcessBus<T> implements Bus<T> {
  private readonly handlers = new Map<string, BatchHandler<T>>();
  private readonly stage: BatchingStage<T>;
  private closed = false;

  constructor(private readonly opts: InProcessBusOptions<T>) {
    const timeoutMs = opts.publishTimeoutMs;
    this.stage = new BatchingStage<T>({
      send: async (topic, batch) => {
        const handler = this.handlers.get(topic);
        if (!handler) throw new BusUnavailableError(`no consumer for ${topic}`);
        return handler(batch);
      },
      transport: 'ack-after-insert',
      maxBatchItems: opts.maxBatch,
      lingerMs: opts.lingerMs,
      ...(opts.maxLingerMs !== undefined ? { maxLingerMs: opts.maxLingerMs } : {}),
      maxPendingItems: opts.maxPending,
      ...(opts.maxPendingBytes !== undefined ? { maxPendingBytes: opts.maxPendingBytes } : {}),
      timeoutMs,
      errors: {
        full: (items, bytes) => new BusUnavailableError(`ingest queue full (${items} messages, ${bytes} bytes waiting); not stored`, 1),
        timedOut: (sent) =>
          sent
            ? new BusUnavailableError(
                `not confirmed within ${timeoutMs} ms: the store write is under way, so these parts may still be stored`,
                2,
              )
            : // Still queued: dropped from the queue, so never stored.
              new BusUnavailableError(`not stored within ${timeoutMs} ms (the writer is behind); not stored`, 2),
        failed: (e) => (e instanceof BusUnavailableError ? e : new BusUnavailableError(`store write failed: ${(e as Error).message}`, 2)),
      },
    });
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    if (!this.handlers.has(topic)) throw new BusUnavailableError(`no consumer for ${topic}`);
    const sizeOf = this.opts.sizeOf;
    let bytes = 0;
    if (sizeOf) for (const m of messages) bytes += sizeOf(m.value);
    const outcome = await this.stage.offer(
      topic,
      messages.map((m) => m.value),
      bytes,
    );
    // A publish with a value the store refused for good is refused (its other values are stored).
    const own = outcome.rejected;
    if (own.length > 0) throw new RejectedByStoreError(own.length, messages.length, own[0]!.reason);
  }

  /**
   * `count`: requests admitted on routes that publish and not yet answered (the HTTP edge's
   * admission; wired by the composition root). Those not yet published are on their way: the
   * group-commit window waits for them.
   */
  expectPublishesFrom(count: () => number): void {
    this.stage.expectOffersFrom(count);
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.stage.pending().bytes,
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
        await this.stage.stop(topic);
        this.handlers.delete(topic);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stage.close();
  }
}
