import { z } from 'zod';
import type { CallPartRow } from '@weft/store';

/** Topics of the bus. All parts of one call share a key, hence a partition and an order. */
export const TOPICS = {
  callParts: 'weft.call-parts',
  deadLetter: 'weft.dead-letter',
} as const;

/**
 * The versioned envelope of a call part on the bus. Version 1 carries one call_parts row.
 * Consumers validate it (Kafka) and dead-letter what does not parse.
 */
export interface CallPartEnvelope {
  v: 1;
  kind: 'call_part';
  row: CallPartRow;
}

const nstr = z.string().nullish();
export const callPartEnvelopeSchema = z.object({
  v: z.literal(1),
  kind: z.literal('call_part'),
  row: z.object({
    project_id: z.string().min(1),
    id: z.string().min(1),
    trace_id: nstr,
    parent_id: nstr,
    thread_id: nstr,
    turn_id: nstr,
    op_name: nstr,
    display_name: nstr,
    started_at: nstr,
    ended_at: nstr,
    attributes_dump: nstr,
    inputs_dump: nstr,
    input_refs: z.array(z.string()),
    output_dump: nstr,
    output_refs: z.array(z.string()),
    summary_dump: nstr,
    exception: nstr,
    otel_dump: nstr,
    svc_user_id: nstr,
    svc_run_id: nstr,
    svc_run_step: z.number().int().nullish(),
    svc_run_step_end: z.number().int().nullish(),
    deleted_at: nstr,
    created_at: z.string(),
  }),
});

export function callPartMessage(row: CallPartRow): BusMessage<CallPartEnvelope> {
  return { key: `${row.project_id}/${row.id}`, value: { v: 1, kind: 'call_part', row } };
}

export interface BusMessage<T> {
  /** Partitioning key: messages with one key keep their order. */
  key: string;
  value: T;
}
