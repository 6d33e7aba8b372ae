import type { Subscription } from '@weft/bus';
import { delivery } from '@weft/core';
import { needs, type Role } from '@weft/runtime';
import { RetentionSweeper } from './retention';
import { CallPartsWriter } from './writer';

/**
 * The writer stage: consumes the call-parts topic into ClickHouse. Its stop commits the offsets
 * of everything inserted (Kafka) or lets the in-process bus finish what publishers wait for.
 * Retention (what expired leaves the store) runs beside it.
 */
export const writerRole: Role = (config, log) => ({
  name: 'writer',
  usesBus: true,
  components(deps) {
    const bus = needs(deps.bus, 'the bus', 'writer');
    delivery.countsStored();
    // The ingest log and Kafka dead-letter what the store refuses; ack-after-insert refuses its publishes instead.
    const deadLetters = config.WEFT_BUS === 'kafka' || config.WEFT_ACK_AFTER === 'log';
    let subscription: Subscription | null = null;
    const retention = new RetentionSweeper(deps.store, log, {
      defaultDays: config.WEFT_RETENTION_DAYS,
      alertDays: config.WEFT_ALERTS_RETENTION_DAYS,
      intervalMs: config.WEFT_RETENTION_INTERVAL_MS,
    });
    return [
      {
        name: 'writer',
        start: async () => {
          subscription = await new CallPartsWriter(deps.store, log, { deadLetters }).subscribe(bus);
        },
        stop: async () => {
          await subscription?.stop();
        },
      },
      // Runs beside the writer (one per writer process; a pass with nothing expired issues no mutation).
      { name: 'retention', start: async () => retention.start(), stop: () => retention.stop() },
    ];
  },
});
