-- No read needs calls_merged or calls_merged_stats any more (issue 18; SCHEMA.md): calls are read
-- from calls_starts ⋈ calls_ends (090, 091), storage sizes from the columns below. Their views
-- were the largest share of an insert's engine CPU (issue 12, bench:ingest-engine): each insert
-- made a part in both tables and the background merges rewrote them again and again. The views
-- go; the tables and their rows stay (back-fills read them; nothing is dropped).

-- Storage sizes (include_storage_size, include_total_storage_size): the byte length of each JSON
-- dump, computed by the engine as a row is written; existing rows get theirs now.
ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS attributes_size_bytes UInt64 MATERIALIZED length(ifNull(attributes_dump, ''));

ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS inputs_size_bytes UInt64 MATERIALIZED length(ifNull(inputs_dump, ''));

ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS output_size_bytes UInt64 MATERIALIZED length(ifNull(output_dump, ''));

ALTER TABLE calls_ends ADD COLUMN IF NOT EXISTS summary_size_bytes UInt64 MATERIALIZED length(ifNull(summary_dump, ''));

ALTER TABLE calls_starts MATERIALIZE COLUMN attributes_size_bytes SETTINGS mutations_sync = 2;

ALTER TABLE calls_starts MATERIALIZE COLUMN inputs_size_bytes SETTINGS mutations_sync = 2;

ALTER TABLE calls_ends MATERIALIZE COLUMN output_size_bytes SETTINGS mutations_sync = 2;

ALTER TABLE calls_ends MATERIALIZE COLUMN summary_size_bytes SETTINGS mutations_sync = 2;

DROP VIEW IF EXISTS calls_merged_view;

DROP VIEW IF EXISTS calls_merged_stats_view;
