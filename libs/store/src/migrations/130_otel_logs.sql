-- OTLP log records (issue 38), one row each, per project: GenAI events (gen_ai.*.message,
-- gen_ai.choice, gen_ai.client.inference.operation.details) and any other record. Read by
-- project and time, or by the span a record belongs to (the bloom index).
CREATE TABLE IF NOT EXISTS otel_logs (
  project_id String,
  time DateTime64(6, 'UTC'),
  observed_time DateTime64(6, 'UTC'),
  trace_id Nullable(String),
  span_id Nullable(String),
  severity_number UInt8,
  severity_text String,
  event_name LowCardinality(String),
  body_dump String,
  body_truncated UInt8,
  attributes_dump String,
  resource_dump String,
  scope_name LowCardinality(String),
  scope_version String,
  INDEX idx_span_id span_id TYPE bloom_filter(0.001) GRANULARITY 1
) ENGINE = MergeTree
ORDER BY (project_id, time);
