-- Keys, users and entities (security issue). Small tables read with FINAL: every change
-- is a new row version (ReplacingMergeTree on `version`), so revoking is an insert.
CREATE TABLE IF NOT EXISTS weft_entities (
  name String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY name;

CREATE TABLE IF NOT EXISTS weft_users (
  user_id String,
  name String,
  is_admin UInt8,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY user_id;

-- `removed` = 1 ends a membership (a later version can restore it).
CREATE TABLE IF NOT EXISTS weft_memberships (
  entity String,
  user_id String,
  removed UInt8 DEFAULT 0,
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (user_id, entity);

-- Only the SHA-256 of a key is stored; `prefix` (the first characters) identifies it in listings.
CREATE TABLE IF NOT EXISTS weft_api_keys (
  key_hash String,
  key_id String,
  user_id String,
  name String,
  prefix String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  revoked_at Nullable(DateTime64(3, 'UTC')),
  version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY key_hash;
