import { RetryableError } from '@weft/core';
import type { BusMessage } from './messages';

/** The items of a batch a handler refused for good (by index in the batch), and why. */
export interface BatchOutcome {
  rejected: { index: number; reason: string }[];
}

/**
 * A joined batch's outcome split back over the parts it was joined from (their item counts, in
 * order): each part's rejected items, by the part's own indices.
 */
export function splitOutcome(outcome: Awaited<ReturnType<BatchHandler<unknown>>>, partSizes: number[]): BatchOutcome[] {
  const rejected = outcome?.rejected ?? [];
  let offset = 0;
  return partSizes.map((size) => {
    const start = offset;
    offset += size;
    return { rejected: rejected.filter((r) => r.index >= start && r.index < offset).map((r) => ({ ...r, index: r.index - start })) };
  });
}

/**
 * A batch handler (a stage, e.g. the writer): resolves once the batch is durably stored, except
 * the items it reports rejected — the store refused them and retrying cannot help; the bus
 * dead-letters them (Kafka) or refuses their publishes (in-process). It throws to have the whole
 * batch retried (nothing committed).
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a handler that stored everything may return nothing
export type BatchHandler<T> = (batch: T[]) => Promise<BatchOutcome | void>;

export interface Subscription {
  /** Stops consuming after the batch in flight; resolves when it is handled. */
  stop(): Promise<void>;
}

/**
 * The topic contract between the gateway and the writer: all its users need. `publish`
 * resolves only once the messages are durable (the ingest log: in its file; ack-after-insert:
 * handled by the subscriber; Kafka: acknowledged by all in-sync replicas) and rejects with
 * BusUnavailableError when that cannot be promised. Read-your-writes is not the bus's: the
 * composition root hands readers a ReadYourWrites (read-your-writes.ts).
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
  /** Bytes handed to the bus and not yet acknowledged (the ingest log: acknowledged and not yet stored). */
  pendingBytes: number;
  /** WEFT_BUS_MAX_PENDING_BYTES: publishes beyond it are refused. */
  maxPendingBytes: number;
  /** Why the bus is known to be unable to acknowledge anything now (broker down, shutting down), else null. */
  down: string | null;
  /** Why the writers are too far behind to take more now (Kafka: past four times WEFT_MAX_WRITER_LAG_MS), else null. */
  behind: string | null;
}

/** The bus could not take the messages (overloaded, down, timed out); nothing was acknowledged. */
export class BusUnavailableError extends RetryableError {
  constructor(message: string, retryAfterSeconds = 1) {
    super(message, retryAfterSeconds);
    this.name = 'BusUnavailableError';
  }
}

/**
 * Some values of a publish were refused for good by the stage behind the bus (e.g. the store
 * rejected the rows): retrying them cannot help. The other values of the publish are stored.
 */
export class RejectedByStoreError extends Error {
  // Read by the HTTP edge (toApiError): a 4xx, the request is not worth retrying as is.
  readonly statusCode = 422;
  constructor(
    readonly rejected: number,
    readonly of: number,
    readonly reason: string,
  ) {
    super(`the store refused ${rejected} of ${of} parts (${reason}); those are not stored, the others are`);
    this.name = 'RejectedByStoreError';
  }
}
