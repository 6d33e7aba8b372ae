import type { CallFilter } from '@weft/api';
import { CallsQueryPlan } from './calls';
import { modelPricesSql, pickedPriceSql, tokenCostSql } from './costs';
import { withOwnUsageSql } from './own-usage';
import type { BuiltQuery } from './params';

/**
 * /trace/usage and /calls/usage: each call's usage with its descendants' (reference
 * usage_utils), per model. The reference sums every call's `summary.usage` down the tree, each
 * read as the call's own; so does weft, with one exception (own-usage.ts): a model whose figures
 * on a call are exactly the sum of its children's is the Weave SDK's roll-up and is not counted
 * again, so SDK traces count each request once and raw writers get the reference's sums.
 */

/** One model's usage in an answer (the reference's LLMAggregatedUsage); costs are null unless asked for. */
export interface ModelUsage {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_total_cost: number | null;
  completion_tokens_total_cost: number | null;
}

export type UsageByModel = Record<string, ModelUsage>;

/** A matched call: its parent, whether it has ended, its own usage per model. */
export interface OwnUsageRow {
  id: string;
  parent_id: string | null;
  running: number;
  /** (model, requests, prompt, completion, total, prompt cost, completion cost). */
  own: [string, number, number, number, number, number, number][];
}

/**
 * The calls `filter`/`query` match (at most `limit`, earliest first, as the reference streams
 * them), each with its own usage per model; with `withCosts`, priced at the price in force at
 * the call's start (an unpriced model costs 0, as the reference reads a missing cost entry).
 */
export function buildOwnUsageRowsQuery(
  req: { project_id: string; filter?: CallFilter; query?: { $expr: Record<string, unknown> } },
  limit: number,
  withCosts: boolean,
): BuiltQuery {
  const plan = new CallsQueryPlan({ project_id: req.project_id, filter: req.filter, query: req.query, sort_by: [] });
  const p = plan.params;
  const pid = plan.projectParam;
  const cols = ['parent_id', 'started_at', 'ended_at', 'usage'];
  const calls = withOwnUsageSql(plan.matchedCallsSql(p, cols), cols, pid);
  const prices = modelPricesSql(pid);
  // u: (model, requests, prompt, completion, total, cache read, cache creation); pr: picked price.
  const price = pickedPriceSql(prices, 'u.1');
  const promptCost = withCosts
    ? `if(mapContains(${prices}, u.1), ${tokenCostSql({ prompt: 'u.3', completion: '0', cacheRead: 'u.6', cacheCreation: 'u.7', promptCost: `${price}.3`, completionCost: '0', cacheReadCost: '0', cacheCreationCost: '0' })}, 0)`
    : '0';
  const completionCost = withCosts ? `if(mapContains(${prices}, u.1), u.4 * ${price}.4, 0)` : '0';
  const sql = `SELECT id, parent_id, ended_at IS NULL AS running,
    arrayMap(u -> (u.1, u.2, u.3, u.4, if(u.5 > 0, u.5, u.3 + u.4), toFloat64(${promptCost}), toFloat64(${completionCost})), usage) AS own
  FROM (${calls})
  ORDER BY started_at, id
  LIMIT ${p.int(limit)}`;
  return { sql, params: p.values };
}

/**
 * Each call's usage plus its descendants' among `rows` (bottom-up from the leaves, so deep
 * traces need no recursion), keyed by call id; a call with no usage maps to `{}`.
 */
export function rollUpUsage(rows: OwnUsageRow[], withCosts: boolean): Record<string, UsageByModel> {
  const out: Record<string, UsageByModel> = {};
  const parentOf = new Map<string, string>();
  const pending = new Map<string, number>();
  for (const r of rows) {
    const usage: UsageByModel = {};
    for (const [model, requests, prompt, completion, total, promptCost, completionCost] of r.own) {
      const u: ModelUsage = {
        requests: Number(requests),
        prompt_tokens: Number(prompt),
        completion_tokens: Number(completion),
        total_tokens: Number(total),
        prompt_tokens_total_cost: withCosts ? Number(promptCost) : null,
        completion_tokens_total_cost: withCosts ? Number(completionCost) : null,
      };
      if (
        u.requests ||
        u.prompt_tokens ||
        u.completion_tokens ||
        u.total_tokens ||
        u.prompt_tokens_total_cost ||
        u.completion_tokens_total_cost
      )
        usage[model] = u;
    }
    out[r.id] = usage;
    pending.set(r.id, 0);
  }
  for (const r of rows) {
    if (r.parent_id && r.parent_id in out) {
      parentOf.set(r.id, r.parent_id);
      pending.set(r.parent_id, pending.get(r.parent_id)! + 1);
    }
  }
  const ready = [...pending].filter(([, n]) => n === 0).map(([id]) => id);
  while (ready.length > 0) {
    const id = ready.pop()!;
    const parent = parentOf.get(id);
    if (parent === undefined) continue;
    addUsage(out[parent]!, out[id]!, withCosts);
    const left = pending.get(parent)! - 1;
    pending.set(parent, left);
    if (left === 0) ready.push(parent);
  }
  return out;
}

function addUsage(target: UsageByModel, source: UsageByModel, withCosts: boolean): void {
  for (const [model, u] of Object.entries(source)) {
    const t = target[model];
    if (!t) {
      target[model] = { ...u };
      continue;
    }
    t.requests += u.requests;
    t.prompt_tokens += u.prompt_tokens;
    t.completion_tokens += u.completion_tokens;
    t.total_tokens += u.total_tokens;
    if (withCosts) {
      t.prompt_tokens_total_cost = (t.prompt_tokens_total_cost ?? 0) + (u.prompt_tokens_total_cost ?? 0);
      t.completion_tokens_total_cost = (t.completion_tokens_total_cost ?? 0) + (u.completion_tokens_total_cost ?? 0);
    }
  }
}
