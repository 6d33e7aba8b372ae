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
