import { join } from 'node:path';
import { metrics, type Logger } from '@weft/core';
import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError } from './bus';
import { BatchingStage } from './batching-stage';
import { UndecodableMessageError, type EnvelopeCodec } from './codec';
import { DeadLetters } from './dead-letters';
import { LocalLog, LogWriteError, type LogRecord } from './local-log';
import type { BusMessage } from './messages';
import { ReadBarrier } from './read-your-writes';

export interface LogBusOptions<T> {
  /** Where each topic's log lives (a directory per topic below it). */
  dir: string;
  /** How a publish's values are written to the log and read back (encodeMany/decodeMany). */
  codec: Required<Pick<EnvelopeCodec<T>, 'encodeMany' | 'decodeMany'>> & Pick<EnvelopeCodec<T>, 'scopeOfKey'>;
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

/** A record acknowledged and not yet stored: its values' bytes as logged, and how many values they are. */
interface Queued extends LogRecord {
  values: number;
  /** Dead-lettered as undecodable already. */
  setAside?: boolean;
}

interface Topic<T> {
  log: LocalLog;
  handler?: BatchHandler<T>;
}

/** How long a failed insert waits before it is tried again (acknowledged values are never given up). */
const RETRY_MS = 1_000;
/** The longest a read waits for the writes acknowledged before it (read-your-writes.ts says why). */
const CAUGHT_UP_MAX_MS = 5_000;

/**
 * The all-in-one bus that acknowledges a publish once it is in a local append-only log
 * (local-log.ts), then stores it in large batches: the insert size no longer depends on how
 * many requests are in flight (each insert costs the engine a part in every table its views
 * feed, and merges; an insert of 20,000 parts costs far less per part than one of 1,000). The
 * all-in-one's Kafka, in one file: at least once (a restart replays what was not recorded as
 * stored; the call tables fold a replayed part), parts the store refuses for good dead-lettered
 * to a file, and reads can wait for what was acknowledged before them (`readYourWrites`).
 *
 * The log is the durable queue; the batching stage (a lane per topic, acknowledged offers, no
 * deadline, retried until stored) takes the records from it to the subscriber, whose sender
 * here decodes, stores, dead-letters what the store refused and records the log's commit.
 */
export class LogBus<T> implements Bus<T> {
  private readonly topics = new Map<string, Topic<T>>();
  private readonly stage: BatchingStage<Queued>;
  private closed = false;
  /** Values the store refused for good: listed, replayed or discarded (dead-letters.ts). */
  readonly deadLetters: DeadLetters<T>;
  /** Reads wait on it for the writes acknowledged before them. */
  readonly readYourWrites: ReadBarrier;
  /** Unstored records per scope (codec.scopeOfKey), and those of no known scope (replayed, unkeyed): what a read of a scope waits for. */
  private readonly unstoredByScope = new Map<string, number>();
  private unstoredUnscoped = 0;

  constructor(private readonly opts: LogBusOptions<T>) {
    this.deadLetters = DeadLetters.at(join(opts.dir, 'dead-letter'), { segmentBytes: this.segmentBytes, fsync: opts.fsync }, opts.codec);
    this.stage = new BatchingStage<Queued>({
      send: (topic, records) => this.store(topic, records),
      transport: 'ingest-log',
      canSend: (topic) => this.topics.get(topic)?.handler !== undefined,
      maxBatchItems: opts.batchRows,
      countOf: (r) => r.values,
      lingerMs: opts.flushMs,
      maxPendingBytes: opts.maxPendingBytes,
      retryMs: RETRY_MS,
      onRetry: (err, topic, records, attempt) =>
        this.opts.log.error({ err, topic, records, attempt }, 'local log: storing failed; retrying'),
      onPending: (_items, bytes) => metrics.ingestLogUnstoredBytes.set(bytes),
      errors: {
        full: (_items, bytes) => new BusUnavailableError(`ingest log full (${bytes} bytes acknowledged and not yet stored); not stored`, 1),
        // Never used: no deadline, and a failed store is retried.
        timedOut: () => new BusUnavailableError('not stored in time'),
        failed: (e) => e as Error,
      },
    });
    this.readYourWrites = new ReadBarrier({
      pending: (scope) =>
        scope !== undefined && this.unstoredUnscoped === 0 && !this.unstoredByScope.has(scope)
          ? []
          : this.stage.laneNames().flatMap((topic) => this.stage.flush(topic) ?? []),
      maxWaitMs: opts.caughtUpMaxMs ?? CAUGHT_UP_MAX_MS,
      log: opts.log,
      backlog: () => ({ unstoredBytes: this.stage.pending().bytes }),
    });
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
      t = { log };
      this.topics.set(name, t);
      let bytes = 0;
      for (const r of replay) {
        this.enqueue(name, { ...r, values: this.valuesIn(r.payload) }, undefined);
        bytes += r.payload.length;
      }
      if (replay.length) {
        this.opts.log.info({ topic: name, records: replay.length, bytes }, 'local log: replaying what was acknowledged and not yet stored');
      }
    }
    return t;
  }

  /** A replayed record's values, for the batch size (a record that does not decode counts as one). */
  private valuesIn(payload: Buffer): number {
    try {
      return Math.max(1, this.opts.codec.decodeMany(payload).length);
    } catch {
      return 1;
    }
  }

  /**
   * Acknowledged: the stage takes it to the store (its answer, "stored", is what read barriers
   * wait for). `scopes`: the scopes its values belong to (undefined: not known, every read waits).
   */
  private enqueue(topic: string, r: Queued, scopes: readonly string[] | undefined): void {
    if (scopes) for (const s of scopes) this.unstoredByScope.set(s, (this.unstoredByScope.get(s) ?? 0) + 1);
    else this.unstoredUnscoped++;
    // Never refused (admitted, no deadline, retried until stored): nothing to catch but the unexpected.
    this.stage
      .offer(topic, [r], r.payload.length, { admitted: true })
      .catch((err: unknown) => {
        this.opts.log.error({ err, topic }, 'local log: an acknowledged record left the stage unstored');
      })
      .finally(() => {
        if (!scopes) return void this.unstoredUnscoped--;
        for (const s of scopes) {
          const n = this.unstoredByScope.get(s)! - 1;
          if (n === 0) this.unstoredByScope.delete(s);
          else this.unstoredByScope.set(s, n);
        }
      });
  }

  /** The scopes of a publish's messages (undefined when one has none: the record is waited for by every read). */
  private scopesOf(messages: readonly BusMessage<T>[]): string[] | undefined {
    const scopeOf = this.opts.codec.scopeOfKey;
    if (!scopeOf) return undefined;
    const scopes = new Set<string>();
    for (const m of messages) {
      const s = scopeOf(m.key);
      if (s === undefined) return undefined;
      scopes.add(s);
    }
    return [...scopes];
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    const t = this.topic(topic);
    if (!t.handler) throw new BusUnavailableError(`no consumer for ${topic}`);
    const payload = this.opts.codec.encodeMany(messages.map((m) => m.value));
    this.stage.checkRoom(1, payload.length);
    let seq: number;
    try {
      seq = await t.log.append([payload]);
    } catch (e) {
      metrics.busRejected.inc({ reason: 'error' });
      this.opts.log.error({ err: e, topic }, 'local log: append failed');
      const written = e instanceof LogWriteError ? e.firstSeq : -1;
      // Written but not synced: it is in the log, so it is stored like the rest; the client is told it may be.
      if (written >= 0) this.enqueue(topic, { seq: written, payload, values: messages.length }, this.scopesOf(messages));
      throw new BusUnavailableError(`${(e as Error).message}; ${written >= 0 ? 'the parts may still be stored' : 'not stored'}`, 5);
    }
    this.enqueue(topic, { seq, payload, values: messages.length }, this.scopesOf(messages));
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.stage.pending().bytes,
      maxPendingBytes: this.opts.maxPendingBytes,
      down: this.closed ? 'bus is shutting down' : null,
      behind: null,
    };
  }

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    const t = this.topic(topic);
    if (t.handler) throw new Error(`${topic} already has a subscriber`);
    t.handler = handler;
    this.stage.resume(topic);
    return {
      stop: async () => {
        // What was acknowledged is stored before the subscriber goes (a restart would replay it anyway).
        await this.stage.stop(topic);
        t.handler = undefined;
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stage.close();
    for (const t of this.topics.values()) t.log.close();
    this.deadLetters.close();
  }

  /**
   * The stage's sender: decodes a batch of records, stores the values (throwing when the store
   * fails: the stage retries), dead-letters those the store refuses for good, and records the
   * records as stored in the log.
   */
  private async store(name: string, records: Queued[]): Promise<void> {
    const t = this.topics.get(name)!;
    const values: T[] = [];
    for (const r of records) {
      if (r.setAside) continue;
      try {
        for (const v of this.opts.codec.decodeMany(r.payload)) values.push(v);
      } catch (e) {
        if (!(e instanceof UndecodableMessageError)) throw e;
        // A record this version does not read (an envelope version it no longer reads): set aside, as it came, with why.
        this.opts.log.warn({ topic: name, reason: e.reason }, 'message dead-lettered');
        await this.deadLetters.addUndecodable(name, e.reason, r.payload);
        metrics.deadLettered.inc({ kind: 'undecodable' });
        // Once: a retry of this batch (the store failing) does not dead-letter it again.
        r.setAside = true;
      }
    }
    if (values.length > 0) {
      const outcome = await t.handler!(values);
      for (const r of outcome?.rejected ?? []) {
        const reason = `store rejected: ${r.reason.slice(0, 500)}`;
        this.opts.log.warn({ topic: name, reason }, 'message dead-lettered');
        await this.deadLetters.add(name, reason, [values[r.index]!]);
        metrics.deadLettered.inc({ kind: 'rejected' });
      }
    }
    t.log.commit(records[records.length - 1]!.seq);
  }
}
