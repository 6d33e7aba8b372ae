import type { Consumer, EachBatchPayload, IHeaders, Kafka, KafkaMessage, Message } from 'kafkajs';
import { metrics, type KafkaConfig, type Logger, type WriterConfig } from '@weft/core';
import type { BatchHandler, BatchOutcome, Subscription } from './bus';
import { UndecodableMessageError, type EnvelopeCodec } from './codec';
import { GroupCommit } from './group-commit';
import type { KafkaTopics } from './kafka-admin';
import { RETRY_FOREVER } from './kafka-client';
import { untilKafkaReady } from './kafka-startup';

/** Headers of a dead-lettered message: why, and where it came from. The value is the original bytes. */
export const DEAD_LETTER_HEADERS = {
  reason: 'weft-dead-letter-reason',
  topic: 'weft-origin-topic',
  partition: 'weft-origin-partition',
  offset: 'weft-origin-offset',
} as const;

/**
 * The bus's consuming side: a consumer group (WEFT_WRITER_CONSUMERS members per process); each
 * fetched batch is decoded (undecodable → dead-letter topic), handed to the handler (grouped
 * across partitions by size and time), and its offsets are committed only after the handler
 * resolved — at-least-once. What the handler refused for good is dead-lettered.
 */
export class KafkaConsumers<T> {
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly kafka: Kafka,
    private readonly opts: {
      kafka: KafkaConfig;
      writer: WriterConfig;
      codec: EnvelopeCodec<T>;
      topics: KafkaTopics;
      deadLetterTopic: string;
      /** Sends one record durably (acks from all in-sync replicas): the producer's. */
      sendOne: (topic: string, message: Message) => Promise<void>;
      log: Logger;
    },
  ) {}

  async subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    const members: Consumer[] = [];
    const gate = new GroupCommit<T>({
      transport: 'kafka-consumer',
      maxItems: this.opts.writer.maxBatchItems,
      lingerMs: this.opts.writer.lingerMs,
      handle: handler,
    });
    const partitions = this.opts.topics.specifiedPartitions(topic);
    const physical = this.opts.topics.physical(topic);
    const lag = new LagSeries();
    for (let i = 0; i < this.opts.writer.consumers; i++) {
      const consumer = this.kafka.consumer({
        groupId: this.opts.kafka.groupId,
        minBytes: this.opts.kafka.fetchMinBytes,
        maxWaitTimeInMs: this.opts.kafka.fetchMaxWaitMs,
        sessionTimeout: this.opts.kafka.sessionTimeoutMs,
        heartbeatInterval: Math.max(100, Math.floor(this.opts.kafka.sessionTimeoutMs / 10)),
        retry: RETRY_FOREVER,
      });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        const assigned = Object.values(e.payload.memberAssignment).reduce((n, ps) => n + ps.length, 0);
        this.opts.log.info({ member: i, partitions: assigned, assignment: e.payload.memberAssignment }, 'writer joined the consumer group');
        lag.assign(i, e.payload.memberAssignment);
      });
      await untilKafkaReady(
        `joining consumer group ${this.opts.kafka.groupId} on ${physical}`,
        async () => {
          await consumer.connect();
          await consumer.subscribe({ topic: physical, fromBeginning: true });
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

  /** Stops every subscription (each after its batch in flight). */
  async stop(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
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
    // Acknowledged as any publish: the offset is not committed unless the dead letter is durable.
    await this.opts.sendOne(this.opts.topics.physical(this.opts.deadLetterTopic), { key: message.key, value, headers });
    metrics.deadLettered.inc({ kind });
  }
}

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
