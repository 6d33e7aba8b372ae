import type { CallsAggregateReq } from '@weft/api';
import { CallsQueryPlan } from './calls';
import { withOwnUsageSql } from './own-usage';
import { priceRankOrderSql, projectPricesSql, tokenCostSql } from './costs';
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
   * Tokens and cost per (op, model) from each call's own usage (own-usage.ts), each (call, model) priced with the price
   * in force at the call's start (as include_costs); unpriced usage counts tokens at cost 0.
   * Reads calls_ends' ready-made `usage` (no summary parsed) of the calls that have one (an
   * inner join). Pricing is linear in the token counts and the price picked for a call depends
   * on its start only through which of its model's prices are already effective then (the
   * price "epoch"), so rows are summed per (op, model, epoch) first and each sum is priced once
   * with priceRankOrderSql's order, instead of a window over every (call, model).
   */
  usageQuery(): BuiltQuery {
    const p = this.plan.params;
    const pid = this.plan.projectParam;
    // Each call's own usage: the Weave SDK rolls children's usage up into their parent's summary.
    const calls = withOwnUsageSql(
      this.mergedSql(p, ['op_name', 'started_at', 'usage'], 'notEmpty(usage)'),
      ['op_name', 'started_at', 'usage'],
      pid,
    );
    // Each model's effective dates (the project's prices and the defaults): a small constant map.
    const dates = `(SELECT mapFromArrays(groupArray(llm_id), groupArray(ds)) FROM (SELECT llm_id, groupArray(effective_date) AS ds FROM (${projectPricesSql(pid)}) GROUP BY llm_id))`;
    const sums = `SELECT op_name, m.model AS llm_id, arrayCount(d -> d <= started_at, ${dates}[m.model]) AS epoch, any(started_at) AS epoch_start,
        count() AS calls, sum(m.requests) AS requests, sum(m.prompt_tokens) AS prompt_tokens, sum(m.completion_tokens) AS completion_tokens,
        sum(if(m.total_tokens > 0, m.total_tokens, m.prompt_tokens + m.completion_tokens)) AS total_tokens,
        sum(m.cache_read_input_tokens) AS cache_read_input_tokens, sum(m.cache_creation_input_tokens) AS cache_creation_input_tokens
      FROM (${calls}) ARRAY JOIN usage AS m
      GROUP BY op_name, llm_id, epoch`;
    const cost = `if(pr.llm_id = '', 0, ${tokenCostSql({
      prompt: 'u.prompt_tokens',
      completion: 'u.completion_tokens',
      cacheRead: 'u.cache_read_input_tokens',
      cacheCreation: 'u.cache_creation_input_tokens',
      promptCost: 'pr.prompt_token_cost',
      completionCost: 'pr.completion_token_cost',
      cacheReadCost: 'pr.cache_read_input_token_cost',
      cacheCreationCost: 'pr.cache_creation_input_token_cost',
    })})`;
    // Every call of an epoch picks the same price: its sum is priced as one of them (epoch_start) is.
    const rank = priceRankOrderSql(pid, 'u.epoch_start');
    const sql = `SELECT op_name, llm_id AS model, sum(calls) AS calls, sum(requests) AS requests, sum(prompt_tokens) AS prompt_tokens,
      sum(completion_tokens) AS completion_tokens, sum(total_tokens) AS total_tokens, sum(cost) AS cost
    FROM (
      SELECT u.op_name AS op_name, u.llm_id AS llm_id, u.calls AS calls, u.requests AS requests, u.prompt_tokens AS prompt_tokens,
        u.completion_tokens AS completion_tokens, u.total_tokens AS total_tokens, ${cost} AS cost,
        row_number() OVER (PARTITION BY u.op_name, u.llm_id, u.epoch ORDER BY ${rank}) AS rn
      FROM (${sums}) AS u
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
