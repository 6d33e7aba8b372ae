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
