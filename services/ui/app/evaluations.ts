import { post } from './api';
import { describeRunsWith, type EvalRun } from './eval-compare';
import type { Call } from './types';

// The comparison's model is DOM-free (eval-compare.ts: the query role's export computes with it too).
export {
  direction,
  evaluateOp,
  evaluateOps,
  exampleKey,
  exampleRows,
  isRegression,
  metricLeaves,
  outputRefs,
  predictAndScoreOp,
  resolveRefs,
  stableJson,
  summaryMetrics,
  valueAt,
  verdict,
  withResolvedOutputs,
  type EvalRun,
  type ExampleResult,
  type ExampleRow,
  type Metric,
} from './eval-compare';

/** Reads refs through /refs/read_batch (1,000 a request), returning ref → value. */
export async function readRefs(refs: string[], signal?: AbortSignal): Promise<Map<string, unknown>> {
  const unique = [...new Set(refs)];
  const out = new Map<string, unknown>();
  for (let i = 0; i < unique.length; i += 1000) {
    const batch = unique.slice(i, i + 1000);
    const { vals } = await post<{ vals: unknown[] }>('/refs/read_batch', { refs: batch }, signal);
    batch.forEach((r, j) => out.set(r, vals[j]));
  }
  return out;
}

/** Each root call with its evaluation's name, dataset and scorers and its model's name. */
export function describeRuns(calls: Call[], signal?: AbortSignal): Promise<EvalRun[]> {
  return describeRunsWith(calls, (refs) => readRefs(refs, signal));
}
