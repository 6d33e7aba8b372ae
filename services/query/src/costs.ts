import type { CostCreateReq } from '@weft/api';
import { clickHouseToIso, generateId, microsToClickHouse, nowMicros, parseTimestampMicros } from '@weft/core';
import { Params, buildCallCostsQuery, buildCostQuery, purgeIds, type CallUsagePriceRow, type CostQueryReq } from '@weft/query';
import { deleteStatement, type Store } from '@weft/store';

/**
 * Costs per model for a batch of calls (reference §3.7), keyed by call id then llm id: the token
 * counts of summary.usage priced with the price in force at the call's start.
 */
export async function callCosts(store: Store, projectId: string, callIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  if (callIds.length === 0) return out;
  const { sql, params } = buildCallCostsQuery(projectId, callIds);
  for (const r of await store.rows<CallUsagePriceRow>(sql, params, { name: 'costs.callCosts' })) {
    const costs = out.get(r.call_id) ?? {};
    const uncachedPrompt = r.prompt_tokens - r.cache_read_input_tokens - r.cache_creation_input_tokens;
    // The reference's entry has no cache fields: they are added only for a call that counted cached tokens.
    const cached = Number(r.cache_read_input_tokens) !== 0 || Number(r.cache_creation_input_tokens) !== 0;
    costs[r.llm_id] = {
      requests: r.requests,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      total_tokens: r.total_tokens,
      prompt_tokens_total_cost: uncachedPrompt * r.prompt_token_cost,
      completion_tokens_total_cost: r.completion_tokens * r.completion_token_cost,
      prompt_token_cost: r.prompt_token_cost,
      completion_token_cost: r.completion_token_cost,
      prompt_token_cost_unit: r.prompt_token_cost_unit,
      completion_token_cost_unit: r.completion_token_cost_unit,
      effective_date: r.effective_date,
      created_at: r.created_at,
      provider_id: r.provider_id,
      pricing_level: r.pricing_level,
      pricing_level_id: r.pricing_level_id,
      created_by: r.created_by,
      ...(cached
        ? {
            cache_read_input_tokens: r.cache_read_input_tokens,
            cache_creation_input_tokens: r.cache_creation_input_tokens,
            cache_read_input_tokens_total_cost: r.cache_read_input_tokens * r.cache_read_input_token_cost,
            cache_creation_input_tokens_total_cost: r.cache_creation_input_tokens * r.cache_creation_input_token_cost,
            cache_read_input_token_cost: r.cache_read_input_token_cost,
            cache_creation_input_token_cost: r.cache_creation_input_token_cost,
          }
        : {}),
    };
    out.set(r.call_id, costs);
  }
  return out;
}

/** /cost/query: `{results}` with only the requested fields; times as ISO 8601. */
export async function queryCosts(store: Store, req: CostQueryReq): Promise<{ results: Record<string, unknown>[] }> {
  const { sql, params, fields } = buildCostQuery(req);
  const rows = await store.rows<Record<string, unknown>>(sql, params, { name: 'costs.queryCosts' });
  for (const r of rows) {
    for (const f of ['effective_date', 'created_at'])
      if (fields.includes(f) && typeof r[f] === 'string') r[f] = clickHouseToIso(r[f] as string);
  }
  return { results: rows };
}

/**
 * POST /cost/create (the reference's SDK endpoint, outside the 20 of the interface): adds
 * project-level prices. Response `{ids: [[cost_id, llm_id], ...]}` as the reference's CH server.
 */

export async function createCosts(store: Store, req: CostCreateReq, userId: string): Promise<{ ids: [string, string][] }> {
  const now = microsToClickHouse(nowMicros());
  const rows = Object.entries(req.costs).map(([llmId, c]) => ({
    id: generateId(),
    pricing_level: 'project',
    pricing_level_id: req.project_id,
    provider_id: c.provider_id ?? 'default',
    llm_id: llmId,
    effective_date: c.effective_date ? microsToClickHouse(parseTimestampMicros(c.effective_date)!) : now,
    prompt_token_cost: c.prompt_token_cost,
    prompt_token_cost_unit: c.prompt_token_cost_unit,
    completion_token_cost: c.completion_token_cost,
    completion_token_cost_unit: c.completion_token_cost_unit,
    cache_read_input_token_cost: c.cache_read_input_token_cost,
    cache_creation_input_token_cost: c.cache_creation_input_token_cost,
    created_by: userId,
    created_at: now,
  }));
  if (rows.length) await store.insertRows('llm_token_prices', rows, { name: 'costs.createCosts' });
  return { ids: rows.map((r) => [r.id, r.llm_id]) };
}

/**
 * POST /cost/purge (the SDK's `purge_costs`): removes the project's own prices named by id
 * (the query may name nothing else, as the reference); the default prices are never touched.
 */
export async function purgeCosts(store: Store, projectId: string, expr: Record<string, unknown>): Promise<Record<string, never>> {
  const ids = purgeIds(expr, 'Can only purge costs by specifying one or more cost ids');
  if (ids.length === 0) return {};
  const p = new Params();
  const where = `pricing_level = 'project' AND pricing_level_id = ${p.str(projectId)} AND id IN ${p.strArray(ids)}`;
  const [{ n } = { n: 0 }] = await store.rows<{ n: number }>(`SELECT count() AS n FROM llm_token_prices WHERE ${where}`, p.values, {
    name: 'costs.purgeCosts',
  });
  // A DELETE is a mutation: issued only when a price matches.
  if (Number(n) > 0) await store.command(deleteStatement('llm_token_prices', where, store.cluster), p.values, { name: 'costs.purgeCosts' });
  return {};
}
