-- Feedback records. Replacing one is a real delete of the old id plus an insert, as in the
-- reference. The key leads with the ref so feedback for a page of calls reads a narrow range.
CREATE TABLE IF NOT EXISTS feedback (
  project_id String,
  svc_ref String,
  svc_user_id String,
  id String,
  feedback_type String,
  payload_dump String,
  creator Nullable(String),
  annotation_ref Nullable(String),
  runnable_ref Nullable(String),
  call_ref Nullable(String),
  trigger_ref Nullable(String),
  queue_id Nullable(String),
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, svc_ref, svc_user_id, id);
