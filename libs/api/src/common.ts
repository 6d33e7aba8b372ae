import { z } from 'zod';
import { parseTimestampMicros } from '@weft/core';

/** Shared shapes of the interface. Unknown extra members are ignored (zod strips them). */

export const projectId = z
  .string()
  .regex(/^[^/\s]+\/[^/\s]+$/, 'must be <entity>/<project>')
  .describe('`<entity>/<project>`');

const NOT_A_DATE_TIME = 'must be an ISO 8601 date-time';

/** ISO 8601 date-time; `Z`, an offset, or naive (read as UTC). */
export const timestamp = z
  .string()
  .refine((s) => parseTimestampMicros(s) !== null, NOT_A_DATE_TIME)
  .meta({ format: 'date-time' });

/**
 * A time a call stores (started_at, ended_at): ISO 8601 as `timestamp`, within what the store
 * keeps exactly — microseconds since 1970 as a JavaScript number, so years up to 2255.
 */
export const storedTimestamp = z
  .string()
  .superRefine((s, ctx) => {
    const micros = parseTimestampMicros(s);
    if (micros === null) ctx.addIssue({ code: 'custom', message: NOT_A_DATE_TIME });
    else if (!Number.isSafeInteger(micros)) ctx.addIssue({ code: 'custom', message: 'must be a date-time before the year 2255' });
  })
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

/**
 * Marks a check that the reference makes in its server, not in its request model (a negative
 * limit, an empty sort path, too many digests to delete): the body fits the reference's schema
 * and its server refuses it with InvalidRequest or ValueError, which its service answers 400
 * (parseBody answers it so). Use as the options of a `.refine`: `.refine(ok, serverCheck('Limit must be non-negative'))`.
 */
export const serverCheck = (message: string) => ({ message, params: { status: 400 } });

export const sortDirection = z.enum(['asc', 'desc']);
export const sortBy = z.array(z.object({ field: z.string().min(1), direction: sortDirection }));
/**
 * Table sort entries: the seed's `{field, order}`, or `{field, direction}` as the reference's
 * SDK sends it (SortBy, as everywhere else); read as `{field, order}` either way.
 */
const tableSortField = z
  .string()
  .refine((f) => f.trim() !== '', serverCheck('Sort field cannot be empty'))
  .refine(
    (f) => f.trim() === '' || !(f.startsWith('.') || f.endsWith('.') || f.includes('..')),
    serverCheck('Invalid sort field: field names cannot start/end with dots or contain consecutive dots'),
  )
  .refine(
    (f) => f.trim() === '' || f.split('.').every((part) => part.trim() !== ''),
    serverCheck('Invalid sort field: field path components cannot be empty'),
  );
// One object rather than a union of the two spellings, so a refused field is reported as itself.
const tableSortEntry = z
  .object({ field: tableSortField, order: sortDirection.optional(), direction: sortDirection.optional() })
  .refine((e) => e.order !== undefined || e.direction !== undefined, { message: 'order (or direction) is required', path: ['order'] })
  .transform(({ field, order, direction }) => ({ field, order: (order ?? direction)! }));
export const tableSortBy = z.array(tableSortEntry);

// Negative ones fit the reference's models (plain ints); its query builders refuse them.
export const limit = z
  .number()
  .int()
  .refine((n) => n >= 0, serverCheck('Limit must be non-negative'));
export const offset = z
  .number()
  .int()
  .refine((n) => n >= 0, serverCheck('Offset must be non-negative'));

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
