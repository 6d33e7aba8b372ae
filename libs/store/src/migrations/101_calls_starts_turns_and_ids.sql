-- Turn calls marked, call ids found exactly (issue 18; SCHEMA.md "calls_starts").
-- is_turn: 1 for a call that is its own turn in a thread (turn_id = id, a thread id), the only
-- rows thread statistics read (libs/query threads.ts TURN_SQL, which a test compares with this
-- text). MATERIALIZED: computed by the engine as a start row is stored, never sent by a writer.
-- Finding the turns of a time window read two id columns per call and compared them (10M calls,
-- 5M in the window: ~330 ms of CPU); this is one byte per call.
ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS is_turn UInt8 MATERIALIZED ifNull(turn_id = id, 0) AND ifNull(thread_id, '') != '';

ALTER TABLE calls_starts MATERIALIZE COLUMN is_turn SETTINGS mutations_sync = 1;

-- Lookups by call id (a page of ids picked by a sort on end columns, /call/read, call_ids): the
-- bloom filter of 070 (false positives 2.5 %) passes ~27 of 1,227 granules for one id and 1,118
-- for a page of 100, so a page read whole granules of the project's line fragments. At 0.01 %
-- a page of 100 ids reads ~114 granules; the filter is ~24 MiB per 10M calls instead of ~10.
ALTER TABLE calls_starts ADD INDEX IF NOT EXISTS idx_id_exact id TYPE bloom_filter(0.0001) GRANULARITY 1;

ALTER TABLE calls_starts MATERIALIZE INDEX idx_id_exact SETTINGS mutations_sync = 1;

-- The coarse one is superseded: every insert and merge no longer builds it.
ALTER TABLE calls_starts DROP INDEX IF EXISTS idx_id;
