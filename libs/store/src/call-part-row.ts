import { z } from 'zod';

const nstr = z.string().nullish();

/**
 * One row of `call_parts`, as it travels on the bus and is inserted: the JSON values are
 * already serialised (`*_dump`), times are ClickHouse text. A start part and an end part of
 * the same call are merged by calls_merged. The one definition of the row: the type, the bus
 * envelope (@weft/ingest), the column list and the DDL-conformance test all derive from it.
 */
export const callPartRowSchema = z.object({
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
  /** When the part was accepted; orders display_name updates. */
  created_at: z.string(),
});

export type CallPartRow = z.infer<typeof callPartRowSchema>;

/** The columns of `call_parts` a part carries (the table's other columns are computed). */
export const CALL_PART_COLUMNS = Object.keys(callPartRowSchema.shape) as (keyof CallPartRow)[];
