import { z } from 'zod';
import { jsonEnvelopeCodec, type BusMessage, type EnvelopeCodec } from '@weft/bus';
import { callPartRowSchema, type CallPartRow } from '@weft/store';

/**
 * The versioned envelope of a call part on the bus. Version 1 carries one call_parts row.
 * Consumers validate it (Kafka) and dead-letter what does not parse.
 */
export const callPartEnvelopeSchema = z.object({
  v: z.literal(1),
  kind: z.literal('call_part'),
  row: callPartRowSchema,
});

export type CallPartEnvelope = z.infer<typeof callPartEnvelopeSchema>;

/** A call part keyed by project and call id: a call's start and end share a partition and an order. */
export function callPartMessage(row: CallPartRow): BusMessage<CallPartEnvelope> {
  return { key: `${row.project_id}/${row.id}`, value: { v: 1, kind: 'call_part', row } };
}

/**
 * About the bytes a call part takes on the wire (UTF-16 units of its text members plus a little
 * per field), without encoding it.
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

/** The call-parts topic's codec (envelope version 1). */
export const callPartCodec: EnvelopeCodec<CallPartEnvelope> = jsonEnvelopeCodec(callPartEnvelopeSchema, envelopeBytes);
