import type { CallsAggregateReq } from '@weft/api';
import { CallsQueryPlan } from './calls';
import { priceRankOrderSql, projectPricesSql } from './costs';
import type { Params, BuiltQuery } from './params';

/**
 * Aggregate queries over the calls a filter/query matches (the web UI's analytics): a time
 * series, per-op and per-(op, model) figures, computed in ClickHouse. The matched set is exactly
 * the one /calls/query_stats counts (the same plan), so totals agree with it.
 */
export class CallsAggregatePlan {
  private readonly plan: CallsQueryPlan;

  constructor(private readonly req: CallsAggregateReq) {
    this.plan = new CallsQueryPlan({ ...req, sort_by: [] });
  }

  /** The matched calls, one row each with the given columns (calls_starts ⋈ calls_ends where possible). */
  private mergedSql(p: Params, columns: string[], endsOnly?: string): string {
    return this.plan.matchedCallsSql(p, columns, endsOnly);
  }

  /** Earliest and latest start among the matched calls. */
  rangeQuery(): BuiltQuery {
    const p = this.plan.params;
    const sql = `SELECT toUnixTimestamp64Micro(min(started_at)) AS min_us, toUnixTimestamp64Micro(max(started_at)) AS max_us, count() AS calls
    FROM (${this.mergedSql(p, ['started_at'])})`;
    return { sql, params: p.values };
  }

  /**
   * Calls, errors and latency quantiles per time bucket of `bucketSeconds`, per op, and over all
   * (`kind` 'bucket', 'op', 'total'): one pass over the matched calls for the three groupings.
   */
  figuresQuery(bucketSeconds: number): BuiltQuery {
    const p = this.plan.params;
    const b = p.add(bucketSeconds, 'UInt32');
    const sql = `SELECT multiIf(grouping(t) = 0, 'bucket', grouping(op_name) = 0, 'op', 'total') AS kind, t, op_name, ${callFigures()}
    FROM (
      SELECT toUnixTimestamp(toStartOfInterval(started_at, toIntervalSecond(${b}))) AS t, op_name, ended_at, exception, started_at
      FROM (${this.mergedSql(p, ['op_name', 'started_at', 'ended_at', 'exception'])})
    )
    GROUP BY GROUPING SETS ((t), (op_name), ()) ORDER BY kind, t, calls DESC, op_name`;
    return { sql, params: p.values };
  }

  /**
   * Tokens and cost per (op, model) from summary.usage (calls_ends' ready-made `usage`: no
   * summary parsed here, and only calls with usage are joined); each (call, model) priced once
   * with the price in force at the call's start (as include_costs); unpriced usage counts tokens at cost 0.
   */
  usageQuery(): BuiltQuery {
    const p = this.plan.params;
    const pid = this.plan.projectParam;
    const calls = this.mergedSql(p, ['op_name', 'started_at', 'usage'], 'notEmpty(usage)');
    const cost = `(u.prompt_tokens - u.cache_read_input_tokens - u.cache_creation_input_tokens) * pr.prompt_token_cost
        + u.completion_tokens * pr.completion_token_cost + u.cache_read_input_tokens * pr.cache_read_input_token_cost
        + u.cache_creation_input_tokens * pr.cache_creation_input_token_cost`;
    const usageRows = `SELECT id AS call_id, started_at, op_name, m.model AS llm_id, m.requests AS requests, m.prompt_tokens AS prompt_tokens,
        m.completion_tokens AS completion_tokens, m.total_tokens AS total_tokens, m.cache_read_input_tokens AS cache_read_input_tokens,
        m.cache_creation_input_tokens AS cache_creation_input_tokens
      FROM (${calls}) ARRAY JOIN usage AS m`;
    const sql = `SELECT op_name, llm_id AS model, uniqExact(call_id) AS calls, sum(n_requests) AS requests,
      sum(n_prompt) AS prompt_tokens, sum(n_completion) AS completion_tokens, sum(n_total) AS total_tokens, sum(call_cost) AS cost
    FROM (
      SELECT u.call_id AS call_id, u.op_name AS op_name, u.llm_id AS llm_id, u.requests AS n_requests, u.prompt_tokens AS n_prompt,
        u.completion_tokens AS n_completion, if(u.total_tokens > 0, u.total_tokens, u.prompt_tokens + u.completion_tokens) AS n_total,
        if(pr.llm_id = '', 0, ${cost}) AS call_cost,
        row_number() OVER (PARTITION BY u.call_id, u.llm_id ORDER BY ${priceRankOrderSql(pid)}) AS rn
      FROM (${usageRows}) AS u
      LEFT JOIN (${projectPricesSql(pid)}) AS pr ON u.llm_id = pr.llm_id
    ) WHERE rn = 1
    GROUP BY op_name, model`;
    return { sql, params: p.values };
  }
}

/** Count, errors (an exception), and exact p50/p99 of whole-ms latency over ended calls (NULL when none ended). */
function callFigures(): string {
  const ms = `intDiv(toUnixTimestamp64Micro(ended_at) - toUnixTimestamp64Micro(started_at), 1000)`;
  // Both levels from one state (the latencies are collected and sorted once, not twice).
  const qs = `quantilesExactInclusiveIf(0.5, 0.99)(toFloat64(${ms}), ended_at IS NOT NULL)`;
  const q = (i: number) => `if(countIf(ended_at IS NOT NULL) = 0, NULL, ${qs}[${i}])`;
  return `count() AS calls, countIf(exception IS NOT NULL) AS errors, ${q(1)} AS p50_latency_ms, ${q(2)} AS p99_latency_ms`;
}

/** Bucket widths a person reads easily, smallest first. */
const NICE_BUCKETS = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400];

/** The smallest nice width giving at most `maxBuckets` buckets over [minUs, maxUs]. */
export function chooseBucketSeconds(minUs: number, maxUs: number, maxBuckets = 120): number {
  const span = Math.max(0, maxUs - minUs) / 1e6;
  return NICE_BUCKETS.find((b) => span / b < maxBuckets) ?? NICE_BUCKETS[NICE_BUCKETS.length - 1]!;
}
