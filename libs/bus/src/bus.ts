import { RetryableError } from '@weft/core';
import type { BusMessage } from './messages';

/** A batch handler: resolves once the batch is durably stored (e.g. inserted into ClickHouse). */
export type BatchHandler<T> = (batch: T[]) => Promise<void>;

export interface Subscription {
  /** Stops consuming after the batch in flight; resolves when it is handled. */
  stop(): Promise<void>;
}

/**
 * The topic contract between the gateway and the writer. `publish` resolves only once the
 * messages are durable (in-process: handled by the subscriber; Kafka: acknowledged by all
 * in-sync replicas) and rejects with BusUnavailableError when that cannot be promised.
 */
export interface Bus<T> {
  publish(topic: string, messages: BusMessage<T>[]): Promise<void>;
  /** What the bus carries now, cheaply (no I/O): the HTTP edge refuses writes from it before reading a body. */
  pressure(): BusPressure;
  subscribe(topic: string, handler: BatchHandler<T>): Promise<Subscription>;
  close(): Promise<void>;
}

/** The bus's load and state as the admission check sees them. */
export interface BusPressure {
  /** Bytes handed to the bus and not yet acknowledged. */
  pendingBytes: number;
  /** WEFT_BUS_MAX_PENDING_BYTES: publishes beyond it are refused. */
  maxPendingBytes: number;
  /** Why the bus is known to be unable to acknowledge anything now (broker down, shutting down), else null. */
  down: string | null;
}

/** The bus could not take the messages (overloaded, down, timed out); nothing was acknowledged. */
export class BusUnavailableError extends RetryableError {
  constructor(message: string, retryAfterSeconds = 1) {
    super(message, retryAfterSeconds);
    this.name = 'BusUnavailableError';
  }
}
