-- Call rows without merging (issue 18; SCHEMA.md "calls_ends", "calls_renames"): a Call is its
-- row of calls_starts joined by id with its row of calls_ends (now holding the output too) and,
-- when it was renamed, its latest rename; deleted calls are left out through calls_deleted.
-- No read re-aggregates calls_merged any more (every page used to `GROUP BY id` there).
ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS output_dump Nullable(String);

-- The end parts' view, now with the output. The new view is created before the old one is
-- dropped, so an end part arriving meanwhile lands at least once (twice is a replay: folded).
CREATE MATERIALIZED VIEW IF NOT EXISTS calls_ends_output_view TO calls_ends AS
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end, output_dump
FROM call_parts
WHERE call_parts.ended_at IS NOT NULL;

DROP VIEW IF EXISTS calls_ends_view;

-- Back-fill (once): the end rows again, with their outputs. The replacing engine keeps the last
-- inserted row of a key, so the OPTIMIZE below leaves each ended call with its output.
INSERT INTO calls_ends (project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end, output_dump)
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end, output_dump
FROM calls_merged
WHERE calls_merged.ended_at IS NOT NULL;

OPTIMIZE TABLE calls_ends FINAL;

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

-- Back-fill (once): calls whose merged display name is not their start part's, i.e. renamed.
INSERT INTO calls_renames (project_id, id, display_name, renamed_at)
SELECT project_id, id, assumeNotNull(name), now64(6)
FROM (
  SELECT project_id, id, argMaxMerge(display_name) AS name
  FROM calls_merged
  WHERE (project_id, id) IN (SELECT project_id, id FROM calls_merged WHERE finalizeAggregation(display_name) IS NOT NULL)
  GROUP BY project_id, id
)
WHERE name IS NOT NULL
  AND (project_id, id, assumeNotNull(name)) NOT IN (SELECT project_id, id, ifNull(display_name, '') FROM calls_starts);
