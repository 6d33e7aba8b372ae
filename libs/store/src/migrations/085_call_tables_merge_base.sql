-- Ingest (issue 12): every insert of call parts makes a part in each call table its views feed,
-- and under a steady load most of the engine's CPU went to merging those parts again and again
-- (with the default base of 5, each row rewritten about log_5 of the table's size times). A base
-- of 10 halved the rows merged and cut the engine's CPU per call by a quarter to a third in
-- docs/performance.md ("merge_selector_base"), at the price of a few more parts per table between merges.
ALTER TABLE calls_merged MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_merged_stats MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_starts MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_ends MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_deleted MODIFY SETTING merge_selector_base = 10;
