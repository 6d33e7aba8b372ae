import { badRequest } from '@weft/core';
import { resolveRefs } from '@weft/objects';
import { modelPriced, usageCost, type UsageEntry } from '@weft/query';
import type { Store } from '@weft/store';
import type { Run } from './evaluation-run';
import type { Scorer, StructuredModel } from './scorers';
import type { UpstreamRegistry } from './upstreams';

/**
 * A run's cost cap (`max_cost_usd`): what its model and judge requests cost, priced by the
 * costs' repository (libs/query costs.ts) as a stored call's usage is, and the check at the
 * request that every model a capped run asks has a price.
 */
export class EvaluationBudget {
  constructor(
    private readonly store: Store,
    private readonly upstreams: UpstreamRegistry,
  ) {}

  /** Adds a model request's cost to the run's spend (only a capped run prices its requests). */
  async spend(run: Run, model: string | undefined, usage: unknown): Promise<void> {
    if (run.maxCostUsd === null || !model) return;
    const cost = await this.costOf(run.key.project_id, usageEntries({ [model]: usage }));
    run.spentUsd += cost;
  }

  costOf(projectId: string, entries: UsageEntry[]): Promise<number> {
    return usageCost(this.store, projectId, entries, 'evaluations.cost');
  }

  /** A capped run must be priceable: every model it asks (the model's, the LLM judges') needs a price. */
  async checkPriced(projectId: string, model: StructuredModel, scorers: Scorer[]): Promise<void> {
    const models = [String(model.llm_model_id)];
    for (const s of scorers) {
      if (s.val._class_name !== 'LLMAsAJudgeScorer') continue;
      const [m] = await resolveRefs(this.store, [String(s.val.model)], JSON.parse);
      const id = (m?.status === 'ok' ? (m.value as StructuredModel | null) : null)?.llm_model_id;
      if (typeof id === 'string') models.push(id);
    }
    for (const id of models) {
      const bare = this.upstreams.find(id) ? id : id.replace(/^[^/]+\//, '');
      if (!(await modelPriced(this.store, projectId, bare, 'evaluations.priced')))
        throw badRequest(
          `max_cost_usd: model ${bare} has no price, so the run's cost cannot be counted (add one with /cost/create, or leave max_cost_usd out)`,
          'max_cost_usd',
        );
    }
  }
}

/** A `summary.usage` (by model) as priced entries. */
export function usageEntries(usage: unknown): UsageEntry[] {
  if (typeof usage !== 'object' || usage === null) return [];
  return Object.entries(usage as Record<string, Record<string, unknown> | null>).flatMap(([model, u]) => {
    if (!u || typeof u !== 'object') return [];
    const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : 0);
    const prompt = n('prompt_tokens') || n('input_tokens');
    const completion = n('completion_tokens') || n('output_tokens');
    return [{ model, prompt_tokens: prompt, completion_tokens: completion, total_tokens: n('total_tokens') || prompt + completion }];
  });
}
