import { post } from './api';
import type { Call } from './types';

/** A trace root's usage with its descendants', summed over models. */
export interface RolledUsage {
  tokens: number;
  /** Null when no model of the trace has a price (or it cost nothing). */
  cost: number | null;
}

/**
 * Trace roots that carry no usage of their own: OTLP roots, whose spans hold only their own
 * usage (the Weave SDK rolls its children's up into a root's summary). Their Tokens and Cost
 * cells show the whole trace's, asked once per page of the calls table (`/calls/usage`: each
 * LLM request counted once).
 */
export function rootsWithoutUsage(rows: Call[]): Call[] {
  return rows.filter((c) => !c.parent_id && Object.keys((c.summary?.usage as object | undefined) ?? {}).length === 0);
}

type ModelUsage = { total_tokens: number; prompt_tokens_total_cost: number | null; completion_tokens_total_cost: number | null };

/** Per root id, its trace's usage (roots whose trace used nothing are left out). */
export async function rolledUpUsage(projectId: string, roots: Call[], signal?: AbortSignal): Promise<Map<string, RolledUsage>> {
  if (roots.length === 0) return new Map();
  const { call_usage } = await post<{ call_usage: Record<string, Record<string, ModelUsage>> }>(
    '/calls/usage',
    { project_id: projectId, call_ids: roots.map((c) => c.id), include_costs: true },
    signal,
  );
  const out = new Map<string, RolledUsage>();
  for (const [id, byModel] of Object.entries(call_usage)) {
    const models = Object.values(byModel);
    const tokens = models.reduce((s, m) => s + m.total_tokens, 0);
    if (tokens === 0) continue;
    // An unpriced model's costs come back null or 0: a trace whose tokens cost nothing has no price.
    const cost = models.reduce((s, m) => s + (m.prompt_tokens_total_cost ?? 0) + (m.completion_tokens_total_cost ?? 0), 0);
    out.set(id, { tokens, cost: cost > 0 ? cost : null });
  }
  return out;
}
