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
