import type { Bus, CallPartEnvelope, Subscription } from '@weft/bus';
import { TOPICS } from '@weft/bus';
import { metrics, type Logger } from '@weft/core';
import { insertCallParts, type Store } from '@weft/store';

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
    await insertCallParts(this.store, batch.map((m) => m.row));
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
