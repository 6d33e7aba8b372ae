import type { Config, Logger } from '@weft/core';
import { isRowRejection } from '@weft/store';
import type { Bus } from './bus';
import { callPartCodec } from './codec';
import { InProcessBus } from './in-process';
import { KafkaBus } from './kafka';
import { TOPICS, type CallPartEnvelope } from './messages';

/** A bus as a service sees it: the contract plus start-up and a health probe. */
export interface ServiceBus extends Bus<CallPartEnvelope> {
  kind: 'inprocess' | 'kafka';
  start(): Promise<void>;
  health(): Promise<Record<string, unknown>>;
}

/**
 * The call-parts bus chosen by WEFT_BUS. The rest of the code sees only `Bus`: this is the one
 * place where the all-in-one and the distributed modes differ.
 */
export function createBus(config: Config, log: Logger): ServiceBus {
  if (config.WEFT_BUS === 'kafka') {
    const topic = (name: string) => ({
      topic: name,
      partitions: config.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: config.KAFKA_REPLICATION_FACTOR,
    });
    const bus = new KafkaBus<CallPartEnvelope>({
      brokers: config.KAFKA_BROKERS!.split(',').map((b) => b.trim()).filter(Boolean),
      clientId: config.KAFKA_CLIENT_ID,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      groupId: config.KAFKA_GROUP_ID,
      topics: [topic(TOPICS.callParts), topic(TOPICS.deadLetter)],
      deadLetterTopic: TOPICS.deadLetter,
      compression: config.KAFKA_COMPRESSION,
      codec: callPartCodec,
      publishTimeoutMs: config.WEFT_PUBLISH_TIMEOUT_MS,
      maxPendingMessages: config.WEFT_BUS_MAX_PENDING,
      maxPendingBytes: config.WEFT_BUS_MAX_PENDING_BYTES,
      batchRows: config.WEFT_WRITER_BATCH_ROWS,
      flushMs: config.WEFT_WRITER_FLUSH_MS,
      fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      consumers: config.WEFT_WRITER_CONSUMERS,
      isPermanentError: isRowRejection,
      startupTimeoutMs: config.KAFKA_STARTUP_TIMEOUT_MS,
      log,
    });
    return Object.assign(bus, { kind: 'kafka' as const });
  }
  const bus = new InProcessBus<CallPartEnvelope>({
    maxBatch: config.WEFT_WRITER_BATCH_ROWS,
    lingerMs: config.WEFT_WRITER_FLUSH_MS,
    maxPending: config.WEFT_BUS_MAX_PENDING,
    maxPendingBytes: config.WEFT_BUS_MAX_PENDING_BYTES,
    sizeOf: envelopeBytes,
    publishTimeoutMs: config.WEFT_PUBLISH_TIMEOUT_MS,
  });
  return Object.assign(bus, {
    kind: 'inprocess' as const,
    start: async () => undefined,
    health: async () => ({ bus: 'inprocess' }),
  });
}

/**
 * About the bytes a call part takes on the wire (UTF-16 units of its text members plus a little
 * per field), without encoding it: what the in-process bus counts against WEFT_BUS_MAX_PENDING_BYTES.
 */
export function envelopeBytes(envelope: CallPartEnvelope): number {
  let n = 64;
  const row = envelope.row as unknown as Record<string, unknown>;
  for (const k in row) {
    const v = row[k];
    if (typeof v === 'string') n += v.length + 8;
    else if (Array.isArray(v)) for (const x of v) n += String(x).length + 4;
    else n += 8;
  }
  return n;
}
