import type { BatchOutcome, Bus, Subscription } from '@weft/bus';
import { callHalves, callPartFacts, callPartInsertable, type CallPartEnvelope } from '@weft/ingest';
import { storeFindingRejected } from './bisect';
import { TOPICS } from '@weft/bus';
import { delivery, markPermanent, metrics, type Logger, type StoredEntrance } from '@weft/core';
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
    /** The bus dead-letters what the store refuses (the ingest log, Kafka); else the publisher is refused (ack after insert). */
    private readonly opts: { deadLetters: boolean } = { deadLetters: true },
  ) {}

  async write(batch: CallPartEnvelope[]): Promise<BatchOutcome> {
    const started = performance.now();
    const outcome = await storeFindingRejected(batch, (part) => this.insert(part));
    countDelivery(batch, outcome, this.opts.deadLetters);
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
      // Rows (in-process) are encoded here; parts that came as RowBinary (Kafka, the ingest log) go in as they arrived.
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

/**
 * A batch's outcome in the delivery counts, per project and entrance: what was stored, with the
 * acknowledgement time of its oldest part (the lag), and what the bus dead-letters. Parts refused
 * where the bus does not dead-letter (ack after insert) were never acknowledged: their request
 * was refused, and counted so at the edge.
 */
function countDelivery(batch: readonly CallPartEnvelope[], outcome: BatchOutcome, deadLetters: boolean): void {
  const rejected = new Set(outcome.rejected.map((r) => r.index));
  const groups = new Map<string, { project: string; entrance: StoredEntrance; stored: number; dead: number; oldest: number | null }>();
  for (let i = 0; i < batch.length; i++) {
    const envelope = batch[i]!;
    let facts;
    try {
      facts = callPartFacts(envelope);
    } catch {
      continue; // a part the store took but these facts cannot be read from: not counted
    }
    const halves = callHalves(facts);
    if (halves === 0) continue;
    const entrance: StoredEntrance = envelope.entrance ?? 'unknown';
    const key = `${entrance} ${facts.project_id}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { project: facts.project_id, entrance, stored: 0, dead: 0, oldest: null }));
    if (!rejected.has(i)) {
      g.stored += halves;
      if (facts.createdAtMicros !== null) g.oldest = Math.min(g.oldest ?? Infinity, facts.createdAtMicros / 1000);
    } else if (deadLetters) g.dead += halves;
  }
  for (const g of groups.values()) {
    delivery.stored(g.project, g.entrance, g.stored, g.oldest);
    delivery.deadLettered(g.project, g.entrance, g.dead);
  }
}
