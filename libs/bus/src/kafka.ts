import {
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel as KafkaLogLevel,
  type Consumer,
  type EachBatchPayload,
  type IHeaders,
  type KafkaMessage,
  type Producer,
  type TopicMessages,
} from 'kafkajs';
import { metrics, type Logger } from '@weft/core';
import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError } from './bus';
import { UndecodableMessageError, type EnvelopeCodec } from './codec';
import { publishWithDeadline, type Settleable } from './deadline';
import { GroupCommit } from './group-commit';
import type { BusMessage } from './messages';

export interface KafkaTopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
}

export interface KafkaBusOptions<T> {
  brokers: string[];
  clientId: string;
  /** Prepended to every topic name (several deployments or test runs on one cluster). */
  topicPrefix: string;
  /** The writers' consumer group. */
  groupId: string;
  /** Topics ensured at start (created when missing; existing ones are left as they are). */
  topics: KafkaTopicSpec[];
  deadLetterTopic: string;
  compression: 'gzip' | 'none';
  codec: EnvelopeCodec<T>;
  /** A publish not acknowledged by Kafka within this many ms gets BusUnavailableError (503). */
  publishTimeoutMs: number;
  /** Messages / bytes in flight beyond which publish fails fast (bounded memory, 503). */
  maxPendingMessages: number;
  maxPendingBytes: number;
  /** Consumer side: rows per handler call, and how long to wait for more partitions to join one. */
  batchRows: number;
  flushMs: number;
  fetchMinBytes: number;
  fetchMaxWaitMs: number;
  sessionTimeoutMs: number;
  /** Group members this process runs per subscription. */
  consumers: number;
  /**
   * True for a handler error that retrying cannot fix (the store rejected the data itself):
   * the batch is split to find the rejected messages, which are dead-lettered. Any other
   * error is retried without committing, so nothing is skipped while the store is down.
   */
  isPermanentError: (e: unknown) => boolean;
  /** How often the brokers are probed (a metadata request) to know whether Kafka is down; 0 = never. */
  probeIntervalMs?: number;
  /** A probe not answered within this many ms counts as a failure (health and readiness never hang). */
  probeTimeoutMs?: number;
  log: Logger;
}

/** Headers of a dead-lettered message: why, and where it came from. The value is the original bytes. */
export const DEAD_LETTER_HEADERS = {
  reason: 'weft-dead-letter-reason',
  topic: 'weft-origin-topic',
  partition: 'weft-origin-partition',
  offset: 'weft-origin-offset',
} as const;

/** A publish waiting to be sent; once `settled` (acknowledged or timed out) it is not sent. */
interface PendingPublish extends Settleable {
  topic: string;
  messages: { key: string; value: Buffer }[];
  bytes: number;
}

const retry = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2_000 };

/**
 * The distributed bus on Apache Kafka (kafkajs). Publishing: one idempotent producer with
 * acks from all in-sync replicas; concurrent publishes are sent together (one request in
 * flight keeps the idempotent sequence simple and batches grow with load). Consuming: a
 * consumer group; each fetched batch is decoded (undecodable → dead-letter topic), handed to
 * the handler (grouped across partitions by size and time), and its offsets are committed
 * only after the handler resolved — at-least-once.
 */
export class KafkaBus<T> implements Bus<T> {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly queue: PendingPublish[] = [];
  private pendingMessages = 0;
  private pendingBytes = 0;
  private sending: Promise<void> | null = null;
  private producerConnected: Promise<void> | null = null;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /** Set while the last probe of the brokers failed: publishes are refused at once. */
  private down: string | null = null;
  private probing: Promise<Record<string, unknown>> | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  /** A client with no retries for probes only: the main one retries for ever, which would hang them. */
  private readonly probeAdmin;

  constructor(private readonly opts: KafkaBusOptions<T>) {
    const log = opts.log.child({ component: 'kafka' });
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      retry,
      logLevel: KafkaLogLevel.WARN,
      logCreator:
        () =>
        ({ level, log: entry }) => {
          const { message, ...rest } = entry;
          if (level <= KafkaLogLevel.ERROR) log.error(rest, message);
          else log.warn(rest, message);
        },
    });
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const probeTimeout = opts.probeTimeoutMs ?? 1_500;
    this.probeAdmin = new Kafka({
      clientId: `${opts.clientId}-probe`,
      brokers: opts.brokers,
      connectionTimeout: probeTimeout,
      requestTimeout: probeTimeout,
      retry: { retries: 0 },
      logLevel: KafkaLogLevel.NOTHING,
    }).admin({ retry: { retries: 0 } });
  }

  /** Connects and ensures the topics exist (idempotent: existing topics are left untouched). */
  async start(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const missing = this.opts.topics.filter((t) => !existing.has(this.physical(t.topic)));
      if (missing.length > 0) {
        // Another process may create them at the same moment; createTopics then returns false.
        await admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((t) => ({ topic: this.physical(t.topic), numPartitions: t.partitions, replicationFactor: t.replicationFactor })),
        });
        this.opts.log.info({ topics: missing.map((t) => this.physical(t.topic)) }, 'kafka topics created');
      }
    } finally {
      await admin.disconnect();
    }
    await this.connectProducer();
    const every = this.opts.probeIntervalMs ?? 1_000;
    if (every > 0) {
      this.probeTimer = setInterval(() => void this.probe().catch(() => undefined), every);
      this.probeTimer.unref();
    }
  }

  /** The Kafka topic behind a bus topic name. */
  physical(topic: string): string {
    return this.opts.topicPrefix + topic;
  }

  /** For /ready: the brokers answer a metadata request within the probe timeout (never hangs). */
  health(): Promise<Record<string, unknown>> {
    return this.probe();
  }

  /**
   * One metadata request on the no-retry client, bounded by the probe timeout; its outcome is
   * the bus's "known down" state. Concurrent callers share the probe in flight.
   */
  private probe(): Promise<Record<string, unknown>> {
    if (this.probing) return this.probing;
    const timeoutMs = this.opts.probeTimeoutMs ?? 1_500;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`brokers did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const attempt = (async () => {
      await this.probeAdmin.connect();
      const cluster = await this.probeAdmin.describeCluster();
      return { bus: 'kafka', brokers: cluster.brokers.length };
    })();
    this.probing = Promise.race([attempt, deadline])
      .then(
        (ok) => {
          if (this.down) this.opts.log.info({ was: this.down }, 'kafka reachable again; accepting writes');
          this.down = null;
          return ok;
        },
        (e: unknown) => {
          const reason = `kafka unreachable: ${(e as Error).message}`;
          if (!this.down) this.opts.log.warn({ reason }, 'kafka down; refusing writes until it answers');
          this.down = reason;
          this.refuseQueued(reason);
          // A stuck connection would keep later probes stuck: start the next one afresh.
          void this.probeAdmin.disconnect().catch(() => undefined);
          throw new Error(reason);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.probing = null;
      });
    attempt.catch(() => undefined);
    return this.probing;
  }

  /** Publishes still queued (not handed to Kafka) get their 503 now: they were never sent, so never stored. */
  private refuseQueued(reason: string): void {
    const queued = this.queue.splice(0, this.queue.length);
    for (const p of queued) p.reject(new BusUnavailableError(`${reason}; not stored`, 5));
  }

  pressure(): BusPressure {
    return { pendingBytes: this.pendingBytes, maxPendingBytes: this.opts.maxPendingBytes, down: this.closed ? 'bus is shutting down' : this.down };
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    if (this.down) {
      metrics.busRejected.inc({ reason: 'down' });
      throw new BusUnavailableError(`${this.down}; not stored`, 5);
    }
    const encoded = messages.map((m) => ({ key: m.key, value: this.opts.codec.encode(m.value) }));
    const bytes = encoded.reduce((n, m) => n + m.value.length + m.key.length, 0);
    const busy = this.pendingMessages > 0;
    if (busy && (this.pendingMessages + encoded.length > this.opts.maxPendingMessages || this.pendingBytes + bytes > this.opts.maxPendingBytes)) {
      metrics.busRejected.inc({ reason: 'overload' });
      throw new BusUnavailableError(`ingest queue full (${this.pendingMessages} messages, ${this.pendingBytes} bytes in flight); not stored`, 1);
    }
    const started = performance.now();
    this.pendingMessages += encoded.length;
    this.pendingBytes += bytes;
    metrics.busPending.set(this.pendingMessages);
    try {
      await publishWithDeadline(
        { topic: this.physical(topic), messages: encoded, bytes },
        this.opts.publishTimeoutMs,
        (p) => {
          // Not sent yet (the send in flight is stuck): let go of its bytes now, so a long
          // outage cannot pile up unanswered messages behind the in-flight bound.
          const queued = this.queue.indexOf(p);
          if (queued >= 0) this.queue.splice(queued, 1);
          metrics.busRejected.inc({ reason: 'timeout' });
          // Handed to Kafka already: the broker may still append it (the producer retries).
          return new BusUnavailableError(
            queued >= 0
              ? `kafka did not acknowledge within ${this.opts.publishTimeoutMs} ms; not stored`
              : `kafka did not acknowledge within ${this.opts.publishTimeoutMs} ms; the parts were sent and may still be stored`,
            5,
          );
        },
        (p) => {
          this.queue.push(p);
          this.kick();
        },
      );
      metrics.producerLatency.observe((performance.now() - started) / 1000);
    } finally {
      // Counted until answered; a timed-out publish has left the queue (or rides the one send in flight).
      this.pendingMessages -= encoded.length;
      this.pendingBytes -= bytes;
      metrics.busPending.set(this.pendingMessages);
    }
  }

  private connectProducer(): Promise<void> {
    if (!this.producerConnected) {
      this.producerConnected = this.producer.connect().catch((e) => {
        this.producerConnected = null;
        throw e;
      });
    }
    return this.producerConnected;
  }

  private kick(): void {
    if (this.sending) return;
    this.sending = this.sendLoop().finally(() => {
      this.sending = null;
      if (this.queue.some((p) => !p.settled)) this.kick();
    });
  }

  /** Sends everything queued in one request at a time; each publish resolves when its request was acknowledged. */
  private async sendLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.queue.length).filter((p) => !p.settled);
      if (group.length === 0) continue;
      const byTopic = new Map<string, TopicMessages>();
      for (const p of group) {
        let tm = byTopic.get(p.topic);
        if (!tm) byTopic.set(p.topic, (tm = { topic: p.topic, messages: [] }));
        for (const m of p.messages) tm.messages.push(m);
      }
      try {
        await this.connectProducer();
        await this.producer.sendBatch({
          topicMessages: [...byTopic.values()],
          acks: -1,
          compression: this.opts.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
        });
        for (const p of group) p.resolve();
      } catch (e) {
        this.opts.log.warn({ err: e }, 'kafka send failed');
        metrics.busRejected.inc({ reason: 'error' });
        for (const p of group) p.reject(new BusUnavailableError(`kafka unavailable: ${(e as Error).message} (the parts were sent and may still be stored)`, 5));
        // The client may be left disconnected: reconnect on the next send.
        this.producerConnected = null;
        await this.producer.disconnect().catch(() => undefined);
      }
    }
  }

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    const members: Consumer[] = [];
    const gate = new GroupCommit<T>({ maxItems: this.opts.batchRows, lingerMs: this.opts.flushMs, handle: handler });
    const partitions = this.opts.topics.find((t) => t.topic === topic)?.partitions ?? 1;
    for (let i = 0; i < this.opts.consumers; i++) {
      const consumer = this.kafka.consumer({
        groupId: this.opts.groupId,
        minBytes: this.opts.fetchMinBytes,
        maxWaitTimeInMs: this.opts.fetchMaxWaitMs,
        sessionTimeout: this.opts.sessionTimeoutMs,
        heartbeatInterval: Math.max(100, Math.floor(this.opts.sessionTimeoutMs / 10)),
        retry,
      });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        const assigned = Object.values(e.payload.memberAssignment).reduce((n, ps) => n + ps.length, 0);
        this.opts.log.info({ member: i, partitions: assigned, assignment: e.payload.memberAssignment }, 'writer joined the consumer group');
      });
      await consumer.connect();
      await consumer.subscribe({ topic: this.physical(topic), fromBeginning: true });
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: true,
        partitionsConsumedConcurrently: Math.max(1, Math.ceil(partitions / this.opts.consumers)),
        eachBatch: (payload) => this.consumeBatch(payload, gate, handler),
      });
      members.push(consumer);
    }
    const subscription: Subscription = {
      stop: async () => {
        this.subscriptions.delete(subscription);
        // disconnect() lets the batch in flight finish and commits the offsets it resolved.
        gate.flushNow();
        await Promise.all(members.map((c) => c.disconnect()));
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /**
   * One fetched batch of one partition: decode, dead-letter what does not decode, hand the rest
   * to the handler, and only then resolve and commit the batch's offsets.
   */
  private async consumeBatch(payload: EachBatchPayload, gate: GroupCommit<T>, handler: BatchHandler<T>): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    if (batch.messages.length === 0) return;
    metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
    const decoded: { value: T; message: KafkaMessage }[] = [];
    for (const message of batch.messages) {
      try {
        decoded.push({ value: this.opts.codec.decode(message.value), message });
      } catch (e) {
        const reason = e instanceof UndecodableMessageError ? e.reason : `cannot decode: ${(e as Error).message}`;
        await this.deadLetter(batch.topic, batch.partition, message, reason, 'undecodable');
      }
    }
    if (!isRunning() || isStale()) return;
    if (decoded.length > 0) {
      try {
        await gate.add(decoded.map((d) => d.value));
      } catch (e) {
        if (!this.opts.isPermanentError(e)) {
          this.opts.log.warn({ err: e, topic: batch.topic, partition: batch.partition }, 'store write failed; batch will be retried');
          await new Promise((r) => setTimeout(r, 1_000));
          throw e;
        }
        await this.isolateRejected(batch.topic, batch.partition, decoded, handler, heartbeat);
      }
    }
    resolveOffset(batch.lastOffset());
    await heartbeat();
    await commitOffsetsIfNecessary();
  }

  /** Splits a batch the store rejected until the rejected messages are found; those are dead-lettered. */
  private async isolateRejected(
    topic: string,
    partition: number,
    items: { value: T; message: KafkaMessage }[],
    handler: BatchHandler<T>,
    heartbeat: () => Promise<void>,
  ): Promise<void> {
    if (items.length === 0) return;
    try {
      await handler(items.map((d) => d.value));
      return;
    } catch (e) {
      if (!this.opts.isPermanentError(e)) throw e;
      if (items.length === 1) {
        await this.deadLetter(topic, partition, items[0]!.message, `store rejected: ${(e as Error).message.slice(0, 500)}`, 'rejected');
        return;
      }
    }
    await heartbeat();
    const mid = Math.ceil(items.length / 2);
    await this.isolateRejected(topic, partition, items.slice(0, mid), handler, heartbeat);
    await this.isolateRejected(topic, partition, items.slice(mid), handler, heartbeat);
  }

  private async deadLetter(topic: string, partition: number, message: KafkaMessage, reason: string, kind: string): Promise<void> {
    this.opts.log.warn({ topic, partition, offset: message.offset, reason }, 'message dead-lettered');
    const headers: IHeaders = {
      ...(message.headers ?? {}),
      [DEAD_LETTER_HEADERS.reason]: reason,
      [DEAD_LETTER_HEADERS.topic]: topic,
      [DEAD_LETTER_HEADERS.partition]: String(partition),
      [DEAD_LETTER_HEADERS.offset]: message.offset,
    };
    // Same path as any publish: the offset is not committed unless the dead letter is durable.
    await this.connectProducer();
    await this.producer.send({
      topic: this.physical(this.opts.deadLetterTopic),
      acks: -1,
      messages: [{ key: message.key, value: message.value, headers }],
    });
    metrics.deadLettered.inc({ kind });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.probeAdmin.disconnect().catch(() => undefined);
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    while (this.sending) await this.sending;
    await this.producer.disconnect();
  }
}
