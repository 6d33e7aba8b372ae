-- Object versions, content-addressed: one logical row per (project, kind, object_id, digest).
-- Every /obj/create inserts a row (re-publishing too); the aggregation keeps the first-seen
-- time (created_at: orders versions, gives version_index) and the last publish time
-- (published_at: the reference's `latest` alias moves on every publish, even a re-publish).
CREATE TABLE IF NOT EXISTS object_versions (
  project_id String,
  kind Enum8('op' = 1, 'object' = 2),
  object_id String,
  digest String,
  base_object_class SimpleAggregateFunction(any, Nullable(String)),
  leaf_object_class SimpleAggregateFunction(any, Nullable(String)),
  refs SimpleAggregateFunction(any, Array(String)),
  val_dump SimpleAggregateFunction(any, String),
  svc_user_id SimpleAggregateFunction(any, Nullable(String)),
  created_at SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
  published_at SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
  deleted_at SimpleAggregateFunction(max, Nullable(DateTime64(3, 'UTC')))
) ENGINE = AggregatingMergeTree
ORDER BY (project_id, kind, object_id, digest);
