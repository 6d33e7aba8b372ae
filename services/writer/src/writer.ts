import type { Bus, Subscription } from '@weft/bus';
import type { CallPartEnvelope } from '@weft/ingest';
import { TOPICS } from '@weft/bus';
import { markPermanent, metrics, type Logger } from '@weft/core';
import { insertCallParts, isRowRejection, type Store } from '@weft/store';

/**
 * The writer: turns batches of call parts from the bus into ClickHouse inserts. A batch
 * handed over by the bus is inserted in one INSERT; the bus decides batch size and timing.
 */
export class CallPartsWriter {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  async write(batch: CallPartEnvelope[]): Promise<void> {
    const started = performance.now();
    try {
      await insertCallParts(
        this.store,
        batch.map((m) => m.row),
      );
    } catch (e) {
      // The rows themselves are refused: retrying cannot help, the bus dead-letters them.
      throw isRowRejection(e) ? markPermanent(e) : e;
    }
    const seconds = (performance.now() - started) / 1000;
    metrics.writerBatchRows.observe(batch.length);
    metrics.insertLatency.observe(seconds);
    this.log.debug({ rows: batch.length, ms: Math.round(seconds * 1000) }, 'call parts inserted');
  }

  /** Consumes the call-parts topic until the subscription is stopped. */
  subscribe(bus: Bus<CallPartEnvelope>): Promise<Subscription> {
    return bus.subscribe(TOPICS.callParts, (batch) => this.write(batch));
  }
}
