-- Table rows, content-addressed and shared by every table that holds them. Digests are
-- random, so a page of rows is a set of point lookups: small granules keep each one cheap.
CREATE TABLE IF NOT EXISTS table_rows (
  project_id String,
  digest String,
  refs Array(String),
  val_dump String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest)
SETTINGS index_granularity = 256;

-- A table's rows in order: one row per position instead of one array per table, so a
-- table of millions of rows is appended to and paged (by primary-key range on position)
-- without ever holding the whole list in memory. Rows repeat across table versions.
CREATE TABLE IF NOT EXISTS table_rows_index (
  project_id String,
  table_digest String,
  position UInt64,
  row_digest String
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, table_digest, position);

-- A table exists once its index is complete: this row is written last.
CREATE TABLE IF NOT EXISTS tables (
  project_id String,
  digest String,
  row_count UInt64,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest);
