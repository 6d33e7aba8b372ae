-- Analytics facts keep, beside each call's columns, what queries compute from them (libs/query
-- call-facts.ts DERIVED_FACT_COLUMNS): the op's name without its version, the latency, whether it
-- failed, its own tokens and cost. A query over facts then groups and sums stored values rather
-- than evaluating a regular expression, two timestamps and lambdas over arrays on every row.
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS op_base LowCardinality(Nullable(String));
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS latency_ms Nullable(Float64);
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS errored UInt8;
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS own_requests Int64;
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS own_prompt_tokens Int64;
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS own_completion_tokens Int64;
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS own_total_tokens Int64;
ALTER TABLE call_facts ADD COLUMN IF NOT EXISTS own_cost_total Float64;

-- The shape of the facts a build wrote (FACTS_FORMAT): a day built in an older shape is not
-- current, so the next pass builds it again (its old rows are then superseded and removed).
ALTER TABLE call_facts_days ADD COLUMN IF NOT EXISTS format UInt16 DEFAULT 1;
