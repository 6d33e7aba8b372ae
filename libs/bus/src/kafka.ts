import type { Kafka } from 'kafkajs';
import { metrics, type KafkaConfig, type Logger, type PublishStageConfig, type WriterConfig } from '@weft/core';
import type { BatchHandler, Bus, BusPressure, Subscription } from './bus';
import { BusUnavailableError } from './bus';
import type { EnvelopeCodec } from './codec';
import { BrokerProbe, KafkaTopics, type KafkaTopicSpec } from './kafka-admin';
import { kafkaClient } from './kafka-client';
import { KafkaConsumers } from './kafka-consumer';
import { KafkaDeadLetterReader } from './kafka-dead-letters';
import { KafkaPublisher } from './kafka-producer';
import { untilKafkaReady } from './kafka-startup';
import { useSynchronousGzip } from './kafka-gzip';
import type { BusMessage } from './messages';

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

// The same gzip bytes, in one synchronous call per record batch (kafka-gzip.ts).
useSynchronousGzip();

/**
 * The distributed bus on Apache Kafka (kafkajs), in three parts over one client: publishing
 * (kafka-producer.ts: the batching stage with a lane per partition, one request to one
 * partition's leader with acks from all in-sync replicas; a publish is acknowledged once every
 * partition it touched acknowledged its part; paced by the writers' lag), consuming
 * (kafka-consumer.ts: a consumer group, undecodable and refused values dead-lettered, offsets
 * committed only after the handler resolved — at-least-once), and the topics and brokers
 * (kafka-admin.ts: topics ensured at start, their names and partitions, the writers' committed
 * offsets, the probe that knows when Kafka is down). Why per partition and why not kafkajs's
 * idempotent mode: docs/distributed.md, "Acknowledged means durable" (both are paths on which
 * kafkajs acknowledges lost data).
 */
export class KafkaBus<T> implements Bus<T> {
  private readonly kafka: Kafka;
  private readonly topics: KafkaTopics;
  private readonly probe: BrokerProbe;
  private readonly publisher: KafkaPublisher<T>;
  private readonly consumers: KafkaConsumers<T>;
  private deadLetterReading: KafkaDeadLetterReader | null = null;

  constructor(private readonly opts: KafkaBusOptions<T>) {
    this.kafka = kafkaClient(opts.kafka, opts.log.child({ component: 'kafka' }));
    this.topics = new KafkaTopics(this.kafka, { kafka: opts.kafka, topics: opts.topics, log: opts.log });
    this.publisher = new KafkaPublisher<T>(this.kafka, {
      kafka: opts.kafka,
      publish: opts.publish,
      writer: opts.writer,
      codec: opts.codec,
      log: opts.log,
      fetchCommitted: (topics) => this.topics.fetchCommitted(topics),
    });
    this.probe = new BrokerProbe({
      kafka: opts.kafka,
      intervalMs: opts.probeIntervalMs ?? 1_000,
      timeoutMs: opts.probeTimeoutMs ?? 1_500,
      log: opts.log,
      onDown: (reason) => this.publisher.refuseQueued(reason),
    });
    this.consumers = new KafkaConsumers<T>(this.kafka, {
      kafka: opts.kafka,
      writer: opts.writer,
      codec: opts.codec,
      topics: this.topics,
      deadLetterTopic: opts.deadLetterTopic,
      sendOne: (topic, message) => this.publisher.sendOne(topic, message),
      log: opts.log,
    });
  }

  /**
   * Ensures the topics exist (existing ones are left untouched), waits until every partition
   * has a leader, and connects the producer; transient errors of a cluster still forming or
   * electing are retried until `startupTimeoutMs`.
   */
  async start(): Promise<void> {
    const wait = { deadlineMs: this.opts.kafka.startupTimeoutMs, log: this.opts.log };
    await untilKafkaReady(
      `creating topics ${this.topics.names().join(', ')} and waiting for their partition leaders on ${this.opts.kafka.brokers.join(',')}`,
      () => this.topics.ensure(),
      wait,
    );
    await untilKafkaReady('connecting the producer', () => this.publisher.connect(), wait);
    this.probe.start();
  }

  /** The dead-letter topic's records, for the admin endpoints (kafka-dead-letters.ts). */
  deadLetterReader(): KafkaDeadLetterReader {
    this.deadLetterReading ??= new KafkaDeadLetterReader(this.kafka, this.physical(this.opts.deadLetterTopic), this.opts.kafka.clientId);
    return this.deadLetterReading;
  }

  /** A topic's name as the code knows it, from its name on the cluster (null: not one of this deployment's). */
  logical(physical: string): string | null {
    return this.topics.logical(physical);
  }

  /** The bus's codec (what a dead letter's value is decoded with). */
  get codec(): EnvelopeCodec<T> {
    return this.opts.codec;
  }

  /** The Kafka topic behind a bus topic name. */
  physical(topic: string): string {
    return this.topics.physical(topic);
  }

  /** For /ready: the brokers answer a metadata request within the probe timeout (never hangs). */
  health(): Promise<Record<string, unknown>> {
    return this.probe.probe();
  }

  pressure(): BusPressure {
    return {
      pendingBytes: this.publisher.pendingBytes(),
      maxPendingBytes: this.opts.publish.maxPendingBytes,
      down: this.publisher.isClosed ? 'bus is shutting down' : this.probe.down,
      behind: this.publisher.behind(),
    };
  }

  async publish(topic: string, messages: BusMessage<T>[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.publisher.isClosed) throw new BusUnavailableError('bus is shutting down');
    const down = this.probe.down;
    if (down) {
      metrics.busRejected.inc({ reason: 'down' });
      throw new BusUnavailableError(`${down}; not stored`, 5);
    }
    const physical = this.physical(topic);
    const partitions = this.topics.partitionsOf(physical);
    if (!partitions) throw new BusUnavailableError(`topic ${physical} is not ready (bus not started)`);
    return this.publisher.publish(physical, partitions, messages);
  }

  subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription> {
    return this.consumers.subscribe(topic, handler);
  }

  async close(): Promise<void> {
    this.publisher.closing();
    await this.probe.stop();
    await this.topics.close();
    await this.consumers.stop();
    await this.publisher.close();
  }
}
