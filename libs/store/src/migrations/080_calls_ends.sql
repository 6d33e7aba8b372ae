-- End parts, one row per ended call (issue 18; SCHEMA.md "calls_ends"): the end columns a filter,
-- sort, count, thread or chart reads (end time, exception, summary, output refs), keyed by call.
-- With calls_starts this answers "latency/status/cost over a filter" by joining the two tables
-- on the calls the start conditions select, instead of re-aggregating the project in
-- calls_merged. The output itself (large) is not copied here: filters on it still merge.
-- Every value column is Nullable so that a call with no end yet reads NULL through a LEFT JOIN.
CREATE TABLE IF NOT EXISTS calls_ends (
  project_id String,
  id String,
  ended_at Nullable(DateTime64(6, 'UTC')),
  exception Nullable(String),
  summary_dump Nullable(String),
  output_refs Array(String),
  svc_run_step_end Nullable(UInt64),
  -- Thread windows: a call started after t ended after t, so `ended_at > t` skips older granules.
  INDEX idx_ended_at ended_at TYPE minmax GRANULARITY 1
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS calls_ends_view TO calls_ends AS
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end
FROM call_parts
WHERE call_parts.ended_at IS NOT NULL;

-- Back-fill (once): a row of calls_merged holding an end time came from an end part (alone or
-- merged), so it holds that part's columns. Parts arriving meanwhile land twice; the replacing
-- engine folds them and reads take each id once (FINAL).
INSERT INTO calls_ends (project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end)
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end
FROM calls_merged
WHERE calls_merged.ended_at IS NOT NULL;
