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
