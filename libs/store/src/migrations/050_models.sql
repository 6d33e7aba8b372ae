-- Model records (/v1/preview/models). ClickHouse has no unique constraint: several rows may
-- exist for one (entity, project, name) after a race between service instances; the record
-- is always the earliest stored row (created_at is set by the server at insert, id breaks ties),
-- so every reader agrees on one winner. See services/inference/src/models.ts.
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
ORDER BY (entity, project, name, created_at, id);
