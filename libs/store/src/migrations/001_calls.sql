-- Call parts: one row per start, end (and later update/delete) of a call. The Null engine
-- keeps nothing itself; the materialized view below folds every part into calls_merged.
CREATE TABLE IF NOT EXISTS call_parts (
  project_id String,
  id String,
  trace_id Nullable(String),
  parent_id Nullable(String),
  thread_id Nullable(String),
  turn_id Nullable(String),
  op_name Nullable(String),
  display_name Nullable(String),
  started_at Nullable(DateTime64(6, 'UTC')),
  ended_at Nullable(DateTime64(6, 'UTC')),
  attributes_dump Nullable(String),
  inputs_dump Nullable(String),
  input_refs Array(String),
  output_dump Nullable(String),
  output_refs Array(String),
  summary_dump Nullable(String),
  exception Nullable(String),
  otel_dump Nullable(String),
  svc_user_id Nullable(String),
  svc_run_id Nullable(String),
  svc_run_step Nullable(UInt64),
  svc_run_step_end Nullable(UInt64),
  deleted_at Nullable(DateTime64(3, 'UTC')),
  created_at DateTime64(6, 'UTC') DEFAULT now64(6)
) ENGINE = Null;

-- The read model: one logical row per (project_id, id). `any` ignores NULLs, so a start
-- part and an end part merge in either order; replays of the same part change nothing.
CREATE TABLE IF NOT EXISTS calls_merged (
  project_id String,
  id String,
  trace_id SimpleAggregateFunction(any, Nullable(String)),
  parent_id SimpleAggregateFunction(any, Nullable(String)),
  thread_id SimpleAggregateFunction(any, Nullable(String)),
  turn_id SimpleAggregateFunction(any, Nullable(String)),
  op_name SimpleAggregateFunction(any, Nullable(String)),
  display_name AggregateFunction(argMax, Nullable(String), DateTime64(6, 'UTC')),
  started_at SimpleAggregateFunction(any, Nullable(DateTime64(6, 'UTC'))),
  ended_at SimpleAggregateFunction(any, Nullable(DateTime64(6, 'UTC'))),
  attributes_dump SimpleAggregateFunction(any, Nullable(String)),
  inputs_dump SimpleAggregateFunction(any, Nullable(String)),
  input_refs SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  output_dump SimpleAggregateFunction(any, Nullable(String)),
  output_refs SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  summary_dump SimpleAggregateFunction(any, Nullable(String)),
  exception SimpleAggregateFunction(any, Nullable(String)),
  otel_dump SimpleAggregateFunction(any, Nullable(String)),
  svc_user_id SimpleAggregateFunction(any, Nullable(String)),
  svc_run_id SimpleAggregateFunction(any, Nullable(String)),
  svc_run_step SimpleAggregateFunction(any, Nullable(UInt64)),
  svc_run_step_end SimpleAggregateFunction(any, Nullable(UInt64)),
  deleted_at SimpleAggregateFunction(any, Nullable(DateTime64(3, 'UTC'))),
  sortable_datetime SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
  INDEX idx_sortable_datetime sortable_datetime TYPE minmax GRANULARITY 1,
  INDEX idx_trace_id trace_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_op_name op_name TYPE bloom_filter GRANULARITY 1,
  INDEX idx_thread_id thread_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_svc_run_id svc_run_id TYPE set(100) GRANULARITY 1
) ENGINE = AggregatingMergeTree
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_merged_view TO calls_merged AS
SELECT
  project_id,
  id,
  anySimpleState(trace_id) AS trace_id,
  anySimpleState(parent_id) AS parent_id,
  anySimpleState(thread_id) AS thread_id,
  anySimpleState(turn_id) AS turn_id,
  anySimpleState(op_name) AS op_name,
  argMaxState(display_name, call_parts.created_at) AS display_name,
  anySimpleState(started_at) AS started_at,
  anySimpleState(ended_at) AS ended_at,
  anySimpleState(attributes_dump) AS attributes_dump,
  anySimpleState(inputs_dump) AS inputs_dump,
  groupUniqArrayArraySimpleState(input_refs) AS input_refs,
  anySimpleState(output_dump) AS output_dump,
  groupUniqArrayArraySimpleState(output_refs) AS output_refs,
  anySimpleState(summary_dump) AS summary_dump,
  anySimpleState(exception) AS exception,
  anySimpleState(otel_dump) AS otel_dump,
  anySimpleStateIf(call_parts.svc_user_id, call_parts.started_at IS NOT NULL) AS svc_user_id,
  anySimpleState(svc_run_id) AS svc_run_id,
  anySimpleState(svc_run_step) AS svc_run_step,
  anySimpleState(svc_run_step_end) AS svc_run_step_end,
  anySimpleState(deleted_at) AS deleted_at,
  minSimpleState(coalesce(call_parts.started_at, call_parts.ended_at, call_parts.created_at)) AS sortable_datetime
FROM call_parts
GROUP BY project_id, id;
