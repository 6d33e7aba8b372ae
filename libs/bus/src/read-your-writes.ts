import type { Logger } from '@weft/core';

/**
 * Read-your-writes where a transport acknowledges before storing (the all-in-one's ingest log):
 * `caughtUp` resolves once every write acknowledged before the call is stored — with a scope
 * (a project), once that scope's are: a read of one project does not wait for another's
 * ingest. The composition root hands it to the roles that read (query, gateway, inference);
 * without one (Kafka, or ack-after-insert, where an acknowledged write is stored already)
 * reads do not wait.
 */
export interface ReadYourWrites {
  /** At most the barrier's longest wait: a read goes ahead when the store is slow. */
  caughtUp(scope?: string): Promise<void>;
  /** However long it takes: for work that must include every acknowledged write (a deletion). */
  stored(scope?: string): Promise<void>;
}

export interface ReadBarrierOptions {
  /**
   * A promise per lane with writes acknowledged and not yet stored (of `scope`, when given),
   * each resolved once they are (sending them now).
   */
  pending: (scope?: string) => Promise<void>[];
  /** The longest a read waits. */
  maxWaitMs: number;
  log: Logger;
  /** What the warning says about the backlog when a read goes ahead. */
  backlog?: () => Record<string, unknown>;
}

/**
 * Reads wait for the writes acknowledged before them, at most `maxWaitMs`: an insert takes well
 * under a second, so past that the store is failing or throttled, and a read that went ahead
 * without the newest writes serves users better than one hanging until its request times out.
 */
export class ReadBarrier implements ReadYourWrites {
  constructor(private readonly opts: ReadBarrierOptions) {}

  stored(scope?: string): Promise<void> {
    return Promise.all(this.opts.pending(scope)).then(() => undefined);
  }

  caughtUp(scope?: string): Promise<void> {
    const waits = this.opts.pending(scope);
    if (waits.length === 0) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.opts.log.warn(
          { waitedMs: this.opts.maxWaitMs, ...this.opts.backlog?.() },
          'local log: a read goes ahead before the writes acknowledged before it are stored (the store is slow or failing)',
        );
        resolve();
      }, this.opts.maxWaitMs);
    });
    return Promise.race([Promise.all(waits).then(() => undefined), late]).finally(() => clearTimeout(timer));
  }
}
