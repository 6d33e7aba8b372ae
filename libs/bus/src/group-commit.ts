import type { BatchHandler, BatchOutcome } from './bus';
import { BatchingStage } from './batching-stage';

export interface GroupCommitOptions<T> {
  /** The transport it serves: the `transport` label of the stage's metrics. */
  transport?: string;
  /** Hand over at most this many items at once... */
  maxItems: number;
  /** ...and wait at most this long (ms) after the first item for others to join. */
  lingerMs: number;
  handle: BatchHandler<T>;
}

/**
 * Joins concurrent `add` calls into one `handle` call, flushed by size or by time, one at a
 * time; each `add` resolves (or rejects) with the handle call that carried its items, and
 * learns which of its own items were rejected. The Kafka consumer uses it so the batches of
 * several partitions become one handler call (one ClickHouse insert). The batching stage with
 * one lane, no bounds and no deadline (Kafka redelivers what is not committed); it lingers only
 * from idle, since the fetches already gathered while an insert ran.
 */
export class GroupCommit<T> {
  private readonly stage: BatchingStage<T>;

  constructor(opts: GroupCommitOptions<T>) {
    this.stage = new BatchingStage<T>({
      send: async (_lane, batch) => opts.handle(batch),
      ...(opts.transport !== undefined ? { transport: opts.transport } : {}),
      laneLabel: () => 'all',
      maxBatchItems: opts.maxItems,
      lingerMs: opts.lingerMs,
      lingerAfterSend: false,
      errors: {
        full: () => new Error('unbounded'),
        timedOut: () => new Error('no deadline'),
        failed: (e) => e as Error,
      },
    });
  }

  add(items: T[]): Promise<BatchOutcome> {
    return this.stage.offer('', items, 0);
  }

  /** Hands over what is waiting without lingering (shutting down). */
  flushNow(): void {
    void this.stage.flush('');
  }
}
