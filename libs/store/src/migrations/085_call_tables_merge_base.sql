-- Ingest (issue 12): the call tables are fed by every insert of call parts, and under a steady
-- load most of the engine's CPU went to merging their parts again and again (each row rewritten
-- about log_5 of the table's size times). A wider merge base writes each row fewer times, at the
-- price of a few more parts per table (bench/RESULTS.md, "merges").
ALTER TABLE calls_merged MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_merged_stats MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_starts MODIFY SETTING merge_selector_base = 10;
ALTER TABLE calls_deleted MODIFY SETTING merge_selector_base = 10;
