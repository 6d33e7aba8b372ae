import type { Config, Logger } from '@weft/core';
import type { Bus } from './bus';
import type { EnvelopeCodec } from './codec';
import { InProcessBus } from './in-process';
import { KafkaBus } from './kafka';
import { LogBus } from './log-bus';
import { join } from 'node:path';
import { TOPICS } from './messages';
import type { ReadYourWrites } from './read-your-writes';

/** A bus as a service sees it: the contract plus start-up and a health probe. */
export interface ServiceBus<T> extends Bus<T> {
  kind: 'inprocess' | 'kafka';
  start(): Promise<void>;
  health(): Promise<Record<string, unknown>>;
}

/** What the composition root gets for a process that uses the bus. */
export interface Transport<T> {
  bus: ServiceBus<T>;
  /** Where the bus acknowledges before storing (the ingest log): what reads wait on to see their writes. */
  readYourWrites?: ReadYourWrites;
  /** Ack-after-insert: the group-commit window learns of the admitted requests that will publish (the HTTP edge's count). */
  expectPublishesFrom?: (count: () => number) => void;
}

/**
 * The transport chosen by WEFT_BUS and WEFT_ACK_AFTER, carrying values of one kind (`codec`: how
 * they travel). The rest of the code sees only `Bus` (and the parts a composition root wires):
 * this is the one place where the all-in-one and the distributed modes differ.
 */
export function createTransport<T>(config: Config, log: Logger, codec: EnvelopeCodec<T>): Transport<T> {
  if (config.WEFT_BUS === 'kafka') {
    const topic = (name: string) => ({
      topic: name,
      partitions: config.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
    });
    const bus = new KafkaBus<T>({
      brokers: config
        .KAFKA_BROKERS!.split(',')
        .map((b) => b.trim())
        .filter(Boolean),
      clientId: config.KAFKA_CLIENT_ID,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      groupId: config.KAFKA_GROUP_ID,
      topics: [topic(TOPICS.callParts), topic(TOPICS.deadLetter)],
      deadLetterTopic: TOPICS.deadLetter,
      compression: config.KAFKA_COMPRESSION,
      codec,
      publishTimeoutMs: config.WEFT_PUBLISH_TIMEOUT_MS,
      maxPendingMessages: config.WEFT_BUS_MAX_PENDING,
      maxPendingBytes: config.WEFT_BUS_MAX_PENDING_BYTES,
      batchRows: config.WEFT_WRITER_BATCH_ROWS,
      flushMs: config.WEFT_WRITER_FLUSH_MS,
      fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      consumers: config.WEFT_WRITER_CONSUMERS,
      startupTimeoutMs: config.KAFKA_STARTUP_TIMEOUT_MS,
      maxWriterLagMs: config.WEFT_MAX_WRITER_LAG_MS,
      log,
    });
    return { bus: Object.assign(bus, { kind: 'kafka' as const }) };
  }
  if (config.WEFT_ACK_AFTER === 'log') {
    if (!codec.encodeMany || !codec.decodeMany) throw new Error('the local ingest log needs a codec with encodeMany and decodeMany');
    const logBus = new LogBus<T>({
      dir: join(config.WEFT_DATA_DIR, 'ingest-log'),
      codec: { encodeMany: codec.encodeMany.bind(codec), decodeMany: codec.decodeMany.bind(codec) },
      batchRows: config.WEFT_LOG_BATCH_ROWS,
      flushMs: config.WEFT_LOG_FLUSH_MS,
      maxPendingBytes: config.WEFT_BUS_MAX_PENDING_BYTES,
      fsync: config.WEFT_LOG_FSYNC === '1',
      log,
    });
    return {
      bus: Object.assign(logBus, {
        kind: 'inprocess' as const,
        start: async () => logBus.open(),
        health: async () => ({ bus: 'inprocess', ack: 'log' }),
      }),
      readYourWrites: logBus.readYourWrites,
    };
  }
  const bus = new InProcessBus<T>({
    maxBatch: config.WEFT_WRITER_BATCH_ROWS,
    lingerMs: config.WEFT_WRITER_FLUSH_MS,
    maxLingerMs: config.WEFT_WRITER_FLUSH_MAX_MS,
    maxPending: config.WEFT_BUS_MAX_PENDING,
    maxPendingBytes: config.WEFT_BUS_MAX_PENDING_BYTES,
    ...(codec.sizeOf ? { sizeOf: (v: T) => codec.sizeOf!(v) } : {}),
    publishTimeoutMs: config.WEFT_PUBLISH_TIMEOUT_MS,
  });
  return {
    bus: Object.assign(bus, {
      kind: 'inprocess' as const,
      start: async () => undefined,
      health: async () => ({ bus: 'inprocess' }),
    }),
    expectPublishesFrom: (count) => bus.expectPublishesFrom(count),
  };
}
