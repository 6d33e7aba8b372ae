import { Kafka, logLevel as KafkaLogLevel, type Admin } from 'kafkajs';
import type { KafkaConfig, Logger } from '@weft/core';
import type { CommittedOffsets } from './writer-lag';

export interface KafkaTopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
}

/**
 * The bus's topics on the cluster: their names there (KAFKA_TOPIC_PREFIX), their creation at
 * start and their partition counts (messages are placed by key hash), and the writers' group's
 * committed offsets (what the pacing by writer lag reads, writer-lag.ts).
 */
export class KafkaTopics {
  /** Partition count per physical topic, learnt at start. */
  private readonly partitionCounts = new Map<string, number>();
  /** Reads the writers' committed offsets for the pacing by writer lag. */
  private readonly lagAdmin: Admin;

  constructor(
    private readonly kafka: Kafka,
    private readonly opts: { kafka: KafkaConfig; topics: KafkaTopicSpec[]; log: Logger },
  ) {
    // A few quick retries (a coordinator just elected, metadata not loaded yet); a read still
    // under way when the next tick comes is simply waited for (writer-lag.ts).
    this.lagAdmin = kafka.admin({ retry: { retries: 3, initialRetryTime: 50, maxRetryTime: 500 } });
  }

  /** The Kafka topic behind a bus topic name. */
  physical(topic: string): string {
    return this.opts.kafka.topicPrefix + topic;
  }

  /** A topic's name as the code knows it, from its name on the cluster (null: not one of this deployment's). */
  logical(physical: string): string | null {
    return physical.startsWith(this.opts.kafka.topicPrefix) ? physical.slice(this.opts.kafka.topicPrefix.length) : null;
  }

  /** The physical names of the topics ensured at start. */
  names(): string[] {
    return this.opts.topics.map((t) => this.physical(t.topic));
  }

  /** A physical topic's partition count, once start() learnt it. */
  partitionsOf(physical: string): number | undefined {
    return this.partitionCounts.get(physical);
  }

  /** The partitions a bus topic is created with (1 for a topic not ensured at start). */
  specifiedPartitions(topic: string): number {
    return this.opts.topics.find((t) => t.topic === topic)?.partitions ?? 1;
  }

  /** Creates the missing topics (existing ones are left untouched) and learns their partitions; fails while a partition has no leader. */
  async ensure(): Promise<void> {
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

  /** The writers' group's committed offsets (next offset to write per partition; -1 when none yet). */
  async fetchCommitted(topics: string[]): Promise<CommittedOffsets> {
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

  async close(): Promise<void> {
    await this.lagAdmin.disconnect().catch(() => undefined);
  }
}

/**
 * Whether the brokers answer: a metadata request on a client with no retries (the bus's own
 * retries for ever, which would hang a probe), bounded by the probe timeout, every interval and
 * for /ready. Two failures in a row make the bus "known down" (`down`: publishes refused at
 * once, `onDown` told); one answer makes it up again.
 */
export class BrokerProbe {
  private downReason: string | null = null;
  private probing: Promise<Record<string, unknown>> | null = null;
  /** Probes failed in a row; one failure alone (a connection to a broker just lost) is not "down". */
  private probeFailures = 0;
  private probeTimer: NodeJS.Timeout | null = null;
  private readonly probeAdmin: Admin;
  private readonly timeoutMs: number;

  constructor(
    private readonly opts: {
      kafka: KafkaConfig;
      /** How often the brokers are probed; 0 = never (only health()). */
      intervalMs: number;
      /** A probe not answered within this many ms counts as a failure. */
      timeoutMs: number;
      log: Logger;
      /** Called at each probe failing while down: what is queued and was never sent gets its refusal. */
      onDown: (reason: string) => void;
    },
  ) {
    this.timeoutMs = opts.timeoutMs;
    const noRetry = new Kafka({
      clientId: `${opts.kafka.clientId}-probe`,
      brokers: opts.kafka.brokers,
      connectionTimeout: this.timeoutMs,
      requestTimeout: this.timeoutMs,
      retry: { retries: 0 },
      logLevel: KafkaLogLevel.NOTHING,
    });
    this.probeAdmin = noRetry.admin({ retry: { retries: 0 } });
  }

  /** Set while the last probes of the brokers failed: why. */
  get down(): string | null {
    return this.downReason;
  }

  /** Probes every interval from now on (none when the interval is 0). */
  start(): void {
    const every = this.opts.intervalMs;
    if (every > 0) {
      this.probeTimer = setInterval(() => void this.probe().catch(() => undefined), every);
      this.probeTimer.unref();
    }
  }

  /**
   * One metadata request on the no-retry client, bounded by the probe timeout; its outcome is
   * the bus's "known down" state. Concurrent callers share the probe in flight.
   */
  probe(): Promise<Record<string, unknown>> {
    if (this.probing) return this.probing;
    const timeoutMs = this.timeoutMs;
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
          if (this.downReason) this.opts.log.info({ was: this.downReason }, 'kafka reachable again; accepting writes');
          this.downReason = null;
          this.probeFailures = 0;
          return ok;
        },
        (e: unknown) => {
          const reason = `kafka unreachable: ${(e as Error).message}`;
          if (++this.probeFailures >= 2) {
            if (!this.downReason) this.opts.log.warn({ reason }, 'kafka down; refusing writes until it answers');
            this.downReason = reason;
            this.opts.onDown(reason);
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

  async stop(): Promise<void> {
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.probeAdmin.disconnect().catch(() => undefined);
  }
}
