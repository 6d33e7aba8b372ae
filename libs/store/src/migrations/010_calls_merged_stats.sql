-- Storage sizes per call (reference calls_merged_stats): byte lengths of each JSON dump, folded
-- per (project_id, id) like calls_merged. Kept apart so size queries never read the dumps.
CREATE TABLE IF NOT EXISTS calls_merged_stats (
  project_id String,
  id String,
  trace_id SimpleAggregateFunction(any, Nullable(String)),
  parent_id SimpleAggregateFunction(any, Nullable(String)),
  attributes_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  inputs_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  output_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  summary_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  exception_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  otel_size_bytes SimpleAggregateFunction(any, Nullable(UInt64)),
  updated_at SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
  INDEX idx_trace_id trace_id TYPE bloom_filter GRANULARITY 1
) ENGINE = AggregatingMergeTree
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_merged_stats_view TO calls_merged_stats AS
SELECT
  project_id,
  id,
  anySimpleState(trace_id) AS trace_id,
  anySimpleState(parent_id) AS parent_id,
  anySimpleState(length(attributes_dump)) AS attributes_size_bytes,
  anySimpleState(length(inputs_dump)) AS inputs_size_bytes,
  anySimpleState(length(output_dump)) AS output_size_bytes,
  anySimpleState(length(summary_dump)) AS summary_size_bytes,
  anySimpleState(length(exception)) AS exception_size_bytes,
  anySimpleState(length(otel_dump)) AS otel_size_bytes,
  maxSimpleState(call_parts.created_at) AS updated_at
FROM call_parts
GROUP BY project_id, id;

-- Backfill from calls already stored (runs once: the migration is recorded). Re-running it
-- would only add rows that fold to the same `any` values.
INSERT INTO calls_merged_stats (project_id, id, trace_id, parent_id, attributes_size_bytes, inputs_size_bytes,
  output_size_bytes, summary_size_bytes, exception_size_bytes, otel_size_bytes, updated_at)
SELECT project_id, id, any(trace_id), any(parent_id), length(any(attributes_dump)), length(any(inputs_dump)),
  length(any(output_dump)), length(any(summary_dump)), length(any(exception)), length(any(otel_dump)), now64(6)
FROM calls_merged
WHERE (project_id, id) NOT IN (SELECT project_id, id FROM calls_merged_stats)
GROUP BY project_id, id;
