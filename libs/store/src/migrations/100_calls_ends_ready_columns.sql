-- Ready-made end columns (issue 18; SCHEMA.md "calls_ends"): a call's status and its per-model
-- usage, computed once when the end row is stored instead of parsing every summary on every
-- count, filter and chart. MATERIALIZED: filled by the engine on insert whatever the view that
-- feeds calls_ends selects, never sent by a writer.
-- status: what summary.weave.status says of an ended call (a row here always has an end):
-- 'error' (an exception), 'descendant_error' (summary.status_counts.error > 0), else 'success'.
ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS status LowCardinality(String) MATERIALIZED multiIf(ifNull(exception, '') != '', 'error', ifNull(toFloat64OrNull(if(JSONType(ifNull(summary_dump, ''), 'status_counts', 'error') = 'String', JSONExtractString(ifNull(summary_dump, ''), 'status_counts', 'error'), JSONExtractRaw(ifNull(summary_dump, ''), 'status_counts', 'error'))), 0) > 0, 'descendant_error', 'success');

-- usage: summary.usage as one tuple per model, the token counts as costs and charts read them
-- (prompt = prompt_tokens + input_tokens, completion = completion_tokens + output_tokens).
ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS usage Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64)) MATERIALIZED arrayMap(kv -> (kv.1, JSONExtractInt(kv.2, 'requests'), JSONExtractInt(kv.2, 'prompt_tokens') + JSONExtractInt(kv.2, 'input_tokens'), JSONExtractInt(kv.2, 'completion_tokens') + JSONExtractInt(kv.2, 'output_tokens'), JSONExtractInt(kv.2, 'total_tokens'), JSONExtractInt(kv.2, 'cache_read_input_tokens'), JSONExtractInt(kv.2, 'cache_creation_input_tokens')), JSONExtractKeysAndValuesRaw(ifNull(summary_dump, '{}'), 'usage'));

-- The rows stored before this migration get both columns written once (else they would be
-- computed from the summary on every read of an old part).
ALTER TABLE calls_ends MATERIALIZE COLUMN status SETTINGS mutations_sync = 1;
ALTER TABLE calls_ends MATERIALIZE COLUMN usage SETTINGS mutations_sync = 1;

-- The back-fill of 070 wrote calls_starts in calls_merged's order, so on a store migrated
-- through it every part spans the project's whole key range and every FINAL read (counts,
-- threads, charts) merges all of it (10M calls: ~400 ms of CPU for a count). Parts that ingest
-- writes are time-ordered and rarely overlap; one merge makes the old ones so too (090 did the
-- same for calls_ends). On a new store the table is empty and this costs nothing.
OPTIMIZE TABLE calls_starts FINAL;
