-- Skip indexes for the filters the query service narrows on before merging (parent, turn, user);
-- 001 already indexes trace_id, op_name, thread_id, svc_run_id and sortable_datetime.
ALTER TABLE calls_merged ADD INDEX IF NOT EXISTS idx_parent_id parent_id TYPE bloom_filter GRANULARITY 1;
ALTER TABLE calls_merged ADD INDEX IF NOT EXISTS idx_turn_id turn_id TYPE bloom_filter GRANULARITY 1;
ALTER TABLE calls_merged ADD INDEX IF NOT EXISTS idx_svc_user_id svc_user_id TYPE bloom_filter GRANULARITY 1;
-- Build them for parts written before this migration (a one-off background mutation).
ALTER TABLE calls_merged MATERIALIZE INDEX idx_parent_id;
ALTER TABLE calls_merged MATERIALIZE INDEX idx_turn_id;
ALTER TABLE calls_merged MATERIALIZE INDEX idx_svc_user_id;
