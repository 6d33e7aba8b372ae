import { z } from 'zod';

const nstr = z.string().nullish();
/** A time as the row holds it: microseconds since the epoch, UTC, as parsed from the request once (the RowBinary encoding writes the integer). */
const time = z.number().int();

/**
 * One row of `call_parts`, as it travels on the bus and is inserted: the JSON values are
 * already serialised (`*_dump`), times are µs integers. A start part and an end part of
 * the same call meet in calls_starts ⋈ calls_ends by id. The one definition of the row: the type, the bus
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
  started_at: time.nullish(),
  ended_at: time.nullish(),
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
  deleted_at: time.nullish(),
  /** When the part was accepted; orders display_name updates. */
  created_at: time,
});

export type CallPartRow = z.infer<typeof callPartRowSchema>;

/** The columns of `call_parts` a part carries (the table's other columns are computed). */
export const CALL_PART_COLUMNS = Object.keys(callPartRowSchema.shape) as (keyof CallPartRow)[];

/**
 * The ClickHouse type of each column a part carries, as `DESCRIBE TABLE call_parts` prints it
 * (a test holds the two equal): what the binary encoding (call-part-rowbinary.ts) writes.
 */
export const CALL_PART_TYPES = {
  project_id: 'String',
  id: 'String',
  trace_id: 'Nullable(String)',
  parent_id: 'Nullable(String)',
  thread_id: 'Nullable(String)',
  turn_id: 'Nullable(String)',
  op_name: 'Nullable(String)',
  display_name: 'Nullable(String)',
  started_at: "Nullable(DateTime64(6, 'UTC'))",
  ended_at: "Nullable(DateTime64(6, 'UTC'))",
  attributes_dump: 'Nullable(String)',
  inputs_dump: 'Nullable(String)',
  input_refs: 'Array(String)',
  output_dump: 'Nullable(String)',
  output_refs: 'Array(String)',
  summary_dump: 'Nullable(String)',
  exception: 'Nullable(String)',
  otel_dump: 'Nullable(String)',
  svc_user_id: 'Nullable(String)',
  svc_run_id: 'Nullable(String)',
  svc_run_step: 'Nullable(UInt64)',
  svc_run_step_end: 'Nullable(UInt64)',
  deleted_at: "Nullable(DateTime64(3, 'UTC'))",
  created_at: "DateTime64(6, 'UTC')",
} as const satisfies Record<keyof CallPartRow, string>;

export type CallPartType = (typeof CALL_PART_TYPES)[keyof CallPartRow];
