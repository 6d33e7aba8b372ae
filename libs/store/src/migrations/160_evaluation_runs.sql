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
