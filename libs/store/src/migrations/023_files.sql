-- Files (an op's source code, other blobs the SDK uploads), content-addressed by the
-- reference's bytes digest. Stored in chunks of at most 100000 bytes (the reference's
-- FILE_CHUNK_SIZE), base64 text so any bytes travel through JSONEachRow unharmed.
CREATE TABLE IF NOT EXISTS files (
  project_id String,
  digest String,
  chunk_index UInt32,
  n_chunks UInt32,
  name String,
  val_base64 String,
  size_bytes UInt64,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, digest, chunk_index);
