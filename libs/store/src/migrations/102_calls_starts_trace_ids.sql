-- Lookups by trace id (one trace: the UI's trace view, `trace_ids`), as 101 did for call ids
-- (issue 18; SCHEMA.md "calls_starts"): the bloom filter of 070 (false positives 2.5 %) passed
-- ~29 of 1,227 granules for one trace of 10M calls, read twice per page (the start rows and the
-- ids their end rows are looked up by); at 0.01 % one or two. ~2.4 MiB per 10M calls.
ALTER TABLE calls_starts ADD INDEX IF NOT EXISTS idx_trace_id_exact trace_id TYPE bloom_filter(0.0001) GRANULARITY 1;

ALTER TABLE calls_starts MATERIALIZE INDEX idx_trace_id_exact SETTINGS mutations_sync = 1;

ALTER TABLE calls_starts DROP INDEX IF EXISTS idx_trace_id;
