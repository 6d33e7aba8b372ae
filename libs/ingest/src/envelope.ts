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

/** The call-parts topic's codec (envelope version 1). */
export const callPartCodec: EnvelopeCodec<CallPartEnvelope> = jsonEnvelopeCodec(callPartEnvelopeSchema);
