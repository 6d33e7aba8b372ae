/**
 * The ready-made columns of calls_ends (migration 100, SCHEMA.md "calls_ends"): a call's status
 * and per-model usage, computed by the engine once when the end row is stored. The migration
 * holds the same expressions over the stored columns (a unit test compares them); here they
 * also serve calls that are read merged from calls_merged, so both paths answer alike.
 */

/** `summary.status_counts.error` as text (a JSON string unquoted), from a summary dump. */
const errorsSql = (summary: string) => {
  const at = `ifNull(${summary}, ''), 'status_counts', 'error'`;
  return `if(JSONType(${at}) = 'String', JSONExtractString(${at}), JSONExtractRaw(${at}))`;
};

/** The status of an ended call (reference make_derived_summary_fields): error, descendant_error or success. */
export const endStatusSql = (exception: string, summary: string) =>
  `multiIf(ifNull(${exception}, '') != '', 'error', ifNull(toFloat64OrNull(${errorsSql(summary)}), 0) > 0, 'descendant_error', 'success')`;

/** The tuple type of one model's usage in calls_ends.usage. */
export const USAGE_TYPE =
  'Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64))';

/** summary.usage as one tuple per model (prompt = prompt_tokens + input_tokens, completion = completion_tokens + output_tokens). */
export const usageSql = (summary: string) => {
  const int = (k: string) => `JSONExtractInt(kv.2, '${k}')`;
  return `arrayMap(kv -> (kv.1, ${int('requests')}, ${int('prompt_tokens')} + ${int('input_tokens')}, ${int('completion_tokens')} + ${int('output_tokens')}, ${int('total_tokens')}, ${int('cache_read_input_tokens')}, ${int('cache_creation_input_tokens')}), JSONExtractKeysAndValuesRaw(ifNull(${summary}, '{}'), 'usage'))`;
};

/**
 * The same columns over a call re-aggregated from calls_merged (its columns qualified, so that
 * the aliases of the same SELECT do not shadow them): `status` is '' while the call runs, as
 * a call without an end row reads through the join.
 */
export const MERGED_END_COLUMNS: Record<string, string> = {
  status: `if(any(calls_merged.ended_at) IS NULL, '', ${endStatusSql('any(calls_merged.exception)', 'any(calls_merged.summary_dump)')})`,
  usage: usageSql('any(calls_merged.summary_dump)'),
};

/** summary.weave.status over a row holding `status` (calls_ends' column, or MERGED_END_COLUMNS.status). */
export const statusOfRowSql = `if(status = '', 'running', status)`;
