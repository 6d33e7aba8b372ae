import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { metrics, type KafkaConfig, type Logger, type PublishStageConfig, type WriterConfig } from '@weft/core';
import { BusUnavailableError } from './bus';
import type { EnvelopeCodec } from './codec';
import { BatchingStage } from './batching-stage';
import { RETRY_FOREVER } from './kafka-client';
import { keyPartition } from './murmur2';
import type { BusMessage } from './messages';
import { WriterLag, type CommittedOffsets } from './writer-lag';

/**
 * The bus's publishing side: the batching stage with a lane per partition (one request per
 * partition at a time; concurrent publishes to a partition share it, so requests grow with
 * load; the pending bounds and the publish deadline), its sender one request to one partition's
 * leader with acks from all in-sync replicas; a publish is acknowledged once every partition it
 * touched acknowledged its part. Publishes are paced by the writers' lag (writer-lag.ts) before
 * the stage. The dead letters the consuming side writes go out through the same producer.
 */
export class KafkaPublisher<T> {
  private readonly producer: Producer;
  /** Publishes on their way: a lane per partition (`laneKey`), the records of one partition per send. */
  private readonly outgoing: BatchingStage<Message>;
  private readonly laneTopics = new Map<string, { topic: string; partition: number }>();
  private producerConnected: Promise<void> | null = null;
  private producerGeneration = 0;
  private readonly writerLag: WriterLag;
  private closed = false;

  constructor(
    kafka: Kafka,
    private readonly opts: {
      kafka: KafkaConfig;
      publish: PublishStageConfig;
      writer: WriterConfig;
      codec: EnvelopeCodec<T>;
      log: Logger;
      /** The writers' group's committed offsets, for the pacing by their lag. */
      fetchCommitted: (topics: string[]) => Promise<CommittedOffsets>;
    },
  ) {
    this.producer = kafka.producer({
      // Not kafkajs's idempotent mode: after an ambiguous failure it rewinds its sequence
      // numbers, and the next, different batch can be taken by the broker as a duplicate of
      // the one that was in fact written, then acknowledged without being stored. Retries may
      // write a message twice instead; the store folds replayed parts (SCHEMA.md).
      idempotent: false,
      // No cap per connection: each partition has one request in flight at most (its lane),
      // which keeps the order per key; the lanes led by one broker share its connection.
      retry: RETRY_FOREVER,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const maxLagMs = opts.writer.maxLagMs;
    this.writerLag = new WriterLag({
      maxLagMs,
      // A fifth of the bound: a refusal starts at most ~20 % past it.
      intervalMs: Math.min(250, Math.max(25, Math.floor(maxLagMs / 5))),
      fetchCommitted: opts.fetchCommitted,
      log: opts.log.child({ component: 'kafka' }),
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

  /** Set once the bus is closing: nothing more is sent. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Bytes handed to the stage and not yet acknowledged. */
  pendingBytes(): number {
    return this.outgoing.pending().bytes;
  }

  /** Why the writers are too far behind to take more now, else null (writer-lag.ts). */
  behind(): string | null {
    return this.writerLag.refused();
  }

  /**
   * A publish to a physical topic of `partitions` partitions: encoded now, checked against the
   * pending bounds, then paced and sent; resolves once Kafka acknowledged every record.
   */
  publish(physical: string, partitions: number, messages: BusMessage<T>[]): Promise<void> {
    const byPartition = this.encodeByPartition(partitions, messages);
    let bytes = 0;
    for (const records of byPartition.values()) for (const r of records) bytes += (r.value as Buffer).length + (r.key as string).length;
    this.outgoing.checkRoom(messages.length, bytes);
    // Returned, not awaited: this frame (and with it the messages, encoded now) is gone while Kafka answers.
    return this.admitAndSend(physical, byPartition, messages.length, bytes);
  }

  /** Publishes none of whose records was handed to Kafka get their 503 now: never sent, so never stored. */
  refuseQueued(reason: string): void {
    this.outgoing.refuseUnsent(() => new BusUnavailableError(`${reason}; not stored`, 5));
  }

  /** One record to a topic with acks from all in-sync replicas, outside the stage (a dead letter: its offset is committed only once it is durable). */
  async sendOne(topic: string, message: Message): Promise<void> {
    await this.connect();
    await this.producer.send({ topic, acks: -1, messages: [message] });
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

  /** Connects the producer (once; a failed connect is tried afresh by the next caller). */
  connect(): Promise<void> {
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
  private reconnect(generation: number): void {
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
      await this.connect();
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
      this.reconnect(generation);
      throw new BusUnavailableError(`kafka unavailable: ${(e as Error).message} (the parts were sent and may still be stored)`, 5);
    }
  }

  /** No more sends: publishes still pacing are refused when their turn comes; the writer-lag reads stop. */
  closing(): void {
    this.closed = true;
    this.writerLag.stop();
  }

  /** Lets the stage answer what it holds, then disconnects the producer. */
  async close(): Promise<void> {
    await this.outgoing.close();
    await this.producer.disconnect();
  }
}

const laneKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;
