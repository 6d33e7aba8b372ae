-- The schema of weft 1.0, whole: every table and materialized view a data dir holds (the
-- pre-1.0 migrations 001-161 squashed; libs/store/SCHEMA.md says why each is shaped so).
-- A data dir whose schema is exactly the last pre-1.0 one is upgraded to this in place; an
-- older one is refused (libs/store/src/migrate.ts, docs/operations.md "Upgrades").
-- From here on migrations are forward-only: each later change is a new NNN_name.sql file.

-- ---- Calls ----

-- Call parts: what every writer inserts, one row per start, end, whole call, rename or delete.
-- The Null engine keeps nothing; the materialized views below route each part's columns to the
-- tables reads use. Its column order is the writers' RowBinary layout (libs/store call-part-row.ts).
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

-- Start parts in time order: the columns a start part writes, one row per call, keyed by
-- (project, started_at, id), so streams in time order read a key range instead of merging the
-- project, and filters on start columns stop at the page size. The MATERIALIZED columns are
-- computed by the engine when a row is stored, never sent by a writer:
-- - line_start, line_svc, line_trace_name: fragments of the Call's JSON line, spliced with the
--   stored dumps on read (libs/query call-json.ts LINE_FRAGMENTS holds the same text; a test
--   checks it), so a stream does not re-serialize a call;
-- - *_size_bytes: include_storage_size without reading the dumps;
-- - is_turn: a call that is its own turn in a thread, the only rows thread statistics read
--   (libs/query threads.ts TURN_SQL, compared by a test).
-- The id, trace id and thread id filters are exact-ish (0.01 % false positives): a page of ids
-- or one trace then reads a handful of granules.
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
  line_trace_name String MATERIALIZED if(ifNull(op_name, '') = '', '', concat(',"trace_name":', toJSONString(multiIf(startsWith(assumeNotNull(op_name), 'weave:///') AND match(assumeNotNull(op_name), '/[^/:]*:'), regexpExtract(assumeNotNull(op_name), '/([^/:]*):', 1), assumeNotNull(op_name))))),
  attributes_size_bytes UInt64 MATERIALIZED length(ifNull(attributes_dump, '')),
  inputs_size_bytes UInt64 MATERIALIZED length(ifNull(inputs_dump, '')),
  is_turn UInt8 MATERIALIZED ifNull(turn_id = id, 0) AND ifNull(thread_id, '') != '',
  line_start String MATERIALIZED concat('{"id":', ifNull(toJSONString(id), 'null'), ',"project_id":', ifNull(toJSONString(project_id), 'null'), ',"op_name":', ifNull(toJSONString(ifNull(op_name, '')), 'null'), ',"trace_id":', ifNull(toJSONString(ifNull(trace_id, '')), 'null'), ',"parent_id":', ifNull(toJSONString(nullIf(parent_id, '')), 'null'), ',"thread_id":', ifNull(toJSONString(thread_id), 'null'), ',"turn_id":', ifNull(toJSONString(turn_id), 'null'), ',"started_at":', if(started_at IS NULL, 'null', concat('"', concat(replaceRegexpOne(formatDateTime(assumeNotNull(started_at), '%Y-%m-%dT%H:%i:%S.%f'), '([.]000)?000$', ''), 'Z'), '"'))),
  line_svc String MATERIALIZED concat(',"svc_user_id":', ifNull(toJSONString(svc_user_id), 'null'), ',"svc_run_id":', ifNull(toJSONString(svc_run_id), 'null'), ',"svc_run_step":', ifNull(toString(svc_run_step), 'null'), ',"wb_user_id":', ifNull(toJSONString(svc_user_id), 'null'), ',"wb_run_id":', ifNull(toJSONString(svc_run_id), 'null'), ',"wb_run_step":', ifNull(toString(svc_run_step), 'null')),
  INDEX idx_parent_id parent_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_turn_id turn_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_op_name op_name TYPE bloom_filter GRANULARITY 1,
  INDEX idx_svc_user_id svc_user_id TYPE bloom_filter GRANULARITY 1,
  INDEX idx_svc_run_id svc_run_id TYPE set(100) GRANULARITY 1,
  INDEX idx_id_exact id TYPE bloom_filter(0.0001) GRANULARITY 1,
  INDEX idx_trace_id_exact trace_id TYPE bloom_filter(0.0001) GRANULARITY 1,
  INDEX idx_thread_id_exact thread_id TYPE bloom_filter(0.0001) GRANULARITY 1
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, started_at, id)
SETTINGS index_granularity = 8192, merge_selector_base = 10;

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_starts_view TO calls_starts AS
SELECT project_id, id, trace_id, parent_id, thread_id, turn_id, op_name, display_name,
  assumeNotNull(started_at) AS started_at, attributes_dump, inputs_dump, input_refs, otel_dump,
  svc_user_id, svc_run_id, svc_run_step
FROM call_parts
WHERE call_parts.started_at IS NOT NULL;
-- (`call_parts.` names the column: the alias `started_at` would shadow it in WHERE.)

-- End parts, one row per ended call, keyed by call: the end columns a filter, sort, count,
-- thread or chart reads. A Call is its calls_starts row joined by id with this one. Every value
-- column is Nullable so that a call with no end yet reads NULL through a LEFT JOIN.
-- MATERIALIZED columns (computed by the engine when a row is stored):
-- - line_tail: the end half of the Call's JSON line (call-json.ts LINE_FRAGMENTS);
-- - status: summary.weave.status of an ended call: 'error' (an exception), 'descendant_error'
--   (summary.status_counts.error > 0), else 'success';
-- - usage: summary.usage as one tuple per model, counted as costs and charts read them
--   (prompt = prompt_tokens + input_tokens, completion = completion_tokens + output_tokens);
-- - *_size_bytes: include_storage_size without reading the dumps.
CREATE TABLE IF NOT EXISTS calls_ends (
  project_id String,
  id String,
  ended_at Nullable(DateTime64(6, 'UTC')),
  exception Nullable(String),
  summary_dump Nullable(String),
  output_refs Array(String),
  svc_run_step_end Nullable(UInt64),
  output_dump Nullable(String),
  line_tail String MATERIALIZED replaceAll(concat(',"ended_at":', if(ended_at IS NULL, 'null', concat('"', concat(replaceRegexpOne(formatDateTime(assumeNotNull(ended_at), '%Y-%m-%dT%H:%i:%S.%f'), '([.]000)?000$', ''), 'Z'), '"')), ',"output":', if(ifNull(output_dump, '') = '', 'null', assumeNotNull(output_dump)), ',"exception":', ifNull(toJSONString(exception), 'null'), ',"svc_run_step_end":', ifNull(toString(svc_run_step_end), 'null'), ',"wb_run_step_end":', ifNull(toString(svc_run_step_end), 'null'), ',"summary":', substring(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 1, length(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}')) - 1), if(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}') = '{}', '', ','), '"weave":{', if(startsWith(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')), '{') AND if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')) != '{}', substring(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')), 2, length(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave'))) - 2), ''), if(if(startsWith(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')), '{') AND if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')) != '{}', substring(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave')), 2, length(if(position(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), '"weave"') = 0, '', JSONExtractRaw(if(startsWith(ifNull(summary_dump, ''), '{'), assumeNotNull(summary_dump), '{}'), 'weave'))) - 2), '') = '', '', ','), '"status":', toJSONString(multiIf(ifNull(exception, '') != '', 'error', ended_at IS NULL, 'running', ifNull(toFloat64OrNull(if(JSONType(ifNull(summary_dump, ''), 'status_counts', 'error') = 'String', JSONExtractString(ifNull(summary_dump, ''), 'status_counts', 'error'), JSONExtractRaw(ifNull(summary_dump, ''), 'status_counts', 'error'))), 0) > 0, 'descendant_error', 'success'))), '\n', ' '),
  output_size_bytes UInt64 MATERIALIZED length(ifNull(output_dump, '')),
  summary_size_bytes UInt64 MATERIALIZED length(ifNull(summary_dump, '')),
  status LowCardinality(String) MATERIALIZED multiIf(ifNull(exception, '') != '', 'error', ifNull(toFloat64OrNull(if(JSONType(ifNull(summary_dump, ''), 'status_counts', 'error') = 'String', JSONExtractString(ifNull(summary_dump, ''), 'status_counts', 'error'), JSONExtractRaw(ifNull(summary_dump, ''), 'status_counts', 'error'))), 0) > 0, 'descendant_error', 'success'),
  usage Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64)) MATERIALIZED arrayMap(kv -> (kv.1, JSONExtractInt(kv.2, 'requests'), JSONExtractInt(kv.2, 'prompt_tokens') + JSONExtractInt(kv.2, 'input_tokens'), JSONExtractInt(kv.2, 'completion_tokens') + JSONExtractInt(kv.2, 'output_tokens'), JSONExtractInt(kv.2, 'total_tokens'), JSONExtractInt(kv.2, 'cache_read_input_tokens'), JSONExtractInt(kv.2, 'cache_creation_input_tokens')), JSONExtractKeysAndValuesRaw(ifNull(summary_dump, '{}'), 'usage')),
  -- Thread windows: a call started after t ended after t, so `ended_at > t` skips older granules.
  INDEX idx_ended_at ended_at TYPE minmax GRANULARITY 1
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, id)
SETTINGS index_granularity = 8192, merge_selector_base = 10;

-- (Its name is older than this baseline; kept so upgraded data dirs and new ones are alike.)
CREATE MATERIALIZED VIEW IF NOT EXISTS calls_ends_output_view TO calls_ends AS
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end, output_dump
FROM call_parts
WHERE call_parts.ended_at IS NOT NULL;

-- Deleted calls, one row each: a small table every read excludes by id, so a page of start
-- rows is a page of visible calls.
CREATE TABLE IF NOT EXISTS calls_deleted (
  project_id String,
  id String,
  deleted_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, id)
SETTINGS index_granularity = 8192, merge_selector_base = 10;

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_deleted_view TO calls_deleted AS
SELECT project_id, id, assumeNotNull(deleted_at) AS deleted_at
FROM call_parts
WHERE call_parts.deleted_at IS NOT NULL;

-- Renames (/call/update): one row per renamed call, the latest rename kept (by its acceptance
-- time). A read takes the rename over the start part's display name.
CREATE TABLE IF NOT EXISTS calls_renames (
  project_id String,
  id String,
  display_name String,
  renamed_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(renamed_at)
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_renames_view TO calls_renames AS
SELECT project_id, id, assumeNotNull(display_name) AS display_name, created_at AS renamed_at
FROM call_parts
WHERE call_parts.display_name IS NOT NULL AND call_parts.started_at IS NULL AND call_parts.ended_at IS NULL;

-- ---- Objects, tables, feedback, files ----

-- Object versions, content-addressed: one logical row per (project, kind, object_id, digest).
-- Every /obj/create inserts a row (re-publishing too); the aggregation keeps the first-seen
-- time (created_at: orders versions, gives version_index) and the last publish time
-- (published_at: the reference's `latest` alias moves on every publish, even a re-publish).
CREATE TABLE IF NOT EXISTS object_versions (
  project_id String,
  kind Enum8('op' = 1, 'object' = 2),
  object_id String,
  digest String,
  base_object_class SimpleAggregateFunction(any, Nullable(String)),
  leaf_object_class SimpleAggregateFunction(any, Nullable(String)),
  refs SimpleAggregateFunction(any, Array(String)),
  val_dump SimpleAggregateFunction(any, String),
  svc_user_id SimpleAggregateFunction(any, Nullable(String)),
  created_at SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
  published_at SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
  deleted_at SimpleAggregateFunction(max, Nullable(DateTime64(3, 'UTC')))
) ENGINE = AggregatingMergeTree
ORDER BY (project_id, kind, object_id, digest);

-- Table rows, content-addressed and shared by every table that holds them. Digests are
-- random, so a page of rows is a set of point lookups: small granules keep each one cheap.
CREATE TABLE IF NOT EXISTS table_rows (
  project_id String,
  digest String,
  refs Array(String),
  val_dump String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest)
SETTINGS index_granularity = 256;

-- A table's rows in order: one row per position instead of one array per table, so a
-- table of millions of rows is appended to and paged (by primary-key range on position)
-- without ever holding the whole list in memory. Rows repeat across table versions.
CREATE TABLE IF NOT EXISTS table_rows_index (
  project_id String,
  table_digest String,
  position UInt64,
  row_digest String
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, table_digest, position);

-- A table exists once its index is complete: this row is written last.
CREATE TABLE IF NOT EXISTS tables (
  project_id String,
  digest String,
  row_count UInt64,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest);

-- Feedback records. Replacing one is a real delete of the old id plus an insert, as in the
-- reference. The key leads with the ref so feedback for a page of calls reads a narrow range.
CREATE TABLE IF NOT EXISTS feedback (
  project_id String,
  svc_ref String,
  svc_user_id String,
  id String,
  feedback_type String,
  payload_dump String,
  creator Nullable(String),
  annotation_ref Nullable(String),
  runnable_ref Nullable(String),
  call_ref Nullable(String),
  trigger_ref Nullable(String),
  queue_id Nullable(String),
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, svc_ref, svc_user_id, id);

-- Files (an op's source code, other blobs the SDK uploads), content-addressed by the
-- reference's bytes digest. Stored in chunks of at most 100000 bytes (the reference's
-- FILE_CHUNK_SIZE), base64 text so any bytes travel through JSONEachRow unharmed.
CREATE TABLE IF NOT EXISTS files (
  project_id String,
  digest String,
  chunk_index UInt32,
  n_chunks UInt32,
  name String,
  val_base64 String,
  size_bytes UInt64,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest, chunk_index);

-- ---- Costs and models ----

-- Per-token prices by model (reference llm_token_prices). `pricing_level` is 'default' (seeded,
-- pricing_level_id 'default') or 'project' (pricing_level_id = the project). The key leads with
-- pricing_level_id, i.e. the project, so a project's lookups read only its rows and the defaults.
CREATE TABLE IF NOT EXISTS llm_token_prices (
  id String,
  pricing_level String,
  pricing_level_id String,
  provider_id String,
  llm_id String,
  effective_date DateTime64(3, 'UTC') DEFAULT now64(3),
  prompt_token_cost Float64,
  prompt_token_cost_unit String DEFAULT 'USD',
  completion_token_cost Float64,
  completion_token_cost_unit String DEFAULT 'USD',
  cache_read_input_token_cost Float64 DEFAULT 0,
  cache_creation_input_token_cost Float64 DEFAULT 0,
  created_by String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree(created_at)
ORDER BY (pricing_level_id, llm_id, effective_date, pricing_level, provider_id, id);

-- Model records (/v1/preview/models). `name` is unique within (entity, project): ClickHouse
-- has no unique constraint, so a create inserts with insert_deduplication_token =
-- (entity, project, name), and the deduplication window below makes ClickHouse drop every
-- later insert of the same name, atomically, also when creates race across processes.
-- See services/inference/src/models.ts.
CREATE TABLE IF NOT EXISTS models (
  entity String,
  project String,
  name String,
  id String,
  base_model String,
  run_id Nullable(String),
  created_by String,
  created_at DateTime64(6, 'UTC') DEFAULT now64(6)
) ENGINE = MergeTree
ORDER BY (entity, project, name, created_at, id)
SETTINGS non_replicated_deduplication_window = 100000;

-- ---- Keys, users, entities ----

-- Keys, users and entities. Small tables read with FINAL: every change
-- is a new row version (ReplacingMergeTree on `version`), so revoking is an insert.
CREATE TABLE IF NOT EXISTS weft_entities (
  name String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY name;

CREATE TABLE IF NOT EXISTS weft_users (
  user_id String,
  name String,
  is_admin UInt8,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY user_id;

-- `removed` = 1 ends a membership (a later version can restore it).
CREATE TABLE IF NOT EXISTS weft_memberships (
  entity String,
  user_id String,
  removed UInt8 DEFAULT 0,
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (user_id, entity);

-- Only the SHA-256 of a key is stored; `prefix` (the first characters) identifies it in listings.
CREATE TABLE IF NOT EXISTS weft_api_keys (
  key_hash String,
  key_id String,
  user_id String,
  name String,
  prefix String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  revoked_at Nullable(DateTime64(3, 'UTC')),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY key_hash;

-- ---- Server-side work and settings ----

-- Annotation queues (the reference's columns): queues, the calls in them, and
-- each annotator's progress on an item. Rows are never updated in place: a change inserts the
-- row's next version (ReplacingMergeTree by updated_at) and reads take the latest (FINAL), so
-- nothing here needs a mutation, on one node or a cluster.
CREATE TABLE IF NOT EXISTS annotation_queues (
  project_id String,
  id String,
  name String,
  description String,
  scorer_refs Array(String),
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  created_by String,
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, id);

-- One row per (queue, call): a call added twice, even by two requests at once, is one item (its
-- id is derived from the queue and the call, so both inserts carry the same id).
CREATE TABLE IF NOT EXISTS annotation_queue_items (
  project_id String,
  queue_id String,
  call_id String,
  id String,
  call_started_at DateTime64(6, 'UTC'),
  call_ended_at Nullable(DateTime64(6, 'UTC')),
  call_op_name String,
  call_trace_id String,
  display_fields Array(String),
  added_by Nullable(String),
  -- Microseconds: the calls of one request are added a microsecond apart, in the request's order.
  created_at DateTime64(6, 'UTC') DEFAULT now64(6),
  created_by String,
  updated_at DateTime64(6, 'UTC') DEFAULT now64(6),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, queue_id, call_id);

-- One row per (item, annotator): a state change replaces the annotator's row. 'unstarted' is 0,
-- so an item nobody worked on reads 'unstarted' (the reference's enum).
CREATE TABLE IF NOT EXISTS annotator_queue_items_progress (
  project_id String,
  queue_id String,
  queue_item_id String,
  annotator_id String,
  id String,
  annotation_state Enum8('unstarted' = 0, 'in_progress' = 1, 'completed' = 2, 'skipped' = 3) DEFAULT 'unstarted',
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, queue_id, queue_item_id, annotator_id);

-- Per-project settings set through Weave's project endpoints (retention: /project/ttl_settings).
-- One row per (project, setting) change; the latest wins (ReplacingMergeTree on updated_at, read
-- with FINAL). A setting's value is JSON text, so a new setting needs no new column.
CREATE TABLE IF NOT EXISTS project_settings (
  project_id String,
  name LowCardinality(String),
  value_json String,
  updated_by String,
  updated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, name);

-- OTLP log records, one row each, per project: GenAI events (gen_ai.*.message,
-- gen_ai.choice, gen_ai.client.inference.operation.details) and any other record. Read by
-- project and time, or by the span a record belongs to (the bloom index).
CREATE TABLE IF NOT EXISTS otel_logs (
  project_id String,
  time DateTime64(6, 'UTC'),
  observed_time DateTime64(6, 'UTC'),
  trace_id Nullable(String),
  span_id Nullable(String),
  severity_number UInt8,
  severity_text String,
  event_name LowCardinality(String),
  body_dump String,
  body_truncated UInt8,
  attributes_dump String,
  resource_dump String,
  scope_name LowCardinality(String),
  scope_version String,
  INDEX idx_span_id span_id TYPE bloom_filter(0.001) GRANULARITY 1
) ENGINE = MergeTree
ORDER BY (project_id, time);

-- Deletion jobs (/project/delete, /user_data/delete): what was asked, by whom and when, and how
-- far the job got. One row per change of a job (the latest wins: ReplacingMergeTree on
-- updated_at, read with FINAL); rows left and pending mutations are read from the tables
-- themselves and system.mutations (services/gateway/src/deletion-jobs.ts).
CREATE TABLE IF NOT EXISTS deletion_jobs (
  id String,
  kind LowCardinality(String),
  target String,
  requested_by String,
  requested_at DateTime64(6, 'UTC'),
  state LowCardinality(String),
  error Nullable(String),
  updated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY id;

-- What became of the Kafka dead-letter topic's records, replayed or discarded through
-- /admin/dead_letters/* (the topic itself is append-only). One row per action on a record
-- (`letter`: '<topic>/<partition>/<offset>'); the first one is what became of it (a record is
-- replayed or discarded once), read with argMin over `at`.
CREATE TABLE IF NOT EXISTS dead_letter_actions (
  letter String,
  action LowCardinality(String),
  at DateTime64(6, 'UTC'),
  by String
) ENGINE = MergeTree
ORDER BY (letter, at);

-- Server-side evaluation runs (/evaluations/evaluate_model): which process runs each one, kept
-- alive by its heartbeat, so a run whose process died is taken up again by another (or the same,
-- restarted) process and finished without repeating its finished rows
-- (services/inference/src/evaluation-registry.ts). The latest row of a run wins
-- (ReplacingMergeTree on heartbeat_at, read with FINAL).
CREATE TABLE IF NOT EXISTS evaluation_runs (
  project_id String,
  call_id String,
  owner String,
  state LowCardinality(String),
  heartbeat_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(heartbeat_at)
ORDER BY (project_id, call_id);

-- Cancellations, written once and never replaced, so a heartbeat can never undo one.
CREATE TABLE IF NOT EXISTS evaluation_cancels (
  project_id String,
  call_id String,
  requested_by String,
  requested_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, call_id);

-- Which inference process scores each Weave Monitor: one at a time, so no call is judged twice
-- by two processes; kept by a heartbeat each look, taken over when it goes quiet
-- (services/inference/src/monitor-leases.ts). The latest row wins (ReplacingMergeTree on
-- heartbeat_at, read with FINAL).
CREATE TABLE IF NOT EXISTS monitor_leases (
  project_id String,
  monitor String,
  owner String,
  heartbeat_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(heartbeat_at)
ORDER BY (project_id, monitor);

-- ---- Default prices ----

-- Default per-token prices (USD per token), pricing_level 'default'. Source: the providers'
-- public pricing pages (OpenAI, Anthropic, Google Gemini API, Groq and Together AI for Meta Llama,
-- Mistral, DeepSeek, Cohere, xAI), standard tier, short-context rates, as published in 2025;
-- model ids follow LiteLLM's model_prices_and_context_window.json naming (which the reference's
-- cost checkpoint is generated from). Effective date 2025-08-01;
-- check current prices before relying on them, and add project-level prices (/cost/create)
-- to override. Inserted only where (llm_id, effective_date) has no default row yet, so a later
-- price update lands as a migration of its own.
INSERT INTO llm_token_prices (id, pricing_level, pricing_level_id, provider_id, llm_id, effective_date,
  prompt_token_cost, prompt_token_cost_unit, completion_token_cost, completion_token_cost_unit,
  cache_read_input_token_cost, cache_creation_input_token_cost, created_by)
SELECT generateUUIDv4(), 'default', 'default', provider_id, llm_id, toDateTime64('2025-08-01 00:00:00', 3, 'UTC'),
  prompt, 'USD', completion, 'USD', cache_read, cache_creation, 'system'
FROM values('provider_id String, llm_id String, prompt Float64, completion Float64, cache_read Float64, cache_creation Float64',
  ('openai', 'gpt-5', 1.25e-06, 1e-05, 1.25e-07, 0.0),
  ('openai', 'gpt-5-mini', 2.5e-07, 2e-06, 2.5e-08, 0.0),
  ('openai', 'gpt-5-nano', 5e-08, 4e-07, 5e-09, 0.0),
  ('openai', 'gpt-4.1', 2e-06, 8e-06, 5e-07, 0.0),
  ('openai', 'gpt-4.1-mini', 4e-07, 1.6e-06, 1e-07, 0.0),
  ('openai', 'gpt-4.1-nano', 1e-07, 4e-07, 2.5e-08, 0.0),
  ('openai', 'gpt-4o', 2.5e-06, 1e-05, 1.25e-06, 0.0),
  ('openai', 'gpt-4o-2024-08-06', 2.5e-06, 1e-05, 1.25e-06, 0.0),
  ('openai', 'gpt-4o-mini', 1.5e-07, 6e-07, 7.5e-08, 0.0),
  ('openai', 'gpt-4o-mini-2024-07-18', 1.5e-07, 6e-07, 7.5e-08, 0.0),
  ('openai', 'gpt-4-turbo', 1e-05, 3e-05, 0.0, 0.0),
  ('openai', 'gpt-4', 3e-05, 6e-05, 0.0, 0.0),
  ('openai', 'gpt-3.5-turbo', 5e-07, 1.5e-06, 0.0, 0.0),
  ('openai', 'o1', 1.5e-05, 6e-05, 7.5e-06, 0.0),
  ('openai', 'o1-mini', 1.1e-06, 4.4e-06, 5.5e-07, 0.0),
  ('openai', 'o3', 2e-06, 8e-06, 5e-07, 0.0),
  ('openai', 'o3-mini', 1.1e-06, 4.4e-06, 5.5e-07, 0.0),
  ('openai', 'o4-mini', 1.1e-06, 4.4e-06, 2.75e-07, 0.0),
  ('openai', 'text-embedding-3-small', 2e-08, 0.0, 0.0, 0.0),
  ('openai', 'text-embedding-3-large', 1.3e-07, 0.0, 0.0, 0.0),
  ('anthropic', 'claude-opus-4-1-20250805', 1.5e-05, 7.5e-05, 1.5e-06, 1.875e-05),
  ('anthropic', 'claude-opus-4-20250514', 1.5e-05, 7.5e-05, 1.5e-06, 1.875e-05),
  ('anthropic', 'claude-sonnet-4-20250514', 3e-06, 1.5e-05, 3e-07, 3.75e-06),
  ('anthropic', 'claude-3-7-sonnet-20250219', 3e-06, 1.5e-05, 3e-07, 3.75e-06),
  ('anthropic', 'claude-3-5-sonnet-20241022', 3e-06, 1.5e-05, 3e-07, 3.75e-06),
  ('anthropic', 'claude-3-5-sonnet-20240620', 3e-06, 1.5e-05, 3e-07, 3.75e-06),
  ('anthropic', 'claude-3-5-haiku-20241022', 8e-07, 4e-06, 8e-08, 1e-06),
  ('anthropic', 'claude-3-opus-20240229', 1.5e-05, 7.5e-05, 1.5e-06, 1.875e-05),
  ('anthropic', 'claude-3-haiku-20240307', 2.5e-07, 1.25e-06, 3e-08, 3e-07),
  ('gemini', 'gemini-2.5-pro', 1.25e-06, 1e-05, 3.1e-07, 0.0),
  ('gemini', 'gemini-2.5-flash', 3e-07, 2.5e-06, 7.5e-08, 0.0),
  ('gemini', 'gemini-2.5-flash-lite', 1e-07, 4e-07, 2.5e-08, 0.0),
  ('gemini', 'gemini-2.0-flash', 1e-07, 4e-07, 2.5e-08, 0.0),
  ('gemini', 'gemini-2.0-flash-lite', 7.5e-08, 3e-07, 0.0, 0.0),
  ('gemini', 'gemini-1.5-pro', 1.25e-06, 5e-06, 0.0, 0.0),
  ('gemini', 'gemini-1.5-flash', 7.5e-08, 3e-07, 0.0, 0.0),
  ('groq', 'llama-3.3-70b-versatile', 5.9e-07, 7.9e-07, 0.0, 0.0),
  ('groq', 'llama-3.1-8b-instant', 5e-08, 8e-08, 0.0, 0.0),
  ('together_ai', 'meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo', 3.5e-06, 3.5e-06, 0.0, 0.0),
  ('together_ai', 'meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo', 8.8e-07, 8.8e-07, 0.0, 0.0),
  ('together_ai', 'meta-llama/Llama-3.3-70B-Instruct-Turbo', 8.8e-07, 8.8e-07, 0.0, 0.0),
  ('mistral', 'mistral-large-latest', 2e-06, 6e-06, 0.0, 0.0),
  ('mistral', 'mistral-medium-latest', 4e-07, 2e-06, 0.0, 0.0),
  ('mistral', 'mistral-small-latest', 1e-07, 3e-07, 0.0, 0.0),
  ('mistral', 'open-mistral-nemo', 1.5e-07, 1.5e-07, 0.0, 0.0),
  ('mistral', 'codestral-latest', 3e-07, 9e-07, 0.0, 0.0),
  ('deepseek', 'deepseek-chat', 2.7e-07, 1.1e-06, 7e-08, 0.0),
  ('deepseek', 'deepseek-reasoner', 5.5e-07, 2.19e-06, 1.4e-07, 0.0),
  ('cohere', 'command-r-plus', 2.5e-06, 1e-05, 0.0, 0.0),
  ('cohere', 'command-r', 1.5e-07, 6e-07, 0.0, 0.0),
  ('xai', 'grok-3', 3e-06, 1.5e-05, 7.5e-07, 0.0),
  ('xai', 'grok-3-mini', 3e-07, 5e-07, 7.5e-08, 0.0)
)
WHERE (llm_id, toDateTime64('2025-08-01 00:00:00', 3, 'UTC')) NOT IN
  (SELECT llm_id, effective_date FROM llm_token_prices WHERE pricing_level_id = 'default');
