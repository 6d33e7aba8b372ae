-- Analytics facts (libs/query/src/call-facts.ts, docs/analytics.md "How figures stay exact and fast"):
-- the per-call base of /analytics/query — one row per visible call, with its own usage — kept
-- per (project, day) so a settled day is not joined and rolled up again on every query. A day's
-- rows are used only while nothing written since its build could change them; any other day is
-- read from calls_starts ⋈ calls_ends as before.

-- One build of a day's calls; `build` names the build (older builds' rows are removed later).
CREATE TABLE IF NOT EXISTS call_facts (
  project_id String,
  day Date,
  build UInt64,
  id String,
  started_at DateTime64(6, 'UTC'),
  ended_at Nullable(DateTime64(6, 'UTC')),
  op_name Nullable(String),
  status Nullable(String),
  exception Nullable(String),
  parent_id Nullable(String),
  trace_id Nullable(String),
  thread_id Nullable(String),
  svc_user_id Nullable(String),
  usage Array(Tuple(model String, requests Int64, prompt_tokens Int64, completion_tokens Int64, total_tokens Int64, cache_read_input_tokens Int64, cache_creation_input_tokens Int64)),
  -- Each usage entry's cost at the prices of the build (NULL: no price for its model).
  usage_cost Array(Nullable(Float64))
) ENGINE = MergeTree
ORDER BY (project_id, day, build, started_at, id);

-- Each day's current build, with the source tables' block numbers before it read them: a row
-- inserted after it carries a higher `_block_number`, a delete a higher mutation number (and a
-- price added or removed since makes every day's costs stale).
-- The latest build of a day wins (ReplacingMergeTree on build, read with FINAL).
CREATE TABLE IF NOT EXISTS call_facts_days (
  project_id String,
  day Date,
  build UInt64,
  calls UInt64,
  starts_block UInt64,
  ends_block UInt64,
  deleted_block UInt64,
  prices_block UInt64
) ENGINE = ReplacingMergeTree(build)
ORDER BY (project_id, day);

-- Every row of the call tables keeps the number of the insert that wrote it (`_block_number`),
-- through merges: what was written since a build is found without reading what was not.
ALTER TABLE calls_starts MODIFY SETTING enable_block_number_column = 1;
ALTER TABLE calls_ends MODIFY SETTING enable_block_number_column = 1;
ALTER TABLE calls_deleted MODIFY SETTING enable_block_number_column = 1;
