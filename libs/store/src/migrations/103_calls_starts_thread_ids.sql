-- Lookups by thread id (a page of threads' statistics, the UI's thread view, `thread_ids`), as
-- 101 and 102 did for call and trace ids (issue 18; SCHEMA.md "calls_starts"): at 2.5 % false
-- positives the 070 filter passed ~598 of 617 granules for the 140 candidate threads of a page
-- of 20 (their statistics: ~300 ms of CPU at 10M calls); at 0.01 %, ~50 ms.
ALTER TABLE calls_starts ADD INDEX IF NOT EXISTS idx_thread_id_exact thread_id TYPE bloom_filter(0.0001) GRANULARITY 1;

ALTER TABLE calls_starts MATERIALIZE INDEX idx_thread_id_exact SETTINGS mutations_sync = 1;

ALTER TABLE calls_starts DROP INDEX IF EXISTS idx_thread_id;
