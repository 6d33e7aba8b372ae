import type { BatchOutcome, Bus, Subscription } from '@weft/bus';
import { callPartInsertable, type CallPartEnvelope } from '@weft/ingest';
import { storeFindingRejected } from './bisect';
import { TOPICS } from '@weft/bus';
import { markPermanent, metrics, type Logger } from '@weft/core';
import { insertCallParts, isRowRejection, type Store } from '@weft/store';

/**
 * The writer stage: turns batches of call parts from the bus into ClickHouse inserts. A batch
 * handed over by the bus is inserted in one INSERT (the bus decides batch size and timing); rows
 * the store refuses for good are found by bisection and reported, so the bus dead-letters only
 * them and the rest of the batch is stored.
 */
export class CallPartsWriter {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  async write(batch: CallPartEnvelope[]): Promise<BatchOutcome> {
    const started = performance.now();
    const outcome = await storeFindingRejected(batch, (part) => this.insert(part));
    if (outcome.rejected.length > 0)
      this.log.warn({ rejected: outcome.rejected.length, of: batch.length }, 'call parts refused by the store');
    const seconds = (performance.now() - started) / 1000;
    metrics.writerBatchRows.observe(batch.length);
    metrics.insertLatency.observe(seconds);
    this.log.debug({ rows: batch.length, ms: Math.round(seconds * 1000) }, 'call parts inserted');
    return outcome;
  }

  private async insert(batch: CallPartEnvelope[]): Promise<void> {
    try {
      // Rows (in-process) are encoded here; lines from Kafka (envelope v2) go in as they arrived.
      await insertCallParts(this.store, batch.map(callPartInsertable));
    } catch (e) {
      // The rows themselves are refused: retrying cannot help (permanent).
      throw isRowRejection(e) ? markPermanent(e) : e;
    }
  }

  /** Consumes the call-parts topic until the subscription is stopped. */
  subscribe(bus: Bus<CallPartEnvelope>): Promise<Subscription> {
    return bus.subscribe(TOPICS.callParts, (batch) => this.write(batch));
  }
}
