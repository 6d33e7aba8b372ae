-- Analytics facts by segment (libs/query/src/call-facts.ts): a day's facts are the builds of
-- contiguous ranges of its calls' starts, so a day still being written is built a range at a
-- time (its newest calls, a touched range again), never whole again. Each row is the current
-- state of one segment, keyed by where it starts: its build, what the build read, or its
-- removal (to_us = from_us, when a merge absorbed it). The latest version wins (read with FINAL).
CREATE TABLE IF NOT EXISTS call_facts_segments (
  project_id String,
  day Date,
  -- The calls started in [from_us, to_us) (µs since the epoch, within the day).
  from_us Int64,
  to_us Int64,
  build UInt64,
  calls UInt64,
  starts_block UInt64,
  ends_block UInt64,
  deleted_block UInt64,
  prices_block UInt64,
  format UInt16,
  -- A build, a later look that found nothing written since touching it (its watermark moved on), a removal.
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, day, from_us);

-- The whole-day builds are no longer read: their days are built again by segment, and the rows
-- of their builds removed as superseded.
DROP TABLE IF EXISTS call_facts_days;
