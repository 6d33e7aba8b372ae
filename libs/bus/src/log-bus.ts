import { join } from 'node:path';
import { metrics, type Logger } from '@weft/core';
import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError } from './bus';
import { UndecodableMessageError, type EnvelopeCodec } from './codec';
import { DeadLetters } from './dead-letters';
import { LocalLog, LogWriteError, type LogRecord } from './local-log';
import type { BusMessage } from './messages';

export interface LogBusOptions<T> {
  /** Where each topic's log lives (a directory per topic below it). */
  dir: string;
  /** How a publish's values are written to the log and read back (encodeMany/decodeMany). */
  codec: Required<Pick<EnvelopeCodec<T>, 'encodeMany' | 'decodeMany'>>;
  /** Most values handed to the subscriber at once (one insert). */
  batchRows: number;
  /** How long (ms) values wait for more to join their insert, at most (ack→queryable adds it). */
  flushMs: number;
  /** Bytes acknowledged and not yet stored beyond which publishes are refused (503). */
  maxPendingBytes: number;
  /** fdatasync each append (survives power loss, not only the process being killed). */
  fsync: boolean;
  segmentBytes?: number;
  /** The longest caughtUp waits (default CAUGHT_UP_MAX_MS). */
  caughtUpMaxMs?: number;
  log: Logger;
}

/** A record acknowledged and not yet stored: its values' bytes as logged. */
interface Queued {
  seq: number;
  payload: Buffer;
}

interface Topic<T> {
  log: LocalLog;
  queue: Queued[];
  queuedBytes: number;
  handler?: BatchHandler<T>;
  /** The consumer loop, while one runs. */
  running?: Promise<void>;
  /** Set to end the current wait for a fuller batch (a read barrier, closing, enough rows). */
  wake?: () => void;
  /** The subscriber is leaving: a failing store is not retried any more (the log keeps the values). */
  stopping?: boolean;
  /** Waiting for everything up to a sequence number to be stored. */
  barriers: { seq: number; resolve: () => void }[];
  storedSeq: number;
  lastSeq: number;
}

/** How long a failed insert waits before it is tried again (acknowledged values are never given up). */
const RETRY_MS = 1_000;
/**
 * The longest a read waits for the writes acknowledged before it (`caughtUp`). An insert takes
 * well under a second; past this the store is failing or throttled, and a read that went ahead
 * without the newest writes serves users better than one hanging until its request times out.
 */
const CAUGHT_UP_MAX_MS = 5_000;

/**
 * The all-in-one bus that acknowledges a publish once it is in a local append-only log
 * (local-log.ts), then stores it in large batches: the insert size no longer depends on how
 * many requests are in flight (each insert costs the engine a part in every table its views
 * feed, and merges; an insert of 20,000 parts costs far less per part than one of 1,000). The
 * all-in-one's Kafka, in one file: at least once (a restart replays what was not recorded as
 * stored; the call tables fold a replayed part), parts the store refuses for good dead-lettered
 * to a file, and reads can wait for what was acknowledged before them (`caughtUp`).
 */
export class LogBus<T> implements Bus<T> {
  private readonly topics = new Map<string, Topic<T>>();
  private pendingBytes = 0;
  /** Values per record (one publish) in the last batch stored: how gather estimates the values waiting. */
  private rowsPerRecord = 1;
  private closed = false;
  /** Values the store refused for good: listed, replayed or discarded (dead-letters.ts). */
  readonly deadLetters: DeadLetters<T>;

  constructor(private readonly opts: LogBusOptions<T>) {
    this.deadLetters = DeadLetters.at(join(opts.dir, 'dead-letter'), { segmentBytes: this.segmentBytes, fsync: opts.fsync }, opts.codec);
  }

  private get segmentBytes(): number {
    return this.opts.segmentBytes ?? 64 * 1024 * 1024;
  }

  /** Opens the dead-letter log (each topic's log opens with its first use or subscriber). */
  open(): void {
    this.deadLetters.open();
  }

  /** Publishes a pending dead letter's values again, through publish (the normal path); a handled one is left as it is. */
  replayDeadLetter(seq: number): ReturnType<DeadLetters<T>['replay']> {
    return this.deadLetters.replay(seq, (topic, values) =>
      this.publish(
        topic,
        values.map((value) => ({ key: '', value })),
      ),
    );
  }

  private topic(name: string): Topic<T> {
    let t = this.topics.get(name);
    if (!t) {
      const log = new LocalLog({ dir: join(this.opts.dir, name), segmentBytes: this.segmentBytes, fsync: this.opts.fsync });
      const replay = log.open();
      t = { log, queue: [], queuedBytes: 0, barriers: [], storedSeq: -1, lastSeq: -1 };
      for (const r of replay) this.enqueue(t, r);
      if (replay.length) {
        t.storedSeq = replay[0]!.seq - 1;
        this.opts.log.info(
          { topic: name, records: replay.length, bytes: t.queuedBytes },
          'local log: replaying what was acknowledged and not yet stored',
        );
      }
      this.topics.set(name, t);
    }
    return t;
  }

  private enqueue(t: Topic<T>, r: LogRecord): void {
    t.queue.push(r);
    t.queuedBytes += r.payload.length;
    this.pendingBytes += r.payload.length;
    metrics.ingestLogUnstoredBytes.set(this.pendingBytes);
    t.lastSeq = r.seq;
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    const t = this.topic(topic);
    if (!t.handler) throw new BusUnavailableError(`no consumer for ${topic}`);
    const payload = this.opts.codec.encodeMany(messages.map((m) => m.value));
    if (this.pendingBytes > 0 && this.pendingBytes + payload.length > this.opts.maxPendingBytes) {
      metrics.busRejected.inc({ reason: 'overload' });
      throw new BusUnavailableError(`ingest log full (${this.pendingBytes} bytes acknowledged and not yet stored); not stored`, 1);
    }
    let seq: number;
    try {
      seq = await t.log.append([payload]);
    } catch (e) {
      metrics.busRejected.inc({ reason: 'error' });
      this.opts.log.error({ err: e, topic }, 'local log: append failed');
      const written = e instanceof LogWriteError ? e.firstSeq : -1;
      // Written but not synced: it is in the log, so it is stored like the rest; the client is told it may be.
      if (written >= 0) this.enqueue(t, { seq: written, payload });
      throw new BusUnavailableError(`${(e as Error).message}; ${written >= 0 ? 'the parts may still be stored' : 'not stored'}`, 5);
    }
    this.enqueue(t, { seq, payload });
    if (this.queuedRows(t) >= this.opts.batchRows) t.wake?.();
    this.kick(topic, t);
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.pendingBytes,
      maxPendingBytes: this.opts.maxPendingBytes,
      down: this.closed ? 'bus is shutting down' : null,
      behind: null,
    };
  }

  /**
   * Resolves once every message acknowledged before the call is stored (at once when none is
   * waiting): the read barrier that keeps the all-in-one read-your-writes. The batch waiting is
   * inserted now rather than at the end of its window. Past CAUGHT_UP_MAX_MS (a failing store)
   * it resolves anyway, and says so in the log.
   */
  caughtUp(): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const t of this.topics.values()) {
      if (t.storedSeq >= t.lastSeq) continue;
      const seq = t.lastSeq;
      waits.push(new Promise<void>((resolve) => t.barriers.push({ seq, resolve })));
      t.wake?.();
    }
    if (waits.length === 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.opts.log.warn(
          { waitedMs: this.caughtUpMaxMs, unstoredBytes: this.pendingBytes },
          'local log: a read goes ahead before the writes acknowledged before it are stored (the store is slow or failing)',
        );
        resolve();
      }, this.caughtUpMaxMs);
    });
    return Promise.race([Promise.all(waits).then(() => undefined), late]).finally(() => clearTimeout(timer));
  }

  private get caughtUpMaxMs(): number {
    return this.opts.caughtUpMaxMs ?? CAUGHT_UP_MAX_MS;
  }

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    const t = this.topic(topic);
    if (t.handler) throw new Error(`${topic} already has a subscriber`);
    t.handler = handler;
    this.kick(topic, t);
    return {
      stop: async () => {
        // What was acknowledged is stored before the subscriber goes (a restart would replay it anyway).
        t.stopping = true;
        while (t.running) {
          t.wake?.();
          await t.running;
        }
        t.handler = undefined;
        t.stopping = false;
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.topics.values()) {
      t.wake?.();
      await t.running;
      t.log.close();
    }
    this.deadLetters.close();
  }

  private kick(name: string, t: Topic<T>): void {
    // Not again once closing: a store failing then would be retried at once, for ever (the log keeps the values).
    if (t.running || !t.handler || this.closed) return;
    t.running = this.consume(name, t).finally(() => {
      t.running = undefined;
      if (t.queue.length && t.handler) this.kick(name, t);
    });
  }

  /** Waits up to flushMs for a full batch, unless something needs the batch now. */
  private gather(t: Topic<T>): Promise<void> {
    const urgent = () => this.closed || t.barriers.length > 0 || this.queuedRows(t) >= this.opts.batchRows;
    if (urgent() || this.opts.flushMs <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.opts.flushMs);
      function done(): void {
        clearTimeout(timer);
        t.wake = undefined;
        resolve();
      }
      t.wake = done;
    });
  }

  /** Values are not counted before decoding: the records waiting times the values per record of the last batch stand for them. */
  private queuedRows(t: Topic<T>): number {
    return t.queue.length * this.rowsPerRecord;
  }

  private async consume(name: string, t: Topic<T>): Promise<void> {
    while (t.queue.length > 0 && t.handler) {
      await this.gather(t);
      let taken = 0;
      const values: T[] = [];
      while (taken < t.queue.length && (values.length === 0 || values.length < this.opts.batchRows)) {
        const payload = t.queue[taken]!.payload;
        let decoded: T[];
        try {
          decoded = this.opts.codec.decodeMany(payload);
        } catch (e) {
          if (!(e instanceof UndecodableMessageError)) throw e;
          // A record this version does not read (an envelope version it no longer reads): set aside, as it came, with why.
          this.opts.log.warn({ topic: name, reason: e.reason }, 'message dead-lettered');
          await this.deadLetters.addUndecodable(name, e.reason, payload);
          metrics.deadLettered.inc({ kind: 'undecodable' });
          decoded = [];
        }
        for (const v of decoded) values.push(v);
        taken++;
      }
      this.rowsPerRecord = Math.max(1, Math.round(values.length / taken));
      // Not stored (the bus is closing and the store fails): left in the log, replayed at the next start.
      if (values.length > 0 && !(await this.store(name, t, values))) return;
      const records = t.queue.splice(0, taken);
      const last = records[records.length - 1]!.seq;
      let bytes = 0;
      for (const r of records) bytes += r.payload.length;
      t.log.commit(last);
      t.storedSeq = last;
      t.queuedBytes -= bytes;
      this.pendingBytes -= bytes;
      metrics.ingestLogUnstoredBytes.set(this.pendingBytes);
      t.barriers = t.barriers.filter((b) => (b.seq <= last ? (b.resolve(), false) : true));
    }
  }

  /**
   * Stores the values, retrying until the store takes them (they are acknowledged); values it
   * refuses for good are dead-lettered to the log's dead-letter file. False when the bus closes
   * before the store took them.
   */
  private async store(name: string, t: Topic<T>, values: T[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await t.handler!(values);
        for (const r of outcome?.rejected ?? []) {
          const reason = `store rejected: ${r.reason.slice(0, 500)}`;
          this.opts.log.warn({ topic: name, reason }, 'message dead-lettered');
          await this.deadLetters.add(name, reason, [values[r.index]!]);
          metrics.deadLettered.inc({ kind: 'rejected' });
        }
        return true;
      } catch (e) {
        this.opts.log.error({ err: e, topic: name, values: values.length, attempt }, 'local log: storing failed; retrying');
        if (this.closed || t.stopping) return false;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
}
