import { ingestLogConfig, kafkaConfig, publishStageConfig, writerConfig, type Config, type Logger } from '@weft/core';
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
  // Each component reads its own slice of the one configuration (libs/core config.ts).
  const publish = publishStageConfig.parse(config);
  const writer = writerConfig.parse(config);
  if (config.WEFT_BUS === 'kafka') {
    const kafka = kafkaConfig.parse(config);
    const topic = (name: string) => ({ topic: name, partitions: kafka.topicPartitions, replicationFactor: kafka.replicationFactor });
    const bus = new KafkaBus<T>({
      kafka,
      publish,
      writer,
      topics: [topic(TOPICS.callParts), topic(TOPICS.deadLetter)],
      deadLetterTopic: TOPICS.deadLetter,
      codec,
      log,
    });
    return { bus: Object.assign(bus, { kind: 'kafka' as const }) };
  }
  if (config.WEFT_ACK_AFTER === 'log') {
    if (!codec.encodeMany || !codec.decodeMany) throw new Error('the local ingest log needs a codec with encodeMany and decodeMany');
    const ingestLog = ingestLogConfig.parse(config);
    const logBus = new LogBus<T>({
      dir: join(config.WEFT_DATA_DIR, 'ingest-log'),
      codec: {
        encodeMany: codec.encodeMany.bind(codec),
        decodeMany: codec.decodeMany.bind(codec),
        ...(codec.scopeOfKey ? { scopeOfKey: codec.scopeOfKey.bind(codec) } : {}),
      },
      batchRows: ingestLog.maxBatchItems,
      flushMs: ingestLog.lingerMs,
      // Acknowledged once logged: no deadline, and no bound on messages (the bytes bound the backlog).
      maxPendingBytes: publish.maxPendingBytes,
      fsync: ingestLog.fsync,
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
    maxBatch: writer.maxBatchItems,
    lingerMs: writer.lingerMs,
    maxLingerMs: writer.maxLingerMs,
    maxPending: publish.maxPendingItems,
    maxPendingBytes: publish.maxPendingBytes,
    ...(codec.sizeOf ? { sizeOf: (v: T) => codec.sizeOf!(v) } : {}),
    publishTimeoutMs: publish.timeoutMs,
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
