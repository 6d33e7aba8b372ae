-- Alerts (docs/alerts.md; every statement on these tables is in services/query/src/alerts/repository.ts).
-- The alert rules themselves are Weave AlertSpec objects (object_versions); these tables hold what
-- weft keeps about them: where notifications go, each alert's state, its transitions, the outbox of
-- their deliveries, mutes, and the lease of the one process that evaluates them.

-- A project's notification channels (a webhook URL, JSON or Slack body, an optional HMAC secret).
-- The latest row of a channel wins; a deleted channel keeps a row with deleted = 1.
CREATE TABLE IF NOT EXISTS alert_channels (
  project_id String,
  id String,
  name String,
  url String,
  format LowCardinality(String),
  secret String,
  deleted UInt8,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, id);

-- Each alert's state after its last evaluation (ok, firing, resolved), the figure then (and the
-- last 60 figures, the UI's sparkline), and how many transitions it has made (the next event's number: events are numbered, so an event written
-- twice by a pass that died between two statements is one row).
CREATE TABLE IF NOT EXISTS alert_states (
  project_id String,
  alert String,
  state LowCardinality(String),
  transitions UInt64,
  value Nullable(Float64),
  recent Array(Float64),
  calls UInt64,
  evaluated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(evaluated_at)
ORDER BY (project_id, alert);

-- One row per transition (firing or resolved): the notification's body as sent to every channel.
CREATE TABLE IF NOT EXISTS alert_events (
  project_id String,
  alert String,
  id String,
  alert_ref String,
  state LowCardinality(String),
  value Float64,
  threshold Float64,
  muted UInt8,
  body String,
  created_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (project_id, alert, id);

-- The outbox: one row per (event, channel), pending until the receiver answered 2xx (sent) or the
-- event is too old to deliver (failed). The latest row wins.
CREATE TABLE IF NOT EXISTS alert_deliveries (
  project_id String,
  event_id String,
  channel_id String,
  alert String,
  status LowCardinality(String),
  attempts UInt32,
  next_attempt_at DateTime64(6, 'UTC'),
  last_code Nullable(UInt16),
  last_error Nullable(String),
  created_at DateTime64(6, 'UTC'),
  updated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, event_id, channel_id);

-- The delivery log: every attempt, with the receiver's answer.
CREATE TABLE IF NOT EXISTS alert_delivery_attempts (
  project_id String,
  event_id String,
  channel_id String,
  alert String,
  attempt UInt32,
  ok UInt8,
  code Nullable(UInt16),
  error Nullable(String),
  at DateTime64(6, 'UTC')
) ENGINE = MergeTree
ORDER BY (project_id, event_id, channel_id, at);

-- Mutes: an alert's transitions are recorded but not delivered until `until` (NULL: unmuted).
CREATE TABLE IF NOT EXISTS alert_mutes (
  project_id String,
  alert String,
  until Nullable(DateTime64(3, 'UTC')),
  updated_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (project_id, alert);

-- The one process that evaluates alerts and delivers their notifications (the latest heartbeat wins).
CREATE TABLE IF NOT EXISTS alert_leases (
  name String,
  owner String,
  heartbeat_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(heartbeat_at)
ORDER BY name;
