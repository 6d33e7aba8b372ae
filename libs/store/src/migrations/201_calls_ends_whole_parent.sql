-- A call's own usage is its summary's usage less its children's (libs/query own-usage.ts), so
-- every usage total needs each child's parent id. It is on the start row; reading it there joins
-- every child with usage to the project's whole calls_starts. A whole-call part (Weave's
-- calls_complete, a start and end in one batch, every OTLP span) carries both halves, so its end
-- row keeps the parent id too: children's usage is then summed from calls_ends alone, and only
-- the end rows that came apart from their start (whole_part = 0) are joined to their start row.
ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS whole_part UInt8;

ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS whole_parent_id Nullable(String);

-- The end parts' view with the two columns. The new view is created before the old one is
-- dropped, so an end part arriving meanwhile lands at least once (twice is a replay: folded).
CREATE MATERIALIZED VIEW IF NOT EXISTS calls_ends_view TO calls_ends AS
SELECT project_id, id, ended_at, exception, summary_dump, output_refs, svc_run_step_end, output_dump,
  toUInt8(call_parts.started_at IS NOT NULL) AS whole_part, if(call_parts.started_at IS NOT NULL, parent_id, NULL) AS whole_parent_id
FROM call_parts
WHERE call_parts.ended_at IS NOT NULL;

DROP VIEW IF EXISTS calls_ends_output_view;
