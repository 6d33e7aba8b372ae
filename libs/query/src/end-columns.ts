/**
 * The expressions of calls_ends' ready-made columns (SCHEMA.md "calls_ends"): a
 * call's status and per-model usage, computed by the engine once when the end row is stored.
 * The migration holds their text; a unit test checks it against these, the one definition.
 */

/** `summary.status_counts.error` as text (a JSON string unquoted), from a summary dump. */
export const errorsSql = (summary: string) => {
  const at = `ifNull(${summary}, ''), 'status_counts', 'error'`;
  return `if(JSONType(${at}) = 'String', JSONExtractString(${at}), JSONExtractRaw(${at}))`;
};

/** The status of an ended call (reference make_derived_summary_fields): error, descendant_error or success. */
export const endStatusSql = (exception: string, summary: string) =>
  `multiIf(ifNull(${exception}, '') != '', 'error', ifNull(toFloat64OrNull(${errorsSql(summary)}), 0) > 0, 'descendant_error', 'success')`;

/** The type of calls_ends.usage: one tuple per model. */
export const USAGE_TYPE =
  'Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64))';

/** summary.usage as one tuple per model (prompt = prompt_tokens + input_tokens, completion = completion_tokens + output_tokens). */
export const usageSql = (summary: string) => {
  const int = (k: string) => `JSONExtractInt(kv.2, '${k}')`;
  return `arrayMap(kv -> (kv.1, ${int('requests')}, ${int('prompt_tokens')} + ${int('input_tokens')}, ${int('completion_tokens')} + ${int('output_tokens')}, ${int('total_tokens')}, ${int('cache_read_input_tokens')}, ${int('cache_creation_input_tokens')}), JSONExtractKeysAndValuesRaw(ifNull(${summary}, '{}'), 'usage'))`;
};
