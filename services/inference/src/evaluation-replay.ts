import type { RouteRequestOf } from '@weft/api';
import { badRequest, type Caller } from '@weft/core';
import { callRef, createObject, createTable, parseRef } from '@weft/objects';
import { CallsQueryPlan, matchedCallsOldestFirst } from '@weft/query';
import type { Store } from '@weft/store';
import type { EvaluationObjects } from './evaluation-objects';
import { isDict } from './evaluation-run';
import { readScorers } from './scorers';

/**
 * Batch replay: the calls a filter matches (oldest first) become a Dataset — each row the
 * call's inputs, its `original_output` and its `source_call` ref — and an Evaluation of that
 * dataset with the scorers, published as the SDK publishes them, then run as evaluate_model
 * runs one (`evaluateModel`): an ordinary evaluation the UI lists and compares.
 */
export async function replayCalls(
  deps: { store: Store; objects: EvaluationObjects; caughtUp?: () => Promise<void> },
  req: RouteRequestOf<'evaluationsReplay'>,
  caller: Caller,
  evaluateModel: (req: RouteRequestOf<'evaluationsEvaluateModel'>, caller: Caller) => Promise<{ call_id: string }>,
): Promise<{ call_id: string; dataset_ref: string; evaluation_ref: string }> {
  await deps.objects.readModel(req.project_id, req.model_ref);
  for (const r of req.scorer_refs)
    if (parseRef(r)?.projectId !== req.project_id)
      throw badRequest(`scorer_refs: not an object of project ${req.project_id}: ${JSON.stringify(r)}`, 'scorer_refs');
  const scorers = await readScorers(deps.store, req.scorer_refs);
  if (scorers.length !== req.scorer_refs.length) throw badRequest('scorer_refs: a scorer ref names no object', 'scorer_refs');
  await deps.caughtUp?.();
  const plan = new CallsQueryPlan({
    project_id: req.project_id,
    filter: req.filter,
    query: req.query,
    sort_by: [{ field: 'started_at', direction: 'asc' }],
  });
  const calls = await matchedCallsOldestFirst<{ id: string; inputs_dump: string | null; output_dump: string | null }>(
    deps.store,
    plan,
    ['inputs_dump', 'output_dump', 'started_at'],
    { limit: req.limit },
    'evaluations.replay_calls',
  );
  if (calls.length === 0) throw badRequest('filter: no call matches: nothing to replay', 'filter');
  const rows = calls.map((c) => {
    const inputs = c.inputs_dump ? (JSON.parse(c.inputs_dump) as unknown) : {};
    return {
      ...(isDict(inputs) ? inputs : { inputs }),
      original_output: c.output_dump ? (JSON.parse(c.output_dump) as unknown) : null,
      source_call: callRef(req.project_id, c.id),
    };
  });
  const table = await createTable(deps.store, req.project_id, rows);
  const name = req.name ?? `replay-${table.digest.slice(0, 12)}`;
  const objectVal = (cls: string, members: Record<string, unknown>) => ({
    _type: cls,
    name,
    description: null,
    ...members,
    _class_name: cls,
    _bases: ['Object', 'BaseModel'],
  });
  const dataset = await createObject(
    deps.store,
    {
      project_id: req.project_id,
      object_id: name,
      val: objectVal('Dataset', { rows: `weave:///${req.project_id}/table/${table.digest}` }),
    },
    caller.userId,
  );
  const datasetRef = `weave:///${req.project_id}/object/${name}:${dataset.digest}`;
  const evaluation = await createObject(
    deps.store,
    {
      project_id: req.project_id,
      object_id: `${name}-evaluation`,
      val: objectVal('Evaluation', {
        dataset: datasetRef,
        scorers: req.scorer_refs,
        preprocess_model_input: null,
        trials: 1,
        metadata: null,
        evaluation_name: name,
      }),
    },
    caller.userId,
  );
  const evaluationRef = `weave:///${req.project_id}/object/${name}-evaluation:${evaluation.digest}`;
  const { call_id } = await evaluateModel(
    { project_id: req.project_id, evaluation_ref: evaluationRef, model_ref: req.model_ref, max_cost_usd: req.max_cost_usd },
    caller,
  );
  return { call_id, dataset_ref: datasetRef, evaluation_ref: evaluationRef };
}
