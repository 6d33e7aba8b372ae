import { metrics } from '@weft/core';
import type { BatchOutcome } from './bus';

/**
 * Sends one batch of a lane and resolves once it is durable, listing the items refused for good
 * (by index in the batch); throws to have it retried or its offers failed. The only part a
 * transport writes itself (the OpenTelemetry Collector's "exporter").
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a sender that stored everything may return nothing
export type BatchSender<I> = (lane: string, batch: I[]) => Promise<BatchOutcome | void>;

/** How the stage answers the offers it cannot take or keep; each transport words its own (the stage counts them). */
export interface StageErrors {
  /** An offer refused because the pending bounds are reached: nothing of it was taken. */
  full(pendingItems: number, pendingBytes: number): Error;
  /** An offer not sent within `timeoutMs`; `sent`: some of it was handed to the sender (it may still be stored). */
  timedOut(sent: boolean): Error;
  /** A send failed (and is not retried): the error its offers get. */
  failed(e: unknown): Error;
}

export interface BatchingStageOptions<I> {
  send: BatchSender<I>;
  /** The transport it serves: the `transport` label of the stage's metrics (default `unnamed`). */
  transport?: string;
  /** A lane's `lane` label (default its name). */
  laneLabel?: (lane: string) => string;
  /** Whether a lane may send now (the ingest log: while it has a subscriber); default always. */
  canSend?: (lane: string) => boolean;
  /** A batch holds at most this many items (as `countOf` counts them; an offer's part is never split)... */
  maxBatchItems: number;
  /** ...and at most this many bytes (as offered); default no bound. */
  maxBatchBytes?: number;
  /** What a queued item counts for in `maxBatchItems` (the ingest log: the values of a record); default 1. */
  countOf?: (item: I) => number;
  /**
   * Before each batch a lane waits up to this long (ms) for more items unless a full batch
   * waits: a fuller batch costs the stage behind less per item (each insert is a part in every
   * table its views feed, and merges), at the price of this much latency.
   */
  lingerMs: number;
  /**
   * Whether a lane lingers again right after a send (true) or sends what gathered during it at
   * once (false: the Kafka consumer, whose fetches already gathered while the insert ran).
   */
  lingerAfterSend?: boolean;
  /**
   * The group-commit window of ack-after-insert: past `lingerMs` the wait stretches up to this
   * (ms) while offers are known to be on their way (`expectOffersFrom`; the clients of the last
   * batch coming back), so concurrent clients share a batch instead of each making the next.
   */
  maxLingerMs?: number;
  /** Offers are refused while the items / bytes offered and not yet answered are past these (one offer alone always goes). */
  maxPendingItems?: number;
  maxPendingBytes?: number;
  /** An offer not sent within this many ms is answered `timedOut` (and dropped if still queued); unset: no deadline. */
  timeoutMs?: number;
  /**
   * A failed send is tried again after this many ms, until it succeeds or the lane stops (then
   * the batch goes back to the front of its queue): for items already acknowledged (the ingest
   * log). Unset: the batch's offers get `failed` at once.
   */
  retryMs?: number;
  /** Told whenever the items / bytes offered and not yet answered change (a transport's own gauge). */
  onPending?: (items: number, bytes: number) => void;
  /** Told of each failed send that will be retried (logging; the stage counts it). */
  onRetry?: (e: unknown, lane: string, items: number, attempt: number) => void;
  errors: StageErrors;
}

/** One offer (a publish): answered once every part is sent, or at the first failure, or at its deadline. */
interface Offer {
  settled: boolean;
  /** Some part was handed to the sender: a failure or a timeout can no longer say "not stored". */
  sent: boolean;
  /** Parts not yet sent. */
  unsent: number;
  rejected: BatchOutcome['rejected'];
  items: number;
  bytes: number;
  parts: Part<unknown>[];
  timer: NodeJS.Timeout | undefined;
  resolve: (outcome: BatchOutcome) => void;
  reject: (e: unknown) => void;
}

/** The items of one offer that go to one lane. */
interface Part<I> {
  offer: Offer;
  lane: string;
  items: I[];
  /** Where these items start among the offer's (rejections are reported by the offer's indices). */
  base: number;
  count: number;
  bytes: number;
  /** Position in its lane (barriers wait until the lane sent this far). */
  seq: number;
}

/** One queue with at most one send in flight (order per lane: a topic, a Kafka partition). */
interface Lane<I> {
  name: string;
  queue: Part<I>[];
  queuedCount: number;
  queuedBytes: number;
  running: Promise<void> | null;
  /** Ends the current wait for a fuller batch. */
  wake: (() => void) | null;
  stretching: boolean;
  /** Leaving: a failing send is not retried any more, and nothing lingers. */
  stopping: boolean;
  /** The last part's position, and the first position of the batch being sent (0: none). */
  queuedSeq: number;
  sendingFrom: number;
  /** Waiting for every part up to `seq` to be sent (they also end lingering). */
  barriers: { seq: number; resolve: () => void }[];
  telemetry: LaneTelemetry;
}

/** A lane's metrics, labelled once (transport and lane). */
interface LaneTelemetry {
  batchItems: { observe(v: number): void };
  sentOk: { observe(v: number): void };
  sentFailed: { observe(v: number): void };
  retries: { inc(): void };
}

export interface OfferOptions {
  admitted?: boolean;
  items?: number;
}

export interface OfferPart<I> {
  lane: string;
  items: I[];
}

/**
 * The transports' one queue → batch → deadline → retry stage, written once and wrapped around
 * a sender that only sends a batch (as the OpenTelemetry Collector's exporterhelper wraps an
 * exporter): offers (publishes) are refused past the pending bounds, queued per lane, joined
 * into batches by count, bytes and linger, answered when sent, when a send fails, or at their
 * deadline; failed sends are failed or retried. The ack-after-insert bus, the ingest log's
 * consumer, Kafka's producer (a lane per partition) and its consumer's group commit are each
 * this stage with their own options. Its telemetry is its own, labelled by transport and lane:
 * batch sizes, send times, retries, what is pending, and the offers refused (full, timed out:
 * `weft_bus_rejected_total`).
 */
export class BatchingStage<I> {
  private readonly lanes = new Map<string, Lane<I>>();
  private pendingItems = 0;
  private pendingBytes = 0;
  private pendingOffers = 0;
  private announced: (() => number) | null = null;
  /** Offers the last batch answered, and offers arrived since: its clients coming back (the stretched window). */
  private lastBatchOffers = 0;
  private arrivedSinceBatch = 0;
  private closed = false;
  private readonly transport: string;
  private readonly pendingGauges: { items: { set(v: number): void }; bytes: { set(v: number): void } };

  constructor(private readonly opts: BatchingStageOptions<I>) {
    this.transport = opts.transport ?? 'unnamed';
    const transport = this.transport;
    this.pendingGauges = { items: metrics.stagePendingItems.labels({ transport }), bytes: metrics.stagePendingBytes.labels({ transport }) };
  }

  /** Items and bytes offered and not yet answered. */
  pending(): { items: number; bytes: number } {
    return { items: this.pendingItems, bytes: this.pendingBytes };
  }

  /** Throws `full` when an offer of `items`/`bytes` would go past the pending bounds (nothing else waiting: always room). */
  checkRoom(items: number, bytes: number): void {
    if (this.pendingOffers === 0) return;
    if (
      this.pendingItems + items > (this.opts.maxPendingItems ?? Infinity) ||
      this.pendingBytes + bytes > (this.opts.maxPendingBytes ?? Infinity)
    ) {
      metrics.busRejected.inc({ reason: 'overload' });
      throw this.opts.errors.full(this.pendingItems, this.pendingBytes);
    }
  }

  /**
   * Offers items to one lane (or, as parts, to several: answered once all are sent). Resolves
   * with the items the sender refused for good (by index among the offer's items, parts in
   * order); rejects with the stage's errors. `admitted`: the caller checked the room already;
   * `items`: what the offer counts for against `maxPendingItems` when not its items (Kafka: values, not records).
   */
  offer(lane: string, items: I[], bytes: number, opts?: OfferOptions): Promise<BatchOutcome> {
    return this.offerParts([{ lane, items }], bytes, opts);
  }

  offerParts(parts: OfferPart<I>[], bytes: number, opts?: OfferOptions): Promise<BatchOutcome> {
    let total = 0;
    for (const p of parts) total += p.items.length;
    const items = opts?.items ?? total;
    if (!opts?.admitted) {
      try {
        this.checkRoom(items, bytes);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise<BatchOutcome>((resolve, reject) => {
      const offer: Offer = {
        settled: false,
        sent: false,
        unsent: parts.length,
        rejected: [],
        items,
        bytes,
        parts: [],
        timer: undefined,
        resolve: (outcome) => {
          if (this.settle(offer)) resolve(outcome);
        },
        reject: (e) => {
          if (this.settle(offer)) reject(e);
        },
      };
      this.pendingItems += items;
      this.pendingBytes += bytes;
      this.pendingOffers++;
      this.pendingChanged();
      this.arrivedSinceBatch++;
      if (this.opts.timeoutMs !== undefined) {
        offer.timer = setTimeout(() => this.expire(offer), this.opts.timeoutMs);
        offer.timer.unref();
      }
      let base = 0;
      const sizeShare = (n: number) => (total === 0 ? 0 : Math.round((bytes * n) / total));
      for (const p of parts) {
        const lane = this.lane(p.lane);
        let count = 0;
        if (this.opts.countOf) for (const it of p.items) count += this.opts.countOf(it);
        else count = p.items.length;
        const part: Part<I> = { offer, lane: p.lane, items: p.items, base, count, bytes: sizeShare(p.items.length), seq: ++lane.queuedSeq };
        base += p.items.length;
        offer.parts.push(part as Part<unknown>);
        lane.queue.push(part);
        lane.queuedCount += count;
        lane.queuedBytes += part.bytes;
      }
      if (parts.length === 0) offer.resolve({ rejected: [] });
      for (const p of parts) {
        const lane = this.lanes.get(p.lane)!;
        if (lane.wake && (this.full(lane) || (lane.stretching && this.expected() === 0))) lane.wake();
        this.kick(lane);
      }
    });
  }

  /**
   * The HTTP edge's count of admitted requests that will offer (the stretched window waits for
   * those not yet arrived). Wired by the composition root.
   */
  expectOffersFrom(count: () => number): void {
    this.announced = count;
  }

  /** Sends what a lane holds now without lingering; resolves once it is sent (null: nothing waiting). */
  flush(lane: string): Promise<void> | null {
    const l = this.lanes.get(lane);
    if (!l || (l.queue.length === 0 && l.sendingFrom === 0)) return null;
    const seq = l.queuedSeq;
    const done = new Promise<void>((resolve) => l.barriers.push({ seq, resolve }));
    l.wake?.();
    return done;
  }

  /** Every lane offered to so far. */
  laneNames(): string[] {
    return [...this.lanes.keys()];
  }

  /** Starts a lane that could not send before (`canSend` became true). */
  resume(lane: string): void {
    const l = this.lanes.get(lane);
    if (l) this.kick(l);
  }

  /**
   * Sends what a lane holds without lingering and waits until it is done; a failing send is not
   * retried then (its batch stays queued). The lane's sender leaves after this.
   */
  async stop(lane: string): Promise<void> {
    const l = this.lanes.get(lane);
    if (!l) return;
    l.stopping = true;
    while (l.running) {
      l.wake?.();
      await l.running;
    }
    l.stopping = false;
  }

  /**
   * Answers `error` now to every offer none of whose parts was sent yet (never sent, so never
   * stored), and drops them from their queues: Kafka known down.
   */
  refuseUnsent(error: () => Error): void {
    const offers = new Set<Offer>();
    for (const lane of this.lanes.values()) for (const p of lane.queue) offers.add(p.offer);
    for (const offer of offers) if (!offer.settled && !offer.sent) offer.reject(error());
  }

  /** No lane lingers any more; resolves once every lane's batch in flight is done (queued items stay queued). */
  async close(): Promise<void> {
    this.closed = true;
    for (const lane of this.lanes.values()) lane.wake?.();
    await Promise.all([...this.lanes.values()].map((l) => l.running));
  }

  private pendingChanged(): void {
    this.pendingGauges.items.set(this.pendingItems);
    this.pendingGauges.bytes.set(this.pendingBytes);
    this.opts.onPending?.(this.pendingItems, this.pendingBytes);
  }

  private telemetryOf(name: string): LaneTelemetry {
    const labels = { transport: this.transport, lane: this.opts.laneLabel?.(name) ?? name };
    return {
      batchItems: metrics.stageBatchItems.labels(labels),
      sentOk: metrics.stageSendSeconds.labels({ ...labels, outcome: 'ok' }),
      sentFailed: metrics.stageSendSeconds.labels({ ...labels, outcome: 'failed' }),
      retries: metrics.stageSendRetries.labels(labels),
    };
  }

  private lane(name: string): Lane<I> {
    let lane = this.lanes.get(name);
    if (!lane) {
      lane = {
        name,
        queue: [],
        queuedCount: 0,
        queuedBytes: 0,
        running: null,
        wake: null,
        stretching: false,
        stopping: false,
        queuedSeq: 0,
        sendingFrom: 0,
        barriers: [],
        telemetry: this.telemetryOf(name),
      };
      this.lanes.set(name, lane);
    }
    return lane;
  }

  /** Answered once: releases its pending share; a queued part of an offer answered early is dropped. */
  private settle(offer: Offer): boolean {
    if (offer.settled) return false;
    offer.settled = true;
    clearTimeout(offer.timer);
    this.pendingItems -= offer.items;
    this.pendingBytes -= offer.bytes;
    this.pendingOffers--;
    this.pendingChanged();
    if (offer.unsent > 0) {
      // Not sent and never will be: out of the queues now, so an outage cannot hold their memory.
      for (const p of offer.parts as Part<I>[]) {
        const lane = this.lanes.get(p.lane)!;
        const at = lane.queue.indexOf(p);
        if (at >= 0) this.drop(lane, at);
      }
    }
    return true;
  }

  private drop(lane: Lane<I>, at: number): void {
    const [p] = lane.queue.splice(at, 1);
    lane.queuedCount -= p!.count;
    lane.queuedBytes -= p!.bytes;
    this.answerBarriers(lane);
  }

  /** Barriers up to the first part still queued or being sent are answered. */
  private answerBarriers(lane: Lane<I>): void {
    if (lane.barriers.length === 0) return;
    const first = Math.min(lane.sendingFrom || Infinity, lane.queue[0]?.seq ?? Infinity);
    lane.barriers = lane.barriers.filter((b) => (b.seq < first ? (b.resolve(), false) : true));
  }

  private expire(offer: Offer): void {
    if (offer.settled) return;
    metrics.busRejected.inc({ reason: 'timeout' });
    offer.reject(this.opts.errors.timedOut(offer.sent));
  }

  private full(lane: Lane<I>): boolean {
    return lane.queuedCount >= this.opts.maxBatchItems || lane.queuedBytes >= (this.opts.maxBatchBytes ?? Infinity);
  }

  /**
   * Offers on their way: admitted requests that have not offered yet, or — when more — the
   * offers of the last batch whose clients have not offered again (closed-loop clients send
   * their next request once answered; it may be admitted only after the window's first part).
   */
  private expected(): number {
    // Near the pending-bytes bound, a longer window holds bytes that admission then refuses
    // others for: throughput at the bound is bytes over latency, so do not stretch there.
    if (!this.announced || this.pendingBytes * 2 >= (this.opts.maxPendingBytes ?? Infinity)) return 0;
    return Math.max(0, this.announced() - this.pendingOffers, this.lastBatchOffers - this.arrivedSinceBatch);
  }

  private kick(lane: Lane<I>): void {
    if (lane.running || lane.queue.length === 0) return;
    if (this.opts.canSend && !this.opts.canSend(lane.name)) return;
    lane.running = this.run(lane).finally(() => {
      lane.running = null;
      if (!this.closed && !lane.stopping) this.kick(lane);
    });
  }

  /**
   * The wait before a batch: until a full batch waits, `lingerMs` pass, a barrier or the close
   * wants it now; then, while offers are on their way, until they arrived or `maxLingerMs`
   * passed since the start. Null when there is nothing to wait for.
   */
  private gather(lane: Lane<I>, afterSend: boolean): Promise<void> | null {
    const urgent = () => this.closed || lane.stopping || lane.barriers.length > 0 || this.full(lane);
    if (this.opts.lingerMs <= 0 || urgent() || (afterSend && this.opts.lingerAfterSend === false)) return null;
    return new Promise<void>((resolve) => {
      const started = performance.now();
      const stretch = (): void => {
        const left = (this.opts.maxLingerMs ?? 0) - (performance.now() - started);
        if (left < 1 || this.closed || this.expected() === 0) return wake();
        lane.stretching = true;
        timer = setTimeout(wake, left);
      };
      let timer = setTimeout(stretch, this.opts.lingerMs);
      function wake(): void {
        clearTimeout(timer);
        lane.wake = null;
        lane.stretching = false;
        resolve();
      }
      lane.wake = wake;
    });
  }

  private async run(lane: Lane<I>): Promise<void> {
    let afterSend = false;
    while (lane.queue.length > 0) {
      if (this.opts.canSend && !this.opts.canSend(lane.name)) return;
      const wait = this.gather(lane, afterSend);
      if (wait) await wait;
      const batch: I[] = [];
      let count = 0;
      let bytes = 0;
      let take = 0;
      const maxBytes = this.opts.maxBatchBytes ?? Infinity;
      for (; take < lane.queue.length; take++) {
        const next = lane.queue[take]!;
        if (take > 0 && (count + next.count > this.opts.maxBatchItems || bytes + next.bytes > maxBytes)) break;
        count += next.count;
        bytes += next.bytes;
        next.offer.sent = true;
        for (const it of next.items) batch.push(it);
      }
      // One splice per batch, not a shift per part: the ingest log's queue can hold 100,000 records.
      const parts = lane.queue.splice(0, take);
      lane.queuedCount -= count;
      lane.queuedBytes -= bytes;
      if (parts.length === 0) continue;
      lane.sendingFrom = parts[0]!.seq;
      const sent = await this.send(lane, batch).finally(() => (lane.sendingFrom = 0));
      if (!sent.ok) {
        if (sent.error === undefined) {
          // Stopping while the send fails: the batch goes back to the front, unsent (the ingest log keeps it).
          lane.queue.unshift(...parts);
          for (const p of parts) {
            lane.queuedCount += p.count;
            lane.queuedBytes += p.bytes;
          }
          return;
        }
        const err = this.opts.errors.failed(sent.error);
        for (const p of parts) p.offer.reject(err);
      } else {
        this.lastBatchOffers = parts.length;
        this.arrivedSinceBatch = 0;
        const rejected = sent.outcome?.rejected ?? [];
        let offset = 0;
        for (const p of parts) {
          const start = offset;
          offset += p.items.length;
          for (const r of rejected)
            if (r.index >= start && r.index < offset) p.offer.rejected.push({ ...r, index: r.index - start + p.base });
          if (--p.offer.unsent === 0) p.offer.resolve({ rejected: p.offer.rejected });
        }
      }
      this.answerBarriers(lane);
      afterSend = true;
    }
  }

  /** One send, retried when the stage retries; `error` undefined: given up because the lane stops. */
  private async send(lane: Lane<I>, batch: I[]): Promise<{ ok: true; outcome: BatchOutcome | undefined } | { ok: false; error?: unknown }> {
    const t = lane.telemetry;
    t.batchItems.observe(batch.length);
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      try {
        const outcome = (await this.opts.send(lane.name, batch)) ?? undefined;
        t.sentOk.observe((performance.now() - started) / 1000);
        return { ok: true, outcome };
      } catch (e) {
        t.sentFailed.observe((performance.now() - started) / 1000);
        if (this.opts.retryMs === undefined) return { ok: false, error: e };
        t.retries.inc();
        this.opts.onRetry?.(e, lane.name, batch.length, attempt);
        if (this.closed || lane.stopping) return { ok: false };
        await new Promise((resolve) => setTimeout(resolve, this.opts.retryMs));
      }
    }
  }
}
