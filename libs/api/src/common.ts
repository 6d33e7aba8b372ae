import { z } from 'zod';
import { parseTimestampMicros } from '@weft/core';

/** Shared shapes of the interface. Unknown extra members are ignored (zod strips them). */

export const projectId = z
  .string()
  .regex(/^[^/\s]+\/[^/\s]+$/, 'must be <entity>/<project>')
  .describe('`<entity>/<project>`');

/** ISO 8601 date-time; `Z`, an offset, or naive (read as UTC). */
export const timestamp = z
  .string()
  .refine((s) => parseTimestampMicros(s) !== null, 'must be an ISO 8601 date-time')
  .meta({ format: 'date-time' });

/** A value JSON.parse made from `{…}` (or lossless-json: the same plain objects); not an array, a class instance or null. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};
const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * A free-form JSON object (inputs, attributes, summaries, table rows): checked, not copied.
 * `z.record(z.string(), z.unknown())` rebuilt every such object key by key, half of zod's time on
 * an upsert_batch of the bench's calls (~2.3 of ~4.5 µs per call), for values that are only
 * written out again; the JSON Schema is stated (an object of anything), as the record's was.
 */
export const jsonObject = z
  .custom<Record<string, unknown>>(isJsonObject, { error: (issue) => `Invalid input: expected object, received ${kindOf(issue.input)}` })
  .meta({ type: 'object', additionalProperties: {} });
export const anyJson = z.unknown();

export const sortDirection = z.enum(['asc', 'desc']);
export const sortBy = z.array(z.object({ field: z.string().min(1), direction: sortDirection }));
/**
 * Table sort entries: the seed's `{field, order}`, or `{field, direction}` as the reference's
 * SDK sends it (SortBy, as everywhere else); read as `{field, order}` either way.
 */
const tableSortEntry = z.union([
  z.object({ field: z.string().min(1), order: sortDirection }),
  z.object({ field: z.string().min(1), direction: sortDirection }).transform(({ field, direction }) => ({ field, order: direction })),
]);
export const tableSortBy = z.array(tableSortEntry);

export const limit = z.number().int().min(0);
export const offset = z.number().int().min(0);

/**
 * Query expression `{ $expr: ... }`. The operand grammar is checked by the query compiler
 * (libs/query), which names the offending operator; here only the envelope is checked.
 */
export const query = z.object({ $expr: jsonObject }).describe('query expression: `{ $expr: { ... } }`');

export const stringList = z.array(z.string());

export const callFilter = z.object({
  op_names: stringList.optional(),
  input_refs: stringList.optional(),
  output_refs: stringList.optional(),
  parent_ids: stringList.optional(),
  trace_ids: stringList.optional(),
  call_ids: stringList.optional(),
  thread_ids: stringList.optional(),
  turn_ids: stringList.optional(),
  svc_user_ids: stringList.optional(),
  svc_run_ids: stringList.optional(),
  trace_roots_only: z.boolean().optional(),
});
export type CallFilter = z.infer<typeof callFilter>;

export const emptyObject = z.object({});
