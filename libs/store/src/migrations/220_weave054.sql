-- What Weave 0.54's interface adds that weft keeps (docs/api.md, "Weave 0.54's routes"): object
-- aliases and version tags (every statement in libs/objects/src/object-labels.ts) and the links of
-- dataset rows to the calls, spans and conversations they came from (libs/objects/src/dataset-sources.ts).

-- An alias names one version of an object (moved by setting it again); the latest row of
-- (object, alias) wins, a removed alias keeps a row with deleted = 1.
CREATE TABLE IF NOT EXISTS object_aliases (
  project_id String,
  object_id String,
  alias String,
  digest String,
  deleted UInt8,
  updated_at DateTime64(6, 'UTC') DEFAULT now64(6)
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, object_id, alias);

-- A tag marks one version of an object; the latest row of (version, tag) wins.
CREATE TABLE IF NOT EXISTS object_tags (
  project_id String,
  object_id String,
  digest String,
  tag String,
  deleted UInt8,
  updated_at DateTime64(6, 'UTC') DEFAULT now64(6)
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, object_id, digest, tag);

-- A dataset row's provenance: one row per (dataset, row, source); the latest row wins.
CREATE TABLE IF NOT EXISTS dataset_source_links (
  project_id String,
  dataset_object_id String,
  row_digest String,
  source_kind LowCardinality(String),
  source_id String,
  source_trace_id String,
  id String,
  dataset_digest String,
  link_metadata String,
  added_by Nullable(String),
  created_at DateTime64(6, 'UTC'),
  updated_at DateTime64(6, 'UTC') DEFAULT now64(6),
  deleted_at Nullable(DateTime64(6, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, dataset_object_id, row_digest, source_kind, source_id);
