-- Per-token prices by model (reference llm_token_prices). `pricing_level` is 'default' (seeded,
-- pricing_level_id 'default') or 'project' (pricing_level_id = the project). The key leads with
-- pricing_level_id, i.e. the project, so a project's lookups read only its rows and the defaults.
CREATE TABLE IF NOT EXISTS llm_token_prices (
  id String,
  pricing_level String,
  pricing_level_id String,
  provider_id String,
  llm_id String,
  effective_date DateTime64(3, 'UTC') DEFAULT now64(3),
  prompt_token_cost Float64,
  prompt_token_cost_unit String DEFAULT 'USD',
  completion_token_cost Float64,
  completion_token_cost_unit String DEFAULT 'USD',
  cache_read_input_token_cost Float64 DEFAULT 0,
  cache_creation_input_token_cost Float64 DEFAULT 0,
  created_by String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree(created_at)
ORDER BY (pricing_level_id, llm_id, effective_date, pricing_level, provider_id, id);
