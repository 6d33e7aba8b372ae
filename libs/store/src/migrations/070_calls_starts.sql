-- Start parts in time order (issue 18; SCHEMA.md "calls_starts"): the columns only a start part
-- writes, one row per call, keyed by (project, started_at, id). Streams in started_at order read
-- a key range in order instead of merging the project; filters on start columns read the rows
-- they need in time order and stop at the page size.
CREATE TABLE IF NOT EXISTS calls_starts (
  project_id String,
  id String,
  trace_id Nullable(String),
  parent_id Nullable(String),
  thread_id Nullable(String),
  turn_id Nullable(String),
  op_name Nullable(String),
  display_name Nullable(String),
  started_at DateTime64(6, 'UTC'),
  attributes_dump Nullable(String),
  inputs_dump Nullable(String),
  input_refs Array(String),
  otel_dump Nullable(String),
  svc_user_id Nullable(String),
  svc_run_id Nullable(String),
  svc_run_step Nullable(UInt64),
  INDEX idx_id id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_trace_id trace_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_parent_id parent_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_thread_id thread_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_turn_id turn_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_op_name op_name TYPE bloom_filter GRANULARITY 1,
  INDEX idx_svc_user_id svc_user_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_svc_run_id svc_run_id TYPE set(100) GRANULARITY 1
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, started_at, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_starts_view TO calls_starts AS
SELECT project_id, id, trace_id, parent_id, thread_id, turn_id, op_name, display_name,
  assumeNotNull(started_at) AS started_at, attributes_dump, inputs_dump, input_refs, otel_dump,
  svc_user_id, svc_run_id, svc_run_step
FROM call_parts
WHERE call_parts.started_at IS NOT NULL;

-- (`call_parts.` names the column: the alias `started_at` would shadow it in WHERE.)

-- Deleted calls, one row each: a tiny table every read excludes by id (NOT IN), so a page of
-- start parts is exactly a page of visible calls.
CREATE TABLE IF NOT EXISTS calls_deleted (
  project_id String,
  id String,
  deleted_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_deleted_view TO calls_deleted AS
SELECT project_id, id, assumeNotNull(deleted_at) AS deleted_at
FROM call_parts
WHERE call_parts.deleted_at IS NOT NULL;

-- Back-fill from the calls already stored (once: the migration is then recorded). A part that
-- arrives between the views' creation and these inserts lands twice; the replacing engine folds
-- the copies, and reads never count one call twice (SCHEMA.md).
INSERT INTO calls_starts (project_id, id, trace_id, parent_id, thread_id, turn_id, op_name, display_name,
  started_at, attributes_dump, inputs_dump, input_refs, otel_dump, svc_user_id, svc_run_id, svc_run_step)
SELECT project_id, id, trace_id, parent_id, thread_id, turn_id, op_name, finalizeAggregation(display_name),
  assumeNotNull(started_at), attributes_dump, inputs_dump, input_refs, otel_dump, svc_user_id, svc_run_id, svc_run_step
FROM calls_merged
WHERE calls_merged.started_at IS NOT NULL;

INSERT INTO calls_deleted (project_id, id, deleted_at)
SELECT project_id, id, assumeNotNull(deleted_at)
FROM calls_merged
WHERE calls_merged.deleted_at IS NOT NULL;
