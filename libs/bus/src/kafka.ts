import {
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel as KafkaLogLevel,
  type Consumer,
  type EachBatchPayload,
  type IHeaders,
  type KafkaMessage,
  type Message,
  type Producer,
} from 'kafkajs';
import { metrics, type KafkaConfig, type Logger, type PublishStageConfig, type WriterConfig } from '@weft/core';
import type { BatchHandler, BatchOutcome, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError } from './bus';
import { UndecodableMessageError, type EnvelopeCodec } from './codec';
import { BatchingStage } from './batching-stage';
import { GroupCommit } from './group-commit';
import { KafkaDeadLetterReader } from './kafka-dead-letters';
import { untilKafkaReady } from './kafka-startup';
import { keyPartition } from './murmur2';
import { useSynchronousGzip } from './kafka-gzip';
import type { BusMessage } from './messages';
import { WriterLag, type CommittedOffsets } from './writer-lag';

export interface KafkaTopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
}

export interface KafkaBusOptions<T> {
  /** The client, the topics' prefix, the writers' group, fetches and start-up (KAFKA_*). */
  kafka: KafkaConfig;
  /** The producer's stage: pending bounds (messages / bytes in flight; past them, 503) and the publish deadline. */
  publish: PublishStageConfig;
  /**
   * The consumer's group commit (rows per handler call, how long partitions' batches wait to
   * join one), its members per process, and the publishing side's pacing by the writers' lag:
   * publishes wait while the backlog this process acknowledged would take the writers longer
   * than `maxLagMs` at their measured pace, refused (503) past four times it; 0 = none (writer-lag.ts).
   */
  writer: WriterConfig;
  /** Topics ensured at start (created when missing; existing ones are left as they are). */
  topics: KafkaTopicSpec[];
  deadLetterTopic: string;
  codec: EnvelopeCodec<T>;
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

// The same gzip bytes, in one synchronous call per record batch (kafka-gzip.ts).
useSynchronousGzip();

const retry = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2_000 };

/**
 * The distributed bus on Apache Kafka (kafkajs). Publishing: the batching stage with a lane per
 * partition (one request per partition at a time; concurrent publishes to a partition share
 * it, so requests grow with load; the pending bounds and the publish deadline), its sender one
 * request to one partition's leader with acks from all in-sync replicas; a publish is
 * acknowledged once every partition it touched acknowledged its part. Why per partition and why not kafkajs's idempotent mode: docs/distributed.md,
 * "Acknowledged means durable" (both are paths on which kafkajs acknowledges lost data). Consuming: a
 * consumer group; each fetched batch is decoded (undecodable → dead-letter topic), handed to
 * the handler (grouped across partitions by size and time), and its offsets are committed
 * only after the handler resolved — at-least-once.
 */
export class KafkaBus<T> implements Bus<T> {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  /** Publishes on their way: a lane per partition (`laneKey`), the records of one partition per send. */
  private readonly outgoing: BatchingStage<Message>;
  private readonly laneTopics = new Map<string, { topic: string; partition: number }>();
  /** Partition count per physical topic, learnt at start; messages are placed by key hash. */
  private readonly partitionCounts = new Map<string, number>();
  private producerConnected: Promise<void> | null = null;
  private producerGeneration = 0;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /** Set while the last probe of the brokers failed: publishes are refused at once. */
  private down: string | null = null;
  private probing: Promise<Record<string, unknown>> | null = null;
  /** Probes failed in a row; one failure alone (a connection to a broker just lost) is not "down". */
  private probeFailures = 0;
  private probeTimer: NodeJS.Timeout | null = null;
  /** A client with no retries for probes only: the main one retries for ever, which would hang them. */
  private readonly probeAdmin;
  /** Reads the writers' committed offsets for the pacing by writer lag. */
  private readonly lagAdmin;
  private readonly writerLag: WriterLag;

  constructor(private readonly opts: KafkaBusOptions<T>) {
    const log = opts.log.child({ component: 'kafka' });
    this.kafka = new Kafka({
      clientId: opts.kafka.clientId,
      brokers: opts.kafka.brokers,
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
      // Not kafkajs's idempotent mode: after an ambiguous failure it rewinds its sequence
      // numbers, and the next, different batch can be taken by the broker as a duplicate of
      // the one that was in fact written, then acknowledged without being stored. Retries may
      // write a message twice instead; the store folds replayed parts (SCHEMA.md).
      idempotent: false,
      // No cap per connection: each partition has one request in flight at most (its lane),
      // which keeps the order per key; the lanes led by one broker share its connection.
      retry,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const probeTimeout = opts.probeTimeoutMs ?? 1_500;
    const noRetry = new Kafka({
      clientId: `${opts.kafka.clientId}-probe`,
      brokers: opts.kafka.brokers,
      connectionTimeout: probeTimeout,
      requestTimeout: probeTimeout,
      retry: { retries: 0 },
      logLevel: KafkaLogLevel.NOTHING,
    });
    this.probeAdmin = noRetry.admin({ retry: { retries: 0 } });
    // A few quick retries (a coordinator just elected, metadata not loaded yet); a read still
    // under way when the next tick comes is simply waited for (writer-lag.ts).
    this.lagAdmin = this.kafka.admin({ retry: { retries: 3, initialRetryTime: 50, maxRetryTime: 500 } });
    const maxLagMs = opts.writer.maxLagMs;
    this.writerLag = new WriterLag({
      maxLagMs,
      // A fifth of the bound: a refusal starts at most ~20 % past it.
      intervalMs: Math.min(250, Math.max(25, Math.floor(maxLagMs / 5))),
      fetchCommitted: (topics) => this.fetchCommitted(topics),
      log,
    });
    const timeoutMs = opts.publish.timeoutMs;
    this.outgoing = new BatchingStage<Message>({
      send: (lane, records) => this.sendRecords(lane, records),
      transport: 'kafka-producer',
      laneLabel: (lane) => lane.replace('\u0000', '/'),
      // Everything queued for a partition goes in its next request: no linger, no count bound.
      maxBatchItems: Infinity,
      lingerMs: 0,
      maxPendingItems: opts.publish.maxPendingItems,
      maxPendingBytes: opts.publish.maxPendingBytes,
      timeoutMs,
      onPending: (items) => metrics.busPending.set(items),
      errors: {
        full: (items, bytes) => new BusUnavailableError(`ingest queue full (${items} messages, ${bytes} bytes in flight); not stored`, 1),
        // Not sent yet (its partition's request in flight is stuck): its bytes are let go of now,
        // so a long outage cannot pile up unanswered messages behind the in-flight bound.
        // `sent`: handed to Kafka already, the broker may still append it (the producer retries).
        timedOut: (sent) =>
          new BusUnavailableError(
            !sent
              ? `kafka did not acknowledge within ${timeoutMs} ms; not stored`
              : `kafka did not acknowledge within ${timeoutMs} ms; the parts were sent and may still be stored`,
            5,
          ),
        failed: (e) => e as Error,
      },
    });
  }

  /** The writers' group's committed offsets (next offset to write per partition; -1 when none yet). */
  private async fetchCommitted(topics: string[]): Promise<CommittedOffsets> {
    try {
      await this.lagAdmin.connect();
      const answer = await this.lagAdmin.fetchOffsets({ groupId: this.opts.kafka.groupId, topics });
      return new Map(answer.map((t) => [t.topic, new Map(t.partitions.map((p) => [p.partition, Number(p.offset)]))]));
    } catch (e) {
      // A broken connection would keep later reads failing: start the next one afresh.
      await this.lagAdmin.disconnect().catch(() => undefined);
      throw e;
    }
  }

  /**
   * Ensures the topics exist (existing ones are left untouched), waits until every partition
   * has a leader, and connects the producer; transient errors of a cluster still forming or
   * electing are retried until `startupTimeoutMs`.
   */
  async start(): Promise<void> {
    const wait = { deadlineMs: this.opts.kafka.startupTimeoutMs, log: this.opts.log };
    const names = this.opts.topics.map((t) => this.physical(t.topic));
    await untilKafkaReady(
      `creating topics ${names.join(', ')} and waiting for their partition leaders on ${this.opts.kafka.brokers.join(',')}`,
      () => this.ensureTopics(),
      wait,
    );
    await untilKafkaReady('connecting the producer', () => this.connectProducer(), wait);
    const every = this.opts.probeIntervalMs ?? 1_000;
    if (every > 0) {
      this.probeTimer = setInterval(() => void this.probe().catch(() => undefined), every);
      this.probeTimer.unref();
    }
  }

  private async ensureTopics(): Promise<void> {
    const admin = this.kafka.admin({ retry: { retries: 2 } });
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const missing = this.opts.topics.filter((t) => !existing.has(this.physical(t.topic)));
      if (missing.length > 0) {
        // Another process may create them at the same moment; createTopics then returns false.
        await admin.createTopics({
          topics: missing.map((t) => ({
            topic: this.physical(t.topic),
            numPartitions: t.partitions,
            replicationFactor: t.replicationFactor,
          })),
        });
        this.opts.log.info({ topics: missing.map((t) => this.physical(t.topic)) }, 'kafka topics created');
      }
      const { topics } = await admin.fetchTopicMetadata({ topics: this.opts.topics.map((t) => this.physical(t.topic)) });
      for (const t of topics) {
        const leaderless = t.partitions.filter((p) => p.leader < 0).map((p) => p.partitionId);
        if (t.partitions.length === 0 || leaderless.length > 0) {
          throw new Error(`topic ${t.name}: partitions without a leader yet (${leaderless.join(',') || 'none listed'})`);
        }
        this.partitionCounts.set(t.name, t.partitions.length);
      }
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /** The Kafka topic behind a bus topic name. */
  /** The dead-letter topic's records, for the admin endpoints (kafka-dead-letters.ts). */
  deadLetterReader(): KafkaDeadLetterReader {
    this.deadLetterReading ??= new KafkaDeadLetterReader(this.kafka, this.physical(this.opts.deadLetterTopic), this.opts.kafka.clientId);
    return this.deadLetterReading;
  }
  private deadLetterReading: KafkaDeadLetterReader | null = null;

  /** A topic's name as the code knows it, from its name on the cluster (null: not one of this deployment's). */
  logical(physical: string): string | null {
    return physical.startsWith(this.opts.kafka.topicPrefix) ? physical.slice(this.opts.kafka.topicPrefix.length) : null;
  }

  /** The bus's codec (what a dead letter's value is decoded with). */
  get codec(): EnvelopeCodec<T> {
    return this.opts.codec;
  }

  physical(topic: string): string {
    return this.opts.kafka.topicPrefix + topic;
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
          this.probeFailures = 0;
          return ok;
        },
        (e: unknown) => {
          const reason = `kafka unreachable: ${(e as Error).message}`;
          if (++this.probeFailures >= 2) {
            if (!this.down) this.opts.log.warn({ reason }, 'kafka down; refusing writes until it answers');
            this.down = reason;
            this.refuseQueued(reason);
          }
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

  /** Publishes none of whose records was handed to Kafka get their 503 now: never sent, so never stored. */
  private refuseQueued(reason: string): void {
    this.outgoing.refuseUnsent(() => new BusUnavailableError(`${reason}; not stored`, 5));
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.outgoing.pending().bytes,
      maxPendingBytes: this.opts.publish.maxPendingBytes,
      down: this.closed ? 'bus is shutting down' : this.down,
      behind: this.writerLag.refused(),
    };
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.closed) throw new BusUnavailableError('bus is shutting down');
    if (this.down) {
      metrics.busRejected.inc({ reason: 'down' });
      throw new BusUnavailableError(`${this.down}; not stored`, 5);
    }
    const physical = this.physical(topic);
    const partitions = this.partitionCounts.get(physical);
    if (!partitions) throw new BusUnavailableError(`topic ${physical} is not ready (bus not started)`);
    const byPartition = this.encodeByPartition(partitions, messages);
    let bytes = 0;
    for (const records of byPartition.values()) for (const r of records) bytes += (r.value as Buffer).length + (r.key as string).length;
    this.outgoing.checkRoom(messages.length, bytes);
    // Returned, not awaited: this frame (and with it the messages, encoded now) is gone while Kafka answers.
    return this.admitAndSend(physical, byPartition, messages.length, bytes);
  }

  /** Waits for the writers' pace, then sends; the publish's bytes count as in flight until Kafka answers. */
  private async admitAndSend(physical: string, byPartition: Map<number, Message[]>, count: number, bytes: number): Promise<void> {
    // Paced by the writers: wait while they are more than WEFT_MAX_WRITER_LAG_MS behind, refused past four times it (writer-lag.ts).
    const paced = this.writerLag.admit(bytes);
    if (paced) {
      try {
        await paced;
      } catch (e) {
        metrics.busRejected.inc({ reason: 'writer_lag' });
        throw e;
      }
    }
    try {
      if (this.closed) throw new BusUnavailableError('bus is shutting down');
      await this.send(physical, byPartition, count, bytes);
    } finally {
      this.writerLag.settle(bytes);
    }
  }

  /** Hands a publish's records to their partitions' lanes; resolves once Kafka acknowledged every one. */
  private async send(physical: string, byPartition: Map<number, Message[]>, count: number, bytes: number): Promise<void> {
    const started = performance.now();
    const parts = [...byPartition].map(([partition, records]) => ({ lane: this.laneOf(physical, partition), items: records }));
    // Counted until answered; a timed-out publish has left the queues (or rides a send in flight).
    await this.outgoing.offerParts(parts, bytes, { admitted: true, items: count });
    metrics.producerLatency.observe((performance.now() - started) / 1000);
  }

  /**
   * A publish's records, by partition: its values for one partition as one record when the
   * codec joins values (encodeMany; keyed by the first value's key, which hashes to that
   * partition like every other key in it), else a record per value.
   */
  private encodeByPartition(partitions: number, messages: BusMessage<T>[]): Map<number, Message[]> {
    const codec = this.opts.codec;
    const grouped = new Map<number, BusMessage<T>[]>();
    // A call's start and end share a key: hash each key once per publish.
    const seen = new Map<string, number>();
    for (const m of messages) {
      let partition = seen.get(m.key);
      if (partition === undefined) seen.set(m.key, (partition = keyPartition(m.key, partitions)));
      let list = grouped.get(partition);
      if (!list) grouped.set(partition, (list = []));
      list.push(m);
    }
    const records = new Map<number, Message[]>();
    for (const [partition, list] of grouped) {
      records.set(
        partition,
        codec.encodeMany && list.length > 1
          ? [{ key: list[0]!.key, value: codec.encodeMany(list.map((m) => m.value)), partition }]
          : list.map((m) => ({ key: m.key, value: codec.encode(m.value), partition })),
      );
    }
    return records;
  }

  private laneOf(topic: string, partition: number): string {
    const key = laneKey(topic, partition);
    if (!this.laneTopics.has(key)) this.laneTopics.set(key, { topic, partition });
    return key;
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

  /**
   * After a failed send the client may be left disconnected: the next send reconnects first.
   * Once per connection: sends that fail because this reconnect cut them off do not start another.
   */
  private reconnectProducer(generation: number): void {
    if (generation !== this.producerGeneration) return;
    this.producerGeneration++;
    this.producerConnected = this.producer
      .disconnect()
      .catch(() => undefined)
      .then(() => this.producer.connect())
      .catch((e) => {
        this.producerConnected = null;
        throw e;
      });
    this.producerConnected.catch(() => undefined);
  }

  /**
   * The stage's sender: what is queued for one partition, as one request. Each request carries
   * one partition, so it goes to one leader: kafkajs's multi-leader send can report success for
   * messages it never sent when a partition's leader moves during its retries.
   */
  private async sendRecords(lane: string, messages: Message[]): Promise<void> {
    const { topic, partition } = this.laneTopics.get(lane)!;
    const generation = this.producerGeneration;
    try {
      await this.connectProducer();
      const sent = await this.producer.send({
        topic,
        messages,
        acks: -1,
        compression: this.opts.kafka.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      });
      const at = sent.find((r) => r.partition === partition);
      if (at && this.writerLag.enabled) {
        let bytes = 0;
        for (const m of messages) bytes += (m.value as Buffer).length;
        this.writerLag.acknowledged(topic, partition, Number(at.baseOffset), messages.length, bytes);
      }
    } catch (e) {
      this.opts.log.warn({ err: e, topic, partition }, 'kafka send failed');
      metrics.busRejected.inc({ reason: 'error' });
      this.reconnectProducer(generation);
      throw new BusUnavailableError(`kafka unavailable: ${(e as Error).message} (the parts were sent and may still be stored)`, 5);
    }
  }

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    const members: Consumer[] = [];
    const gate = new GroupCommit<T>({
      transport: 'kafka-consumer',
      maxItems: this.opts.writer.maxBatchItems,
      lingerMs: this.opts.writer.lingerMs,
      handle: handler,
    });
    const partitions = this.opts.topics.find((t) => t.topic === topic)?.partitions ?? 1;
    const lag = new LagSeries();
    for (let i = 0; i < this.opts.writer.consumers; i++) {
      const consumer = this.kafka.consumer({
        groupId: this.opts.kafka.groupId,
        minBytes: this.opts.kafka.fetchMinBytes,
        maxWaitTimeInMs: this.opts.kafka.fetchMaxWaitMs,
        sessionTimeout: this.opts.kafka.sessionTimeoutMs,
        heartbeatInterval: Math.max(100, Math.floor(this.opts.kafka.sessionTimeoutMs / 10)),
        retry,
      });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        const assigned = Object.values(e.payload.memberAssignment).reduce((n, ps) => n + ps.length, 0);
        this.opts.log.info({ member: i, partitions: assigned, assignment: e.payload.memberAssignment }, 'writer joined the consumer group');
        lag.assign(i, e.payload.memberAssignment);
      });
      await untilKafkaReady(
        `joining consumer group ${this.opts.kafka.groupId} on ${this.physical(topic)}`,
        async () => {
          await consumer.connect();
          await consumer.subscribe({ topic: this.physical(topic), fromBeginning: true });
        },
        { deadlineMs: this.opts.kafka.startupTimeoutMs, log: this.opts.log },
      );
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: true,
        partitionsConsumedConcurrently: Math.max(1, Math.ceil(partitions / this.opts.writer.consumers)),
        eachBatch: (payload) => this.consumeBatch(payload, gate, lag),
      });
      members.push(consumer);
    }
    const subscription: Subscription = {
      stop: async () => {
        this.subscriptions.delete(subscription);
        lag.clear();
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
   * to the handler (joined with other partitions' batches), dead-letter what the handler
   * rejected, and only then resolve and commit the batch's offsets. A handler that throws gets
   * the batch again (nothing committed).
   */
  private async consumeBatch(payload: EachBatchPayload, gate: GroupCommit<T>, lag: LagSeries): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    if (batch.messages.length === 0) return;
    // Behind = not yet written: from this batch's first message to the high watermark while
    // the batch is being inserted, then what is left after it.
    lag.set(batch.topic, batch.partition, Number(batch.offsetLagLow()));
    const codec = this.opts.codec;
    // Values in batch order; `joined`: the record carries other values too (codec.encodeMany).
    const decoded: { value: T; message: KafkaMessage; joined: boolean }[] = [];
    for (const message of batch.messages) {
      try {
        if (!codec.decodeMany) decoded.push({ value: codec.decode(message.value), message, joined: false });
        else {
          const values = codec.decodeMany(message.value);
          for (const value of values) decoded.push({ value, message, joined: values.length > 1 });
        }
      } catch (e) {
        const reason = e instanceof UndecodableMessageError ? e.reason : `cannot decode: ${(e as Error).message}`;
        await this.deadLetter(batch.topic, batch.partition, message, reason, 'undecodable');
      }
    }
    if (!isRunning() || isStale()) return;
    if (decoded.length > 0) {
      let outcome: BatchOutcome;
      try {
        outcome = await gate.add(decoded.map((d) => d.value));
      } catch (e) {
        this.opts.log.warn({ err: e, topic: batch.topic, partition: batch.partition }, 'store write failed; batch will be retried');
        await new Promise((r) => setTimeout(r, 1_000));
        throw e;
      }
      for (const r of outcome.rejected) {
        const d = decoded[r.index];
        // A value refused out of a joined record is dead-lettered alone: the record's other values are stored.
        if (d)
          await this.deadLetter(
            batch.topic,
            batch.partition,
            d.message,
            `store rejected: ${r.reason.slice(0, 500)}`,
            'rejected',
            d.joined ? codec.encode(d.value) : undefined,
          );
      }
    }
    resolveOffset(batch.lastOffset());
    lag.set(batch.topic, batch.partition, Number(batch.offsetLag()));
    await heartbeat();
    await commitOffsetsIfNecessary();
  }

  /** Dead-letters a record (or, `value` given, one value of it) with why and where it came from. */
  private async deadLetter(
    topic: string,
    partition: number,
    message: KafkaMessage,
    reason: string,
    kind: string,
    value: Buffer | null = message.value,
  ): Promise<void> {
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
      messages: [{ key: message.key, value, headers }],
    });
    metrics.deadLettered.inc({ kind });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.writerLag.stop();
    await this.probeAdmin.disconnect().catch(() => undefined);
    await this.lagAdmin.disconnect().catch(() => undefined);
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.outgoing.close();
    await this.producer.disconnect();
  }
}

const laneKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * weft_consumer_lag_messages of one subscription: a series per partition this process holds,
 * and only those. A partition that moved to another writer in a rebalance (one died, one was
 * added) leaves this process's /metrics, so that the group's lag per partition is the sum over
 * its writers' series, with no stale value of a partition this process no longer reads.
 */
class LagSeries {
  private readonly held = new Map<number, Set<string>>();
  private readonly reported = new Set<string>();

  assign(member: number, assignment: Record<string, number[]>): void {
    this.held.set(member, new Set(Object.entries(assignment).flatMap(([topic, ps]) => ps.map((p) => `${topic}\t${p}`))));
    const holds = (key: string) => [...this.held.values()].some((s) => s.has(key));
    for (const key of [...this.reported]) if (!holds(key)) this.drop(key);
  }

  set(topic: string, partition: number, value: number): void {
    const key = `${topic}\t${partition}`;
    this.reported.add(key);
    metrics.consumerLag.set({ topic, partition: String(partition) }, value);
  }

  clear(): void {
    for (const key of [...this.reported]) this.drop(key);
  }

  private drop(key: string): void {
    const [topic, partition] = key.split('\t') as [string, string];
    metrics.consumerLag.remove({ topic, partition });
    this.reported.delete(key);
  }
}
