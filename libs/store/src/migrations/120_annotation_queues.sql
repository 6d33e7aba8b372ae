-- Annotation queues (the reference's migration 023, its columns): queues, the calls in them, and
-- each annotator's progress on an item. Rows are never updated in place: a change inserts the
-- row's next version (ReplacingMergeTree by updated_at) and reads take the latest (FINAL), so
-- nothing here needs a mutation, on one node or a cluster.
CREATE TABLE IF NOT EXISTS annotation_queues (
  project_id String,
  id String,
  name String,
  description String,
  scorer_refs Array(String),
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  created_by String,
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, id);

-- One row per (queue, call): a call added twice, even by two requests at once, is one item (its
-- id is derived from the queue and the call, so both inserts carry the same id).
CREATE TABLE IF NOT EXISTS annotation_queue_items (
  project_id String,
  queue_id String,
  call_id String,
  id String,
  call_started_at DateTime64(6, 'UTC'),
  call_ended_at Nullable(DateTime64(6, 'UTC')),
  call_op_name String,
  call_trace_id String,
  display_fields Array(String),
  added_by Nullable(String),
  -- Microseconds: the calls of one request are added a microsecond apart, in the request's order.
  created_at DateTime64(6, 'UTC') DEFAULT now64(6),
  created_by String,
  updated_at DateTime64(6, 'UTC') DEFAULT now64(6),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, queue_id, call_id);

-- One row per (item, annotator): a state change replaces the annotator's row. 'unstarted' is 0,
-- so an item nobody worked on reads 'unstarted' (the reference's enum).
CREATE TABLE IF NOT EXISTS annotator_queue_items_progress (
  project_id String,
  queue_id String,
  queue_item_id String,
  annotator_id String,
  id String,
  annotation_state Enum8('unstarted' = 0, 'in_progress' = 1, 'completed' = 2, 'skipped' = 3) DEFAULT 'unstarted',
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3),
  deleted_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, queue_id, queue_item_id, annotator_id);
