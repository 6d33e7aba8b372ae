import type { EvaluationStatus } from '@weft/api';
import { callProgress, callStartAndEnded, traceCalls, type TraceCallRow } from '@weft/query';
import type { Store } from '@weft/store';
import { usageEntries, type EvaluationBudget } from './evaluation-budget';
import type { RunKey } from './evaluation-registry';
import {
  exceptionMessage,
  PREDICT_AND_SCORE,
  type Example,
  type RootAttributes,
  type RowResult,
  type Run,
  type RunState,
  type UnfinishedRow,
} from './evaluation-run';
import type { ScoreResult } from './scorers';

/**
 * A run's state read back from its calls, so any inference process answers it: its status (from
 * the root call and its finished rows), its root (what taking the run up needs), and, for a run
 * taken up, what its stored calls say it has done.
 */
export class EvaluationProgress {
  constructor(
    private readonly store: Store,
    private readonly budget: EvaluationBudget,
    private readonly caughtUp?: () => Promise<void>,
  ) {}

  async status(req: { project_id: string; call_id: string }): Promise<{ status: EvaluationStatus }> {
    // The run's calls may be acknowledged but not stored yet (the all-in-one's ingest log).
    await this.caughtUp?.();
    const row = await callProgress(this.store, req.project_id, req.call_id, PREDICT_AND_SCORE);
    const attrs = row?.attributes_dump ? (JSON.parse(row.attributes_dump) as RootAttributes) : null;
    // Only the root of a server-side run has a status; any other call is not one.
    // (its rows carry the worker's eval meta too; only the root carries the run's row count).
    if (!row || attrs?._weave_eval_meta?.evaluate_model_worker !== true || typeof attrs.weft?.evaluate_model?.total_rows !== 'number')
      return { status: { code: 'not_found' } };
    if (!row.ended) {
      const total = Number(attrs.weft?.evaluate_model?.total_rows ?? 0);
      return { status: { code: 'running', completed_rows: Math.min(Number(row.completed), total), total_rows: total } };
    }
    if (row.exception) return { status: { code: 'failed', error: exceptionMessage(row.exception) } };
    const output = row.output_dump ? (JSON.parse(row.output_dump) as unknown) : {};
    return {
      status: { code: 'complete', output: typeof output === 'object' && output !== null ? (output as Record<string, unknown>) : {} },
    };
  }

  /** The root call of a run, as resume needs it; null when there is none. */
  async readRoot(key: RunKey) {
    const row = await callStartAndEnded(this.store, key.project_id, key.call_id);
    if (!row) return null;
    const inputs = (row.inputs_dump ? JSON.parse(row.inputs_dump) : {}) as { self?: unknown; model?: unknown };
    const attrs = (row.attributes_dump ? JSON.parse(row.attributes_dump) : {}) as RootAttributes;
    const cap = attrs.weft?.evaluate_model?.max_cost_usd;
    return {
      traceId: row.trace_id,
      ended: Number(row.ended) > 0,
      evaluationRef: String(inputs.self ?? ''),
      modelRef: String(inputs.model ?? ''),
      userId: row.svc_user_id ?? 'evaluate_model',
      maxCostUsd: typeof cap === 'number' ? cap : null,
    };
  }

  /** What the run's stored calls say it has done: finished rows, interrupted rows and what they kept, the examples not started; the cost so far. */
  async storedProgress(run: Run, traceId: string): Promise<RunState> {
    const calls = await traceCalls(this.store, run.key.project_id, traceId, 'evaluations.progress');
    const json = (s: string | null) => (s ? (JSON.parse(s) as unknown) : null);
    const inputsOf = (c: TraceCallRow) => (json(c.inputs_dump) ?? {}) as Record<string, unknown>;
    const byRef = new Map<string, Example>(run.examples.map((e) => [e.ref, e]));
    const rows = calls.filter((c) => c.parent_id === run.key.call_id && (c.op_name ?? '').includes(PREDICT_AND_SCORE));
    const results: RowResult[] = [];
    const unfinished: UnfinishedRow[] = [];
    const startedPerRef = new Map<string, number>();
    for (const pas of rows) {
      const ref = String(inputsOf(pas).example ?? '');
      const example = byRef.get(ref);
      if (!example) continue;
      startedPerRef.set(ref, (startedPerRef.get(ref) ?? 0) + 1);
      if (pas.ended) {
        results.push(json(pas.output_dump) as RowResult);
        continue;
      }
      const children = calls.filter((c) => c.parent_id === pas.id && c.ended);
      const predictCall = children.find((c) => inputsOf(c).self === run.modelRef && !c.exception);
      const scores = new Map<string, ScoreResult>();
      for (const c of children) {
        const self = inputsOf(c).self;
        if (typeof self === 'string' && run.scorers.some((s) => s.ref === self))
          scores.set(self, c.exception ? { error: exceptionMessage(c.exception) } : { output: json(c.output_dump) });
      }
      unfinished.push({ example, pasId: pas.id, predict: predictCall ? { output: json(predictCall.output_dump) } : null, scores });
    }
    // Each example runs as often as the dataset lists it (trials): those not started yet.
    const remaining: Example[] = [];
    const seen = new Map<string, number>();
    for (const e of run.examples) {
      const n = (seen.get(e.ref) ?? 0) + 1;
      seen.set(e.ref, n);
      if (n > (startedPerRef.get(e.ref) ?? 0)) remaining.push(e);
    }
    const entries = calls.flatMap((c) => usageEntries((json(c.summary_dump) as { usage?: unknown } | null)?.usage));
    run.spentUsd = await this.budget.costOf(run.key.project_id, entries);
    return { results, unfinished, remaining };
  }
}
