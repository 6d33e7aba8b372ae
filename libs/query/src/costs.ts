import type { CostCreateReq, RequestOf } from '@weft/api';
import { ApiError, clickHouseToIso, roundFigure, generateId, microsToClickHouse, nowMicros, parseTimestampMicros } from '@weft/core';
import { deleteStatement, type Store } from '@weft/store';
import { compileQuery, type FieldRef, type FieldResolver } from './expr';
import { USAGE_TYPE } from './own-usage';
import { Params, type BuiltQuery } from './params';
import { purgeIds } from './purge-ids';
import { endedCallSummariesSql } from './repositories/calls';

/*
 * The costs' repository: every statement on llm_token_prices (the seeded default prices and the
 * projects' own), the SQL that prices a call's usage with them (the calls' compiler uses it), and
 * /cost/query, /cost/create, /cost/purge and a batch of calls' costs.
 */

/** Columns of llm_token_prices, as fields of /cost/query (filters, sorts, `fields`). */
export const COST_FIELDS: Record<string, FieldRef['kind']> = {
  id: 'string',
  llm_id: 'string',
  provider_id: 'string',
  pricing_level: 'string',
  pricing_level_id: 'string',
  prompt_token_cost: 'number',
  completion_token_cost: 'number',
  prompt_token_cost_unit: 'string',
  completion_token_cost_unit: 'string',
  cache_read_input_token_cost: 'number',
  cache_creation_input_token_cost: 'number',
  effective_date: 'datetime',
  created_by: 'string',
  created_at: 'datetime',
};

/** The fields returned when `fields` is absent: the interface's Cost record. */
export const DEFAULT_COST_FIELDS = [
  'id',
  'llm_id',
  'prompt_token_cost',
  'completion_token_cost',
  'prompt_token_cost_unit',
  'completion_token_cost_unit',
  'effective_date',
  'provider_id',
];

export class CostFieldResolver implements FieldResolver {
  readonly used = new Set<string>();
  resolve(path: string): FieldRef {
    const kind = COST_FIELDS[path];
    if (!kind) throw new ApiError(400, `unknown field '${path}' (cost fields: ${Object.keys(COST_FIELDS).join(', ')})`, { field: path });
    this.used.add(path);
    return { sql: path, kind };
  }
}

/** The /cost/query request, as the contract (libs/api) defines it. */
export type CostQueryReq = RequestOf<'costQuery'>;

/**
 * /cost/query over the project's prices. As the reference (and so the SDK's query_costs), only
 * project-level prices are returned, unless the query itself names `pricing_level` or
 * `pricing_level_id`: then the seeded defaults are reachable too (e.g. `pricing_level = 'default'`).
 * Other projects' prices never are.
 */
export function buildCostQuery(req: CostQueryReq): BuiltQuery & { fields: string[] } {
  const p = new Params();
  const resolver = new CostFieldResolver();
  const fields = req.fields?.length ? req.fields : DEFAULT_COST_FIELDS;
  fields.forEach((f, i) => {
    if (!COST_FIELDS[f]) throw new ApiError(400, `fields[${i}]: unknown cost field '${f}'`, { field: `fields[${i}]` });
  });
  const conds = [
    `pricing_level_id IN (${p.str(req.project_id)}, 'default')`,
    `(pricing_level = 'default') = (pricing_level_id = 'default')`,
  ];
  if (req.query) conds.push(compileQuery(req.query.$expr, resolver, p));
  if (!resolver.used.has('pricing_level') && !resolver.used.has('pricing_level_id')) conds.push(`pricing_level = 'project'`);
  const order = (req.sort_by ?? []).map((s, i) => {
    if (!COST_FIELDS[s.field])
      throw new ApiError(400, `sort_by[${i}].field: unknown cost field '${s.field}'`, { field: `sort_by[${i}].field` });
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  order.push('llm_id ASC', 'effective_date DESC', 'id ASC');
  const select = fields.map((f) => (COST_FIELDS[f] === 'datetime' ? `toString(${f}) AS ${f}` : f)).join(', ');
  let sql = `SELECT ${select} FROM llm_token_prices FINAL WHERE ${conds.join(' AND ')} ORDER BY ${order.join(', ')}`;
  if (req.limit) sql += ` LIMIT ${p.int(req.limit)}`;
  if (req.offset) sql += `${req.limit ? '' : ' LIMIT 18446744073709551615'} OFFSET ${p.int(req.offset)}`;
  return { sql, params: p.values, fields };
}

/** Token counts per (call, model) from summary.usage, each with the price in force (reference §3.7). */
export interface CallUsagePriceRow {
  call_id: string;
  llm_id: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  prompt_token_cost: number;
  completion_token_cost: number;
  cache_read_input_token_cost: number;
  cache_creation_input_token_cost: number;
  prompt_token_cost_unit: string;
  completion_token_cost_unit: string;
  effective_date: string;
  created_at: string;
  provider_id: string;
  pricing_level: string;
  pricing_level_id: string;
  created_by: string;
}

/**
 * Token counts per (call, model) exploded from `summary.usage` of `callsSql`, whose rows carry
 * `id`, `started_at`, `summary_dump` (and the `passThrough` columns, kept as they are).
 */
export function usageRowsSql(callsSql: string, passThrough: string[] = []): string {
  const count = (...keys: string[]) => keys.map((k) => `JSONExtractInt(raw, '${k}')`).join(' + ');
  return `SELECT id AS call_id, started_at, ${passThrough.map((c) => `${c}, `).join('')}kv.1 AS llm_id, kv.2 AS raw,
      JSONExtractInt(raw, 'requests') AS requests,
      ${count('prompt_tokens', 'input_tokens')} AS prompt_tokens,
      ${count('completion_tokens', 'output_tokens')} AS completion_tokens,
      JSONExtractInt(raw, 'total_tokens') AS total_tokens,
      JSONExtractInt(raw, 'cache_read_input_tokens') AS cache_read_input_tokens,
      JSONExtractInt(raw, 'cache_creation_input_tokens') AS cache_creation_input_tokens
    FROM (${callsSql})
    ARRAY JOIN JSONExtractKeysAndValuesRaw(ifNull(summary_dump, '{}'), 'usage') AS kv`;
}

/** The prices a project's calls can use: its own and the defaults, nothing of other projects. */
export function projectPricesSql(pid: string): string {
  return `SELECT * FROM llm_token_prices FINAL
    WHERE pricing_level_id IN (${pid}, 'default') AND (pricing_level = 'default') = (pricing_level_id = 'default')`;
}

/**
 * A price's level, as the price choice ranks it: the project's own (2) before the defaults (3);
 * `col` names a price column (prefixed for a joined price row, bare inside an aggregate).
 */
function priceLevelRankSql(pid: string, col: (name: string) => string): string {
  return `multiIf(${col('pricing_level')} = 'project' AND ${col('pricing_level_id')} = ${pid}, 2, ${col('pricing_level')} = 'default' AND ${col('pricing_level_id')} = 'default', 3, 4)`;
}

/**
 * The one rule that picks a price per (call, model) among prices pr: prices already effective at
 * the call's start (`startedAt`) first, then the project's over the default, then the newest.
 * As the ORDER BY of a window over joined rows `pr`; callTotalCostSql applies the same keys to
 * an array of prices.
 */
export function priceRankOrderSql(pid: string, startedAt = 'u.started_at'): string {
  return `if(${startedAt} >= pr.effective_date, 1, 2), ${priceLevelRankSql(pid, (c) => `pr.${c}`)}, pr.effective_date DESC`;
}

/** Token counts and the prices they are charged at, as SQL expressions (uncached prompt tokens at the prompt price). */
interface PricedTokens {
  prompt: string;
  completion: string;
  cacheRead: string;
  cacheCreation: string;
  promptCost: string;
  completionCost: string;
  cacheReadCost: string;
  cacheCreationCost: string;
}

/** The cost of token counts at a price: linear in each count (the figures include_costs reports per field). */
export function tokenCostSql(t: PricedTokens): string {
  return `(${t.prompt} - ${t.cacheRead} - ${t.cacheCreation}) * ${t.promptCost} + ${t.completion} * ${t.completionCost}
      + ${t.cacheRead} * ${t.cacheReadCost} + ${t.cacheCreation} * ${t.cacheCreationCost}`;
}

/**
 * A call's tokens summed over its models, as the UI's Tokens column: an entry's total_tokens, or
 * its prompt + completion counts when it has none; NULL for a call without usage (sorts last).
 * Over calls_ends' ready-made `usage` (one tuple per model: model, requests, prompt, completion,
 * total, cache read, cache creation; calls_ends.usage), so no summary is parsed per row.
 */
export const callTotalTokensSql = `if(empty(usage), NULL, arraySum(u -> if(u.5 > 0, u.5, u.3 + u.4), usage))`;

/**
 * Each model's prices as (effective_date, level, prompt, completion, cache read, cache creation),
 * in a constant map by model (a scalar subquery, read once per query): a usage entry looks up its
 * own model's few prices instead of filtering the whole price list for every row.
 */
export function modelPricesSql(pid: string): string {
  return `(SELECT mapFromArrays(groupArray(llm_id), groupArray(ps)) FROM (SELECT llm_id, groupArray((effective_date,
      ${priceLevelRankSql(pid, (c) => c)}, prompt_token_cost, completion_token_cost, cache_read_input_token_cost, cache_creation_input_token_cost)) AS ps
    FROM (${projectPricesSql(pid)}) GROUP BY llm_id))`;
}

/** The price `model` gets at `started_at` (a row column) among modelPricesSql's, ranked by priceRankOrderSql's keys; only for a model that has one. */
export function pickedPriceSql(prices: string, model: string): string {
  return `arraySort(pr -> (if(started_at >= pr.1, 1, 2), pr.2, -toUnixTimestamp64Milli(pr.1)), ${prices}[${model}])[1]`;
}

/**
 * A call's cost summed over its priced models, per row, for filters and sorts: the same figures
 * include_costs puts in summary.weave.costs (each model priced with the price
 * priceRankOrderSql would pick), computed in the expression so ORDER BY can use it. The
 * project's prices are one small constant array (a scalar subquery, read once per query).
 * NULL when no model of the call has a price (as the UI's Cost column). `usage`: the array
 * priced (default: the column).
 */
export function callTotalCostSql(pid: string, usage = 'usage'): string {
  const prices = modelPricesSql(pid);
  const priced = `arrayMap(u -> (u, ${pickedPriceSql(prices, 'u.1')}), arrayFilter(u -> mapContains(${prices}, u.1), ${usage}))`;
  // x.1: the usage tuple (.3 prompt, .4 completion, .6 cache read, .7 cache creation); x.2: its price.
  const cost = tokenCostSql({
    prompt: 'x.1.3',
    completion: 'x.1.4',
    cacheRead: 'x.1.6',
    cacheCreation: 'x.1.7',
    promptCost: 'x.2.3',
    completionCost: 'x.2.4',
    cacheReadCost: 'x.2.5',
    cacheCreationCost: 'x.2.6',
  });
  return `if(empty(${priced}), NULL, arraySum(x -> ${cost}, ${priced}))`;
}

/**
 * Explodes `summary.usage` of the given calls into (call, llm_id, counts) and picks one price per
 * pair (priceRankOrderSql). Pairs with no price at all drop out (no cost entry, as the reference).
 */
export function buildCallCostsQuery(projectId: string, callIds: string[]): BuiltQuery {
  const p = new Params();
  const pid = p.str(projectId);
  const ids = p.strArray(callIds);
  const calls = endedCallSummariesSql(pid, ids);
  const sql = `SELECT * EXCEPT (rn) FROM (
  SELECT u.call_id AS call_id, u.llm_id AS llm_id, u.requests AS requests, u.prompt_tokens AS prompt_tokens,
    u.completion_tokens AS completion_tokens, u.total_tokens AS total_tokens,
    u.cache_read_input_tokens AS cache_read_input_tokens, u.cache_creation_input_tokens AS cache_creation_input_tokens,
    pr.prompt_token_cost AS prompt_token_cost, pr.completion_token_cost AS completion_token_cost,
    pr.cache_read_input_token_cost AS cache_read_input_token_cost, pr.cache_creation_input_token_cost AS cache_creation_input_token_cost,
    pr.prompt_token_cost_unit AS prompt_token_cost_unit, pr.completion_token_cost_unit AS completion_token_cost_unit,
    toString(pr.effective_date) AS effective_date, toString(pr.created_at) AS created_at, pr.provider_id AS provider_id,
    pr.pricing_level AS pricing_level, pr.pricing_level_id AS pricing_level_id, pr.created_by AS created_by,
    row_number() OVER (PARTITION BY u.call_id, u.llm_id ORDER BY ${priceRankOrderSql(pid)}) AS rn
  FROM (${usageRowsSql(calls)}) AS u
  INNER JOIN (${projectPricesSql(pid)}) AS pr ON u.llm_id = pr.llm_id
) WHERE rn = 1`;
  return { sql, params: p.values };
}

/** One model's token counts, as a call's `summary.usage` entry holds them. */
export interface UsageEntry {
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/**
 * What usage entries cost now, priced as a stored call's usage is (callTotalCostSql), in one row:
 * `cost` (NULL when no entry's model has a price) and `unpriced` (entries without one).
 */
export function buildUsageCostQuery(projectId: string, entries: UsageEntry[]): BuiltQuery {
  const p = new Params();
  const pid = p.str(projectId);
  const tuples = entries.map(
    (e) =>
      `(${p.str(e.model)}, 1, ${[
        e.prompt_tokens,
        e.completion_tokens,
        e.total_tokens,
        e.cache_read_input_tokens ?? 0,
        e.cache_creation_input_tokens ?? 0,
      ]
        .map((n) => p.add(Math.max(0, Math.round(n || 0)), 'Int64'))
        .join(', ')})`,
  );
  const prices = modelPricesSql(pid);
  const sql = `SELECT ${callTotalCostSql(pid)} AS cost, length(arrayFilter(u -> NOT mapContains(${prices}, u.1), usage)) AS unpriced
    FROM (SELECT now64(6) AS started_at, CAST([${tuples.join(', ')}], '${USAGE_TYPE}') AS usage)`;
  return { sql, params: p.values };
}

/**
 * What usage entries cost now (USD), priced as a stored call's usage is (buildUsageCostQuery); 0
 * for no entries (no statement) or when none of their models has a price.
 */
export async function usageCost(store: Store, projectId: string, entries: UsageEntry[], name = 'costs.usageCost'): Promise<number> {
  if (entries.length === 0) return 0;
  const q = buildUsageCostQuery(projectId, entries);
  const row = await store.row<{ cost: number | null }>(q.sql, q.params, { name });
  return Number(row?.cost ?? 0);
}

/** Whether a model has a price in the project now (a token of each kind priced, as usageCost prices them). */
export async function modelPriced(store: Store, projectId: string, model: string, name = 'costs.modelPriced'): Promise<boolean> {
  const q = buildUsageCostQuery(projectId, [{ model, prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }]);
  const row = await store.row<{ unpriced: number | string }>(q.sql, q.params, { name });
  return !(Number(row?.unpriced ?? 1) > 0);
}

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
      prompt_tokens_total_cost: roundFigure(uncachedPrompt * r.prompt_token_cost),
      completion_tokens_total_cost: roundFigure(r.completion_tokens * r.completion_token_cost),
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
            cache_read_input_tokens_total_cost: roundFigure(r.cache_read_input_tokens * r.cache_read_input_token_cost),
            cache_creation_input_tokens_total_cost: roundFigure(r.cache_creation_input_tokens * r.cache_creation_input_token_cost),
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
