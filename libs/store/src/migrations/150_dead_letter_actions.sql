-- What became of the Kafka dead-letter topic's records, replayed or discarded through
-- /admin/dead_letters/* (the topic itself is append-only). One row per action on a record
-- (`letter`: '<topic>/<partition>/<offset>'); the first one is what became of it (a record is
-- replayed or discarded once), read with argMin over `at`.
CREATE TABLE IF NOT EXISTS dead_letter_actions (
  letter String,
  action LowCardinality(String),
  at DateTime64(6, 'UTC'),
  by String
) ENGINE = MergeTree
ORDER BY (letter, at);
